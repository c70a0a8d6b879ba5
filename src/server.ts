// The request pipeline. Every request gets an id and one access-log line; /v1 requests pass
// the contract's checks in order (section 5), each a numbered step below:
//   1. key (401) → 2. rate limit (429) → 3. route (404/405) → 4. permission (403)
//   → 5-7. the handler: input (400/413/415), ownership and role (403), state (404/409).
// Errors thrown anywhere become JSON here and only here; unknown ones are logged with the
// request id and answered with a bare 500.

import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { UsageRecorder } from './analytics/recorder.ts';
import { AUTH_ERROR, AUTH_HINT, presentedKey, type Caller, type KeyAuthenticator } from './auth/authenticate.ts';
import { permissionSetOf, requiredEntries } from './auth/permissions.ts';
import type { Clock } from './clock.ts';
import type { AccessLog } from './http/access-log.ts';
import { parseJsonObject, readRawBody } from './http/body.ts';
import { HttpError, storeUnavailable } from './http/errors.ts';
import type { IdempotencyClaim, IdempotencyGuard } from './http/idempotency.ts';
import { errorResponse, sendBytes, type Headers } from './http/respond.ts';
import type { ApiRoute, KeyContext, OpenRoute, Reply } from './http/route.ts';
import type { RateDecision, SlidingWindowLimiter } from './limits/sliding-window.ts';
import type { Router } from './router.ts';
import type { WriteOp } from './store/format.ts';
import { StoreClosedError, StoreUnavailableError, type Store } from './store/store.ts';

export interface PipelineDeps {
  clock: Clock;
  store: Store;
  authenticator: KeyAuthenticator;
  keyLimiter: SlidingWindowLimiter;
  /** Counts failed authentications per client address (contract section 3). */
  failedAuthLimiter: SlidingWindowLimiter;
  failedAuthLimit: number;
  apiRoutes: Router<ApiRoute>;
  adminRoutes: Router<OpenRoute>;
  openRoutes: Router<OpenRoute>;
  adminToken: string;
  usage: UsageRecorder;
  idempotency: IdempotencyGuard;
  accessLog: AccessLog | null;
  /** Static files (the dashboard): an answer, or null when the path is not one. */
  staticAsset?: (path: string) => { status: number; headers: Record<string, string>; body: Buffer } | null;
  logError: (requestId: string, error: unknown) => void;
}

/** What one request learned on its way, for the access log and analytics. */
interface Trace {
  route: string | null;
  caller: Caller | null;
}

