// Writing answers. Every answer is JSON (or empty, for 204/304); every error has the shape
// { error, details?, hint?, required?, request_id }. Nothing internal ever reaches a client.

import type { ServerResponse } from 'node:http';
import { clientHasEtag, encodedEtag, etagOf } from './conditional.ts';
import type { BaseContext } from './context.ts';
import { HttpError } from '../domain/errors.ts';
import type { Headers, Reply } from './route.ts';

// Headers are declared with the route types (route.ts), which the context uses too.
export type { Headers };

const JSON_TYPE = 'application/json; charset=utf-8';

/** For an answer holding a secret (a new key, a new webhook's secret): no cache may keep it. */
export const SECRET_ANSWER_HEADERS: Readonly<Record<string, string>> = { 'Cache-Control': 'no-store' };

/** Compressed answers: the compression module's (src/modules/compression/); without it every answer is sent plain. */
export interface AnswerCompression {
  /**
   * The coding to send `bytes` in for a request with this Accept-Encoding, or null for the
   * plain bytes; an answer that could be compressed gets `Vary: Accept-Encoding` in `headers`.
   */
  encodingFor(acceptEncoding: string | undefined, bytes: Buffer, headers: Headers): string | null;
  /** `bytes` in `encoding`: at once, or a promise when compressed off the main thread (its pool time told to `onPoolWork`). */
  compressed(bytes: Buffer, encoding: string, onPoolWork: ((ms: number) => void) | null): Buffer | Promise<Buffer>;
}

/** Adds `token` to a Vary header value, once. */
export function addVary(current: string | number | undefined, token: string): string {
  if (current === undefined || current === '') return token;
  const tokens = String(current).split(',').map((part) => part.trim().toLowerCase());
  return tokens.includes(token.toLowerCase()) ? String(current) : `${current}, ${token}`;
}

/** Writes a complete response. `body` is sent as-is; pass null for no body. */
export function sendBytes(res: ServerResponse, status: number, body: Buffer | string | null, headers: Headers = {}): void {
  if (body === null) {
    res.writeHead(status, headers);
    res.end();
    return;
  }
  headers['Content-Type'] ??= JSON_TYPE;
  headers['Content-Length'] = typeof body === 'string' ? Buffer.byteLength(body) : body.length;
  res.writeHead(status, headers);
  res.end(body);
}

/**
 * Sends a handler's reply with the request's headers. A GET (or HEAD) 200 carries an ETag and
 * becomes an empty 304 when the client already has it; with the compression module an answer
 * of 1 KiB or more is sent br- or gzip-encoded when the client accepts it, with a tag of its own
 * per encoding. HEAD gets the same headers as GET and Node leaves the body out. Returns the
 * status sent, or its promise when a large answer is being compressed off the main thread; the
 * time that takes in the thread pool is told to `charge` (its key's CPU budget), when there is one.
 */
export function sendReply(
  context: BaseContext,
  reply: Reply,
  charge: ((context: BaseContext, ms: number) => void) | null = null,
  compression: AnswerCompression | null = null,
): number | Promise<number> {
  const headers = context.responseHeaders;
  if (reply.headers) Object.assign(headers, reply.headers);
  // A response that stays open writes itself; it is counted once it ends.
  if (reply.stream !== undefined) return reply.stream(context.res, headers);
  let bytes = reply.bytes ?? (reply.body === undefined ? null : Buffer.from(JSON.stringify(reply.body)));
  if (bytes === null) {
    sendBytes(context.res, reply.status, null, headers);
    return reply.status;
  }
  const encoding = compression === null ? null : compression.encodingFor(context.req.headers['accept-encoding'], bytes, headers);
  if ((context.method === 'GET' || context.method === 'HEAD') && reply.status === 200) {
    const identityEtag = reply.etag ?? etagOf(bytes);
    const etag = encoding === null ? identityEtag : encodedEtag(identityEtag, encoding);
    headers.ETag = etag;
    if (clientHasEtag(context.req.headers['if-none-match'], etag)) {
      delete headers['Content-Type'];
      sendBytes(context.res, 304, null, headers);
      return 304;
    }
  }
  if (encoding !== null) {
    const encoded = compression!.compressed(bytes, encoding, charge && ((ms) => charge(context, ms)));
    headers['Content-Encoding'] = encoding;
    if (encoded instanceof Promise) {
      return encoded.then((ready) => {
        sendBytes(context.res, reply.status, ready, headers);
        return reply.status;
      });
    }
    bytes = encoded;
  }
  sendBytes(context.res, reply.status, bytes, headers);
  return reply.status;
}

export function sendJson(res: ServerResponse, status: number, value: unknown, headers: Headers = {}): void {
  sendBytes(res, status, JSON.stringify(value), headers);
}

/** The JSON body and headers for any thrown value: HttpErrors as they say, anything else as a bare 500. */
export function errorResponse(error: unknown, requestId: string): { status: number; body: Record<string, unknown>; headers: Headers } {
  if (error instanceof HttpError) {
    const { details, hint, required, headers } = error.extras;
    const body: Record<string, unknown> = { error: error.message };
    if (details) body.details = details;
    if (hint) body.hint = hint;
    if (required) body.required = required;
    body.request_id = requestId;
    return { status: error.status, body, headers: { ...headers } };
  }
  return {
    status: 500,
    body: { error: 'Internal server error. Quote the request id if you report it.', request_id: requestId },
    headers: {},
  };
}
