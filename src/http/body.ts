// Reads a request body as a JSON object: at most 64 KiB (413, sent once the rest of the body,
// up to 1 MiB more, has been read and dropped), content type application/json
// (415), valid UTF-8 (400), valid JSON (400), an object at the top (400), nested at most 32
// levels (400), no field named __proto__, constructor or prototype (400), no string or field
// name holding U+0000 or an unpaired surrogate (400). The raw bytes are kept for idempotency, and the literal text of each
// top-level number stays available (`numberText`) for checks that need the digits as written.

import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import { HttpError } from './errors.ts';
import { bodyProblem, isStorableText, MAX_BODY_DEPTH, topLevelNumberTexts } from './json-source.ts';

export const MAX_BODY_BYTES = 64 * 1024;
/**
 * How much of an oversized body is still read, and dropped, past the limit before its 413 is
 * sent. Answering while the client is still sending would make the kernel reset the connection
 * under it (unread bytes at close), so a proxy such as nginx reports a failed upstream (502) and
 * may take the instance out. Past this bound the client is not worth waiting for: the 413 goes
 * out at once and the connection is destroyed with it.
 */
export const DISCARD_PAST_LIMIT_BYTES = 1024 * 1024;

const tooLarge = () =>
  new HttpError(413, `The request body is larger than ${MAX_BODY_BYTES / 1024} KiB.`, { headers: { Connection: 'close' } });

export async function readRawBody(req: IncomingMessage): Promise<Buffer> {
  const contentType = req.headers['content-type'];
  const declaredLength = Number(req.headers['content-length'] ?? 0);
  const hasBody = declaredLength > 0 || req.headers['transfer-encoding'] !== undefined;
  if (hasBody && !isJsonContentType(contentType)) {
    throw new HttpError(415, 'The request body must be JSON, sent with "Content-Type: application/json".');
  }
  if (declaredLength > MAX_BODY_BYTES + DISCARD_PAST_LIMIT_BYTES) throw tooLarge();
  let body: Buffer;
  try {
    body = await gather(req);
  } catch (error) {
    throw cutShort(error);
  }
  if (body.length > 0 && !isJsonContentType(contentType)) {
    throw new HttpError(415, 'The request body must be JSON, sent with "Content-Type: application/json".');
  }
  return body;
}

/**
 * The client went away (or its socket was destroyed at a deadline) before its body arrived:
 * nobody is left to answer, so this is no server fault to log, only a line in the access log.
 */
function cutShort(error: unknown): unknown {
  if (error instanceof HttpError) return error;
  const code = (error as NodeJS.ErrnoException | null)?.code;
  const message = (error as Error | null)?.message;
  if (code === 'ERR_STREAM_PREMATURE_CLOSE' || code === 'ECONNRESET' || message === 'aborted') {
    return new HttpError(400, 'The connection closed before the request body arrived whole.');
  }
  return error;
}

/**
 * The body, gathered from events (an async iterator cost ~3% of a listing create, profiled).
 * Bytes are counted as they come, whatever the framing: past MAX_BODY_BYTES they are dropped,
 * and the 413 is thrown once the body has ended, or at once past DISCARD_PAST_LIMIT_BYTES more.
 */
function gather(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const onData = (chunk: Buffer): void => {
      received += chunk.length;
      if (received <= MAX_BODY_BYTES) chunks.push(chunk);
      else if (received > MAX_BODY_BYTES + DISCARD_PAST_LIMIT_BYTES) settle(tooLarge());
      else chunks.length = 0; // too large already: read on, keep nothing
    };
    const settle = (error: Error | null): void => {
      req.off('data', onData).off('end', onEnd).off('error', settle).off('close', onClose);
      if (error !== null) reject(error);
      else if (received > MAX_BODY_BYTES) reject(tooLarge());
      else resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received));
    };
    const onEnd = (): void => settle(null);
    // Closed before its end: the client went away mid-body, as an async iterator reports it.
    const onClose = (): void => settle(Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }));
    req.on('data', onData).on('end', onEnd).on('error', settle).on('close', onClose);
  });
}

/** The literal number texts of each parsed body, kept beside it rather than inside it. */
const numberTextsOf = new WeakMap<object, Map<string, string>>();

export function parseJsonObject(raw: Buffer): Record<string, unknown> {
  if (raw.length === 0) throw new HttpError(400, 'The request body is empty; send a JSON object.');
  // Decoding would turn each bad sequence into U+FFFD and store the text altered: refused instead.
  if (!isUtf8(raw)) throw new HttpError(400, 'The request body is not valid UTF-8.');
  const text = raw.toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new HttpError(400, 'The request body is not valid JSON.');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new HttpError(400, 'The request body must be a JSON object.');
  }
  // JSON.parse makes "__proto__" an own key, but the first plain-object assignment of it would
  // set a prototype (and silently vanish): refused by name, wherever it sits.
  const problem = bodyProblem(value);
  if (problem?.kind === 'too-deep') throw new HttpError(400, `The request body nests arrays or objects deeper than ${MAX_BODY_DEPTH} levels.`);
  if (problem?.kind === 'forbidden-key') {
    throw new HttpError(400, `The request body must not hold a field named "${problem.key}".`, { details: { [problem.key]: 'is not an allowed field name' } });
  }
  if (problem?.kind === 'bad-text') {
    // The field is named when its own name is fine (a bad name is not echoed back).
    const named = problem.field !== '' && isStorableText(problem.field);
    throw new HttpError(400, 'The request body must not hold U+0000 or an unpaired surrogate (\\ud800-\\udfff alone) in any string or field name.', {
      ...(named ? { details: { [problem.field]: 'holds U+0000 or an unpaired surrogate' } } : {}),
    });
  }
  numberTextsOf.set(value, topLevelNumberTexts(text));
  return value as Record<string, unknown>;
}

/** The number literal a top-level field had in the body's text (e.g. '1.000000001'), if any. */
export function numberText(body: object, field: string): string | undefined {
  return numberTextsOf.get(body)?.get(field);
}

export function isJsonContentType(value: string | undefined): boolean {
  if (!value) return false;
  const mediaType = value.split(';', 1)[0]!.trim().toLowerCase();
  return mediaType === 'application/json' || (mediaType.startsWith('application/') && mediaType.endsWith('+json'));
}