export function createRequestListener(deps: PipelineDeps): (req: IncomingMessage, res: ServerResponse) => void {
  const adminTokenDigest = sha256(deps.adminToken);

  function handle(req: IncomingMessage, res: ServerResponse): void {
    // Timed only for the access log: clock reads are a measurable share of a cached page.
    const startedAt = deps.accessLog === null ? 0 : deps.clock.monotonic();
    const requestId = randomUUID();
    const method = req.method ?? 'GET';
    const url = req.url ?? '/';
    const queryStart = url.indexOf('?');
    const path = queryStart === -1 ? url : url.slice(0, queryStart);
    const search = queryStart === -1 ? '' : url.slice(queryStart + 1);
    const headers: Headers = { 'X-Request-Id': requestId };
    const trace: Trace = { route: null, caller: null };

    const finish = (status: number): void => {
      const keyId = trace.caller?.key.id ?? null;
      if (keyId !== null) deps.usage.recordRequest(keyId, trace.route ?? `${method} (unknown route)`, status, deps.clock.now());
      if (deps.accessLog !== null) {
        deps.accessLog.record({ method, route: trace.route, path, status, durationMs: deps.clock.monotonic() - startedAt, keyId, requestId });
      }
    };
    const fail = (error: unknown): void => finish(sendError(res, error, requestId, headers));
    const respond = (reply: Reply): void => {
      let status: number;
      try {
        status = sendReply(req, res, reply, headers);
      } catch (error) {
        status = sendError(res, error, requestId, headers);
      }
      finish(status);
    };

    let reply: Reply | Promise<Reply>;
    try {
      if (path === '/v1' || path.startsWith('/v1/')) {
        reply = handleApi(req, method, path, search, requestId, headers, trace);
      } else if (path === '/admin' || path.startsWith('/admin/')) {
        reply = handleAdmin(req, method, path, search, requestId, trace);
      } else {
        reply = handleOpen(req, method, path, search, requestId, trace);
      }
    } catch (error) {
      fail(error);
      return;
    }
    // Most /v1 answers are ready at once (a cached page, a look-up, a refusal): they are sent
    // in this same turn, with no promise made for them; only handlers that wait are awaited
    // (profiled: a promise per request was a visible share of a cached page's cost).
    if (reply instanceof Promise) reply.then(respond, fail);
    else respond(reply);
  }

  /** Throws (synchronously) for refusals; answers with a Reply, or a promise of one when the handler waits. */
  function handleApi(
    req: IncomingMessage,
    method: string,
    path: string,
    search: string,
    requestId: string,
    headers: Headers,
    trace: Trace,
  ): Reply | Promise<Reply> {
    // 1. Key: 401 for a missing, malformed, unknown or revoked key; repeated failures from one
    //    address turn into 429 so keys cannot be guessed at speed.
    const caller = deps.authenticator.authenticate(presentedKey(req.headers));
    if (caller === null) {
      const address = req.socket.remoteAddress ?? 'unknown';
      const failures = deps.failedAuthLimiter.hit(address, deps.failedAuthLimit);
      if (!failures.allowed) {
        const waitSeconds = secondsUntil(failures);
        throw new HttpError(429, `Too many failed authentications from your address. Wait ${waitSeconds} s and send a valid key.`, {
          headers: { 'Retry-After': String(waitSeconds) },
        });
      }
      throw new HttpError(401, AUTH_ERROR, { hint: AUTH_HINT });
    }
    trace.caller = caller;

    // 2. Rate limit: every authenticated request counts, except those refused here.
    const decision = deps.keyLimiter.hit(caller.key.id, caller.key.rate_limit);
    setRateLimitHeaders(headers, decision, deps.clock);
    if (!decision.allowed) {
      // Analytics counts the 429 against the endpoint that was asked for (one router look-up).
      const refused = deps.apiRoutes.match(method, path);
      if (refused.kind === 'found') trace.route = routeLabel(refused.route);
      const waitSeconds = secondsUntil(decision);
      headers['Retry-After'] = waitSeconds;
      // Answered rather than thrown: a client over its limit may keep hammering, and throwing
      // and unwinding was the largest part of a 429's own cost (profiled). Same body as a thrown one.
      return {
        status: 429,
        body: { error: `Rate limit of ${decision.limit} requests per minute exceeded. Retry after ${waitSeconds} s.`, request_id: requestId },
      };
    }

    // 3. Route: 404 for an unknown path, 405 with Allow for a known path with another method.
    const { route, params } = routeOrThrow(deps.apiRoutes, method, path);
    trace.route = routeLabel(route);

    // 4. Permission, derived from the route's declaration.
    if (!permissionSetOf(caller.key.permissions).allows(route, path)) {
      throw new HttpError(403, `This API key may not ${route.method} ${route.pattern}.`, { required: requiredEntries(route) });
    }

    // 5-7. The handler checks input, ownership and state. A POST with Idempotency-Key may
    //      instead replay its first answer.
    const context = new Context(req, method, path, search, params, requestId, caller, deps);
    const idempotencyKey = req.headers['idempotency-key'];
    if (method !== 'POST' || typeof idempotencyKey !== 'string') return route.handle(context);
    return handleIdempotent(route, context, caller, idempotencyKey);
  }

  async function handleIdempotent(route: ApiRoute, context: Context, caller: Caller, idempotencyKey: string): Promise<Reply> {
    const outcome = deps.idempotency.claim(caller.key.id, idempotencyKey, context.method, context.path, await context.rawBody());
    if ('replay' in outcome) return outcome.replay;
    context.idempotencyClaim = outcome.claim;
    try {
      return await route.handle(context);
    } finally {
      deps.idempotency.release(outcome.claim);
    }
  }

  async function handleAdmin(req: IncomingMessage, method: string, path: string, search: string, requestId: string, trace: Trace): Promise<Reply> {
    if (!isAdminToken(req.headers.authorization, adminTokenDigest)) {
      throw new HttpError(401, 'The operator token is missing or wrong.', {
        hint: 'Send "Authorization: Bearer <operator token>" (MARKETPLACE_ADMIN_TOKEN, or the admin-token file in DATA_DIR).',
      });
    }
    return dispatchOpen(deps.adminRoutes, req, method, path, search, requestId, trace);
  }

  async function handleOpen(req: IncomingMessage, method: string, path: string, search: string, requestId: string, trace: Trace): Promise<Reply> {
    const asset = method === 'GET' && deps.staticAsset ? deps.staticAsset(path) : null;
    if (asset) {
      trace.route = 'GET /dashboard';
      return { status: asset.status, bytes: asset.body, headers: asset.headers };
    }
    return dispatchOpen(deps.openRoutes, req, method, path, search, requestId, trace);
  }

  async function dispatchOpen(router: Router<OpenRoute>, req: IncomingMessage, method: string, path: string, search: string, requestId: string, trace: Trace): Promise<Reply> {
    const { route, params } = routeOrThrow(router, method, path);
    trace.route = routeLabel(route);
    return route.handle(new Context(req, method, path, search, params, requestId, null, deps));
  }

  function sendError(res: ServerResponse, error: unknown, requestId: string, headers: Headers): number {
    if (error instanceof StoreUnavailableError || error instanceof StoreClosedError) error = storeUnavailable();
    const { status, body, headers: errorHeaders } = errorResponse(error, requestId);
    if (status >= 500 && !(error instanceof HttpError)) deps.logError(requestId, error);
    if (res.headersSent) {
      res.destroy();
      return status;
    }
    sendBytes(res, status, JSON.stringify(body), Object.assign(headers, errorHeaders));
    return status;
  }

  return handle;
}

