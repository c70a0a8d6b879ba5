// What a route is, and what its handler receives. Each /v1 route declares its method, pattern
// and resource once; the permission check and the OpenAPI test both derive from that. The
// context a handler receives is one class per surface on src/http/context.ts's base, built by
// its area's gate (src/pipeline/). Each interface here has one class of the same name that
// implements it: KeyContext (http/key-context.ts), KeylessContext (http/keyless-context.ts), and
// the portal's PortalContext and OpenPortalContext (modules/portal/); RequestContext is what
// they all share. Handlers see the interface, so they import no class.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Caller } from '../auth/authenticate.ts';
import type { Resource } from '../auth/key-rules.ts';
import type { KeyRecord, UserRecord } from '../domain/records.ts';
import type { Decision, Transaction } from '../store/transaction.ts';

// The resources a route may declare are the permission rules' (auth/key-rules.ts).
export { RESOURCES, type Resource } from '../auth/key-rules.ts';

/** Response headers by name, as an answer carries them. */
export type Headers = Record<string, string | number>;

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** A handler's answer. `body` is serialised as JSON; `bytes` are sent as they are. */
export interface Reply {
  status: number;
  body?: unknown;
  bytes?: Buffer;
  etag?: string;
  headers?: Record<string, string>;
  /**
   * A response that stays open (an event stream): called with the response and the request's
   * headers instead of sending a body; it writes the head and the body itself and resolves with
   * the status once the response has ended, when the request is counted and logged.
   */
  stream?: (res: ServerResponse, headers: Headers) => Promise<number>;
}

export interface RequestContext {
  readonly req: IncomingMessage;
  readonly method: string;
  readonly path: string;
  readonly params: Readonly<Record<string, string>>;
  readonly query: URLSearchParams;
  /** The raw query string, without the "?" ("" when there is none); `query` is its parsed form. */
  readonly search: string;
  readonly requestId: string;
  /** The parsed JSON object body (POST/PUT/PATCH); 400/413/415 on bad input. */
  readJsonBody(): Promise<Record<string, unknown>>;
  /**
   * Decides a write on the current records and makes it durable: `decide` reads through `tx`
   * and returns the store's Decision, the ops to write as one unit and the answer as its
   * `result`. It runs in the store's write
   * queue just before the write reaches the log (again if what it read changed), so it must be
   * synchronous; throwing an HttpError refuses the request and writes nothing. The server may
   * add ops of its own to the same write (the idempotency record of a POST).
   */
  commit(decide: (tx: Transaction) => Decision<Reply>): Promise<Reply>;
}

/**
 * What a route served without a key or a session receives (an operator route, a public one, an
 * open portal route): its writes are decided on the records alone, nobody is read again, and a
 * write may have another result than an answer (an audit entry written before the work it
 * records, answered after that work).
 */
export interface KeylessContext extends RequestContext {
  commit<R = Reply>(decide: (tx: Transaction) => Decision<R>): Promise<R>;
}

export interface KeyContext extends RequestContext {
  /** The key and user as they were when the request's headers arrived (fine for reads). */
  readonly key: KeyRecord;
  readonly user: UserRecord;
  /**
   * As RequestContext.commit, and `caller` is the key and user as they are now: a key revoked
   * meanwhile is refused with 401, one that lost the route's permission with 403.
   */
  commit(decide: (tx: Transaction, caller: Caller) => Decision<Reply>): Promise<Reply>;
}

export interface ApiRoute {
  method: Method;
  pattern: string;
  resource: Resource;
  summary: string;
  /**
   * Many instances: everything the handler reads is read inside its commit (and a refusal is
   * decided there too), so the request need not wait for its instance to catch up before it is
   * decided: the commit's check of what it read, and the store's second decision of a refusal
   * made behind the watermark, keep its answer current (v1-gate.ts, store.ts `commit`).
   */
  checkedAtCommit?: true;
  handle(context: KeyContext): Promise<Reply> | Reply;
}

/**
 * What a /portal/v1 handler receives: the signed-in user (from the session cookie) as of the
 * request's arrival, fine for reads.
 */
export interface PortalContext extends RequestContext {
  readonly user: UserRecord;
  /** The session the request came with (set before any session route runs). */
  readonly signedIn: SignedIn | null;
  /**
   * As RequestContext.commit, and `user` is the signed-in user as they are now: a session ended
   * meanwhile (sign-out, password change, expiry) or a user suspended or erased is refused with 401.
   */
  commit(decide: (tx: Transaction, user: UserRecord) => Decision<Reply>): Promise<Reply>;
}

/** A live portal session (src/portal/sessions.ts finds it from the cookie) and its user. */
export interface SignedIn {
  readonly sessionId: string;
  readonly user: UserRecord;
}

/** What an open portal route (sign-in, sign-up, setting a password) receives. */
export interface OpenPortalContext extends KeylessContext {
  /** The live session the request carries, if any. */
  readonly signedIn: SignedIn | null;
}

/**
 * A /portal/v1 route. The pipeline checked the request's origin (writes) and, unless the route
 * is `open`, that a live session is signed in (401 otherwise). Route modules export a list of
 * them (e.g. `portalSessionRoutes(deps)`), collected in src/app.ts.
 */
export type PortalRoute = SessionPortalRoute | OpenPortalRoute;

interface SessionPortalRoute {
  method: Method;
  pattern: string;
  summary: string;
  open?: false;
  handle(context: PortalContext): Promise<Reply> | Reply;
}

interface OpenPortalRoute {
  method: Method;
  pattern: string;
  summary: string;
  /** Served without a session: sign-in, sign-up, a password set from an invitation. */
  open: true;
  handle(context: OpenPortalContext): Promise<Reply> | Reply;
}

/** A route that needs no API key: an operator route or a public one (below). */
interface KeylessRoute {
  method: Method;
  pattern: string;
  summary: string;
  handle(context: KeylessContext): Promise<Reply> | Reply;
}

/** An /admin/v1 route: the pipeline checked the operator token before it runs. */
export interface AdminRoute extends KeylessRoute {}

/** A route anyone may call: the health check, the OpenAPI document. */
export interface PublicRoute extends KeylessRoute {}

const routeLabels = new WeakMap<object, string>();

/**
 * "METHOD /pattern", made once per route: analytics keys its counters by it on every request,
 * and a string built per request would be hashed afresh each time.
 */
export function routeLabel(route: { method: string; pattern: string }): string {
  let label = routeLabels.get(route);
  if (label === undefined) {
    label = `${route.method} ${route.pattern}`;
    routeLabels.set(route, label);
  }
  return label;
}
