// One request's context: built once, first, from the raw request, then passed as this one
// object through every step of the pipeline (src/server.ts) and into the handler. The steps
// record here what they learn (who calls, which route matched) so the last step — the access
// log and usage counting — finds it. Handlers see it through the narrower `RequestContext`
// `KeyContext` and `PortalContext` types of route.ts.

import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Caller } from '../auth/authenticate.ts';
import { callerAtCommit } from '../auth/authorize-commit.ts';
import type { PermissionRoute } from '../auth/permissions.ts';
import type { Store, Transaction } from '../store/store.ts';
import { parseJsonObject, readRawBody } from './body.ts';
import type { IdempotencyClaim, IdempotencyGuard } from './idempotency.ts';
import type { UserRecord } from '../domain/records.ts';
import type { Decided, Headers, KeyContext, OpenPortalContext, PortalContext, Reply, SignedIn } from './route.ts';

/** What `commit` writes through: the store, plus the idempotency record of a POST. */
export interface CommitServices {
  store: Store;
  idempotency: IdempotencyGuard;
  /** Reads a portal session's user again inside a write (401 when it ended). */
  sessions: { userAtCommit(reader: Transaction, sessionId: string): UserRecord };
}

export class Context implements KeyContext, PortalContext, OpenPortalContext {
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
  /** /portal/v1: the live session the cookie names, and its user; null without one. */
  signedIn: SignedIn | null = null;
  /** Step 3 (route): "METHOD /pattern" of the matched route, for analytics and the access log. */
  routeLabel: string | null = null;
  /** Step 3 (route): the /v1 route matched, whose permission a write checks again when it commits. */
  apiRoute: PermissionRoute | null = null;
  /** Step 3 (route): the path's parameters, e.g. { id: 'lst_…' }. */
  params: Readonly<Record<string, string>> = NO_PARAMS;
  /** A POST with Idempotency-Key that claimed its key: its answer is recorded with its write. */
  idempotencyClaim: IdempotencyClaim | null = null;
  /** Told the ms a thread-pool job spent on this request's answer (a large compression), for its key's CPU budget. */
  chargeBackgroundWork: ((context: Context, ms: number) => void) | null = null;

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

  /** The key's user (/v1), or the signed-in user (/portal/v1). */
  get user(): UserRecord {
    return this.caller?.user ?? this.signedIn!.user;
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

  /**
   * A keyed write's decide gets the caller as it is now; a signed-in portal write's, the user as
   * she is now (each context type of route.ts names the one its handlers get).
   */
  commit(decide: (tx: Transaction, who: Caller & UserRecord) => Decided): Promise<Reply> {
    const { store, idempotency, sessions } = this.services;
    const claim = this.idempotencyClaim;
    const keyId = this.caller?.key.id ?? null;
    const route = this.apiRoute;
    const sessionId = this.signedIn?.sessionId ?? null;
    if (sessionId !== null) {
      return store.commit((tx) => {
        const { ops, reply } = (decide as (tx: Transaction, user: UserRecord) => Decided)(tx, sessions.userAtCommit(tx, sessionId));
        return { ops, result: reply };
      });
    }
    return store.commit((tx) => {
      // Answered meanwhile (by another instance sharing the database): that answer, nothing written.
      const recorded = claim ? idempotency.recordedAnswer(tx, claim) : null;
      if (recorded !== null) return { ops: [], result: recorded };
      // The key and its user are part of what a keyed write is decided on.
      const decided =
        keyId === null || route === null
          ? (decide as (tx: Transaction) => Decided)(tx)
          : (decide as (tx: Transaction, caller: Caller) => Decided)(tx, callerAtCommit(tx, keyId, route, this.path));
      const { ops, reply } = decided;
      return { ops: claim && reply.status < 300 ? [...ops, idempotency.recordOp(claim, reply)] : ops, result: reply };
    });
  }
}

const NO_PARAMS: Readonly<Record<string, string>> = Object.freeze({});