const routeLabels = new WeakMap<object, string>();

/** The matched route, or the 404 (unknown path) / 405 with Allow (known path, other method) to answer. */
function routeOrThrow<R extends { method: string; pattern: string }>(router: Router<R>, method: string, path: string): { route: R; params: Record<string, string> } {
  const match = router.match(method, path);
  if (match.kind === 'not-found') throw new HttpError(404, `No route ${method} ${path}.`);
  if (match.kind === 'method-not-allowed') {
    const allowed = match.allowed.join(', ');
    throw new HttpError(405, `${method} is not allowed on ${path}. Allowed: ${allowed}.`, { headers: { Allow: allowed } });
  }
  return match;
}

/**
 * "METHOD /pattern", made once per route: analytics keys its counters by it on every request,
 * and a string built per request would be hashed afresh each time.
 */
function routeLabel(route: { method: string; pattern: string }): string {
  let label = routeLabels.get(route);
  if (label === undefined) {
    label = `${route.method} ${route.pattern}`;
    routeLabels.set(route, label);
  }
  return label;
}

/** Sends a reply; GET 200 answers carry an ETag and become 304 when the client has it. */
function sendReply(req: IncomingMessage, res: ServerResponse, reply: Reply, headers: Headers): number {
  if (reply.headers) Object.assign(headers, reply.headers);
  const bytes = reply.bytes ?? (reply.body === undefined ? null : Buffer.from(JSON.stringify(reply.body)));
  if (req.method === 'GET' && reply.status === 200 && bytes !== null) {
    const etag = reply.etag ?? etagOf(bytes);
    headers.ETag = etag;
    if (matchesEtag(req.headers['if-none-match'], etag)) {
      delete headers['Content-Type'];
      sendBytes(res, 304, null, headers);
      return 304;
    }
  }
  sendBytes(res, reply.status, bytes, headers);
  return reply.status;
}

export function etagOf(bytes: Buffer): string {
  return `"${createHash('sha1').update(bytes).digest('base64url')}"`;
}

function matchesEtag(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  if (ifNoneMatch.trim() === '*') return true;
  return ifNoneMatch.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}

function setRateLimitHeaders(headers: Headers, decision: RateDecision, clock: Clock): void {
  headers['X-RateLimit-Limit'] = decision.limit;
  headers['X-RateLimit-Remaining'] = decision.remaining;
  headers['X-RateLimit-Reset'] = resetUnixSeconds(decision, clock);
}

/** Monotonic reset time → Unix seconds, rounded up so a client waiting until then is admitted. */
export function resetUnixSeconds(decision: RateDecision, clock: Clock): number {
  return Math.ceil((clock.now() + (decision.resetAt - decision.decidedAt)) / 1000);
}

function secondsUntil(decision: RateDecision): number {
  return Math.max(1, Math.ceil((decision.resetAt - decision.decidedAt) / 1000));
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

function isAdminToken(authorization: string | undefined, expectedDigest: Buffer): boolean {
  if (!authorization) return false;
  const bearer = /^bearer\s+(.+)$/i.exec(authorization.trim());
  if (!bearer) return false;
  // Comparing digests keeps the comparison constant-time whatever the lengths.
  return timingSafeEqual(sha256(bearer[1]!.trim()), expectedDigest);
}

/** The handler's view of one request. */
class Context implements KeyContext {
  readonly req: IncomingMessage;
  readonly method: string;
  readonly path: string;
  readonly params: Readonly<Record<string, string>>;
  readonly requestId: string;
  readonly search: string;
  idempotencyClaim: IdempotencyClaim | null = null;
  private readonly caller: Caller | null;
  private readonly deps: PipelineDeps;
  private parsedQuery: URLSearchParams | null = null;
  private raw: Promise<Buffer> | null = null;

  constructor(req: IncomingMessage, method: string, path: string, search: string, params: Record<string, string>, requestId: string, caller: Caller | null, deps: PipelineDeps) {
    this.req = req;
    this.method = method;
    this.path = path;
    this.search = search;
    this.params = params;
    this.requestId = requestId;
    this.caller = caller;
    this.deps = deps;
  }

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

  async commit(ops: WriteOp[], reply: Reply): Promise<Reply> {
    const claim = this.idempotencyClaim;
    const all = claim && reply.status < 300 ? [...ops, this.deps.idempotency.recordOp(claim, reply)] : ops;
    await this.deps.store.write(all);
    return reply;
  }
}
