// What every request's context holds, whichever surface it came to: the request's facts (id,
// method, path, raw query), its body and parsed query, the headers every answer carries, and
// what the pipeline's steps learn on the way (the route's label and parameters) so that the
// request observer (src/pipeline/request-observer.ts) finds them when the request is counted.
// Each surface has its own context class
// on this base, with its own typed `commit` (key-context.ts, portal-context.ts,
// open-portal-context.ts, keyless-context.ts); the gate of each area (src/pipeline/) builds its
// one. Handlers see them through the narrower types of route.ts (KeyContext, PortalContext…).

import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseJsonObject, readRawBody } from './body.ts';
import type { Headers } from './route.ts';

export abstract class BaseContext {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly method: string;
  readonly path: string;
  /** The raw query string, without the "?" ("" when there is none). */
  readonly search: string;
  readonly requestId: string;
  /** Headers every answer to this request carries, whatever it is (request id, rate-limit headers). */
  readonly responseHeaders: Headers;

  // Learned on the way, in the order of the pipeline's steps:
  /** The route step: "METHOD /pattern" of the matched route, for analytics and the access log. */
  routeLabel: string | null = null;
  /** The route step: the path's parameters, e.g. { id: 'lst_…' }. */
  params: Readonly<Record<string, string>> = NO_PARAMS;

  private parsedQuery: URLSearchParams | null = null;
  private raw: Promise<Buffer> | null = null;

  constructor(req: IncomingMessage, res: ServerResponse) {
    this.req = req;
    this.res = res;
    this.requestId = randomUUID();
    this.method = req.method ?? 'GET';
    const url = req.url ?? '/';
    this.path = pathOf(url);
    this.search = url.slice(this.path.length + 1);
    // nosniff on every answer: a browser never reads a JSON error or a file as something else.
    this.responseHeaders = { 'X-Request-Id': this.requestId, 'X-Content-Type-Options': 'nosniff' };
  }

  get query(): URLSearchParams {
    this.parsedQuery ??= new URLSearchParams(this.search);
    return this.parsedQuery;
  }

  rawBody(): Promise<Buffer> {
    this.raw ??= readRawBody(this.req);
    return this.raw;
  }

  async readJsonBody(): Promise<Record<string, unknown>> {
    return parseJsonObject(await this.rawBody());
  }
}

/** The path of a request target: all before the "?" of its query, if it has one. */
export function pathOf(url: string): string {
  const queryStart = url.indexOf('?');
  return queryStart === -1 ? url : url.slice(0, queryStart);
}

const NO_PARAMS: Readonly<Record<string, string>> = Object.freeze({});
