// One request's context: built once, first, from the raw request, then passed as this one
// object through every step of the pipeline (src/server.ts) and into the handler. The steps
// record here what they learn (who calls, which route matched) so the last step — the access
// log and usage counting — finds it. Handlers see it through the narrower `RequestContext`
// and `KeyContext` types of route.ts.

import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Caller } from '../auth/authenticate.ts';
import { callerAtCommit } from '../auth/authorize-commit.ts';
import type { PermissionRoute } from '../auth/permissions.ts';
import type { Store, Transaction } from '../store/store.ts';
import { parseJsonObject, readRawBody } from './body.ts';
import type { IdempotencyClaim, IdempotencyGuard } from './idempotency.ts';
import type { Decided, Headers, KeyContext, Reply } from './route.ts';

/** What `commit` writes through: the store, plus the idempotency record of a POST. */
export interface CommitServices {
  store: Store;
  idempotency: IdempotencyGuard;
}

export class Context implements KeyContext {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly method: string;
  readonly path: string;
  /** The raw query string, without the "?" ("" when there is none). */
  readonly search: string;
  readonly requestId: string;
  /** Monotonic milliseconds at arrival, for the access log's duration (0 when nothing times it). */
  readonly startedAt: number;
  /** Headers every answer to this request carries, whatever it is (request id, rate-limit headers). */
  readonly responseHeaders: Headers;

  // Learned on the way, in the order of the pipeline's steps:
  /** Step 1 (key): the key and its user; null for /admin and open routes, or before step 1. */
  caller: Caller | null = null;
  /** Step 3 (route): "METHOD /pattern" of the matched route, for analytics and the access log. */
  routeLabel: string | null = null;
  /** Step 3 (route): the /v1 route matched, whose permission a write checks again when it commits. */
  apiRoute: PermissionRoute | null = null;
  /** Step 3 (route): the path's parameters, e.g. { id: 'lst_…' }. */
  params: Readonly<Record<string, string>> = NO_PARAMS;
  /** A POST with Idempotency-Key that claimed its key: its answer is recorded with its write. */
  idempotencyClaim: IdempotencyClaim | null = null;

  private readonly services: CommitServices;
  private parsedQuery: URLSearchParams | null = null;
  private raw: Promise<Buffer> | null = null;

  constructor(req: IncomingMessage, res: ServerResponse, services: CommitServices, startedAt: number) {
    this.req = req;
    this.res = res;
    this.services = services;
    this.startedAt = startedAt;
    this.requestId = randomUUID();
    this.method = req.method ?? 'GET';
    const url = req.url ?? '/';
    const queryStart = url.indexOf('?');
    this.path = queryStart === -1 ? url : url.slice(0, queryStart);
    this.search = queryStart === -1 ? '' : url.slice(queryStart + 1);
    // nosniff on every answer: a browser never reads a JSON error or a file as something else.
    this.responseHeaders = { 'X-Request-Id': this.requestId, 'X-Content-Type-Options': 'nosniff' };
  }

  /** The caller's key; only /v1 handlers read it, and they run after step 1 found one. */
  get key() {
    return this.caller!.key;
  }

  get user() {
    return this.caller!.user;
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

  commit(decide: (tx: Transaction, caller: Caller) => Decided): Promise<Reply> {
    const { store, idempotency } = this.services;
    const claim = this.idempotencyClaim;
    const keyId = this.caller?.key.id ?? null;
    const route = this.apiRoute;
    return store.commit((tx) => {
      // Answered meanwhile (by another instance sharing the database): that answer, nothing written.
      const recorded = claim ? idempotency.recordedAnswer(tx, claim) : null;
      if (recorded !== null) return { ops: [], result: recorded };
      // The key and its user are part of what a keyed write is decided on.
      const decided =
        keyId === null || route === null ? (decide as (tx: Transaction) => Decided)(tx) : decide(tx, callerAtCommit(tx, keyId, route, this.path));
      const { ops, reply } = decided;
      return { ops: claim && reply.status < 300 ? [...ops, idempotency.recordOp(claim, reply)] : ops, result: reply };
    });
  }
}

const NO_PARAMS: Readonly<Record<string, string>> = Object.freeze({});
