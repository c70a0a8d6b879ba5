// The request pipeline. Each request's Context (src/http/context.ts) is built once, first, and
// passed as that one object through every step. /v1 requests pass the contract's checks in
// order (section 5), each a numbered step of `dispatch`:
//   1. key (401) → 2. CPU budget, then rate limit (429) → 2b. suspended account (403) → 3. route (404/405)
//   → 4. permission (403)
//   → 5-7. the handler: input (400/413/415), ownership and role (403), state (404/409).
// /portal/v1 requests are the developer portal's: a write must come from the server's own origin
// (403), then the route (404/405), then a live session cookie unless the route is open (401).
// /admin requests (and /metrics) need the operator token, then a route; everything else is open (the
// dashboard's files, health, the OpenAPI document). Every request ends in `finish`: one
// access-log line and, for a known key, one usage count. Errors thrown anywhere become JSON
// in `sendError` and only there; unknown ones are logged with the request id and answered
// with a bare 500.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { UsageRecorder } from './analytics/recorder.ts';
import { AUTH_ERROR, AUTH_HINT, presentedKey, type KeyAuthenticator } from './auth/authenticate.ts';
import { OperatorTokenCheck, operatorTokenRequired } from './auth/operator-token.ts';
import { permissionRefused } from './auth/authorize-commit.ts';
import { permissionSetOf } from './auth/permissions.ts';
import { assertNotSuspended } from './auth/suspension.ts';
import type { Clock } from './clock.ts';
import type { AccessLog } from './http/access-log.ts';
import type { ClientAddress } from './http/client-address.ts';
import { Context } from './http/context.ts';
import { isPreflight, type CorsPolicy } from './http/cors.ts';
import { isJsonContentType } from './http/body.ts';
import { forbidden, HttpError, instanceBehind, limiterUnavailable, storeUnavailable } from './domain/errors.ts';
import type { IdempotencyGuard } from './http/idempotency.ts';
import { retryAfterSeconds, setRateLimitHeaders } from './http/rate-limit-headers.ts';
import { errorResponse, sendBytes, sendReply } from './http/respond.ts';
import { assertNoNulInUrl } from './http/url-text.ts';
import { routeLabel, type ApiRoute, type OperatorRoute, type PortalRoute, type PublicRoute, type Reply } from './http/route.ts';
import type { CpuBudget } from './limits/cpu-budget.ts';
import { LimiterUnavailableError, type RateLimiter } from './limits/rate-limiter.ts';
import type { RateDecision } from './limits/sliding-window.ts';
import { isSameOriginWrite } from './portal/same-origin.ts';
import { sessionRequired, type PortalSessions } from './portal/sessions.ts';
import type { Router } from './router.ts';
import { StoreClosedError, StoreUnavailableError, type Store } from './store/store.ts';

export interface PipelineDeps {
  clock: Clock;
  store: Store;
  authenticator: KeyAuthenticator;
  keyLimiter: RateLimiter;
  /** Counts failed authentications per client address (contract section 3). */
  failedAuthLimiter: RateLimiter;
  failedAuthLimit: number;
  apiRoutes: Router<ApiRoute>;
  operatorRoutes: Router<OperatorRoute>;
  publicRoutes: Router<PublicRoute>;
  portalRoutes: Router<PortalRoute>;
  /** Portal sessions: the cookie → the signed-in user. */
  sessions: PortalSessions;
  operatorToken: string;
  usage: UsageRecorder;
  idempotency: IdempotencyGuard;
  /** Which browser origins may call /v1 (CORS_ORIGINS). */
  cors: CorsPolicy;
  accessLog: AccessLog | null;
  /** The client's address (TRUST_PROXY decides whether X-Forwarded-For is believed). */
  clientAddress: ClientAddress;
  /** Counts every answered request for GET /metrics. */
  metrics?: { recordRequest(method: string, route: string | null, status: number, durationMs: number): void; countCpuBudgetRefusal?(): void } | null;
  /** Each key's share of the event loop (KEY_CPU_BUDGET_MS); null when off. */
  cpuBudget?: CpuBudget | null;
  /** Static files (the dashboard): an answer, or null when the path is not one. */
  staticAsset?: (path: string) => { status: number; headers: Record<string, string>; body: Buffer } | null;
  logError: (requestId: string, error: unknown) => void;
}

export function createRequestListener(deps: PipelineDeps): (req: IncomingMessage, res: ServerResponse) => void {
  const operatorToken = new OperatorTokenCheck(deps.operatorToken);
  const commitServices = { store: deps.store, idempotency: deps.idempotency, sessions: deps.sessions };
  const cpuBudget = deps.cpuBudget ?? null;

  function handle(req: IncomingMessage, res: ServerResponse): void {
    // Timed only for the access log: clock reads are a measurable share of a cached page.
    const context = new Context(req, res, commitServices, deps.accessLog === null && !deps.metrics ? 0 : deps.clock.monotonic());
    if (cpuBudget !== null) context.chargeBackgroundWork = chargeBackgroundWork;
    // The synchronous work of the request is timed for its key's CPU budget (step 2).
    const began = cpuBudget === null ? 0 : performance.now();
    let reply: Reply | Promise<Reply>;
    try {
      reply = dispatch(context);
    } catch (error) {
      finish(context, sendError(context, error));
      chargeSince(context, began);
      return;
    }
    // Most /v1 answers are ready at once (a cached page, a look-up, a refusal): they are sent
    // in this same turn, with no promise made for them; only handlers that wait are awaited
    // (profiled: a promise per request was a visible share of a cached page's cost).
    if (reply instanceof Promise) {
      chargeSince(context, began);
      reply.then(
        (ready) => {
          const resumed = cpuBudget === null ? 0 : performance.now();
          respond(context, ready);
          chargeSince(context, resumed);
        },
        (error: unknown) => finish(context, sendError(context, error)),
      );
    } else {
      respond(context, reply);
      chargeSince(context, began);
    }
  }

  /** Charges a thread-pool job's time (a large answer compressed) to the request's key, if it has one. */
  function chargeBackgroundWork(context: Context, ms: number): void {
    if (context.caller) cpuBudget!.chargeTimed(context.caller.key.id, ms, performance.now());
  }

  /**
   * Charges the event-loop work since `began` to the request's key, if it has one, as CPU time:
   * not the time the process waited for a processor meanwhile (CpuBudget.chargeTimed).
   */
  function chargeSince(context: Context, began: number): void {
    if (cpuBudget !== null && context.caller) {
      const now = performance.now();
      cpuBudget.chargeTimed(context.caller.key.id, now - began, now);
    }
  }

  /**
   * The order of checks. Throws (synchronously) for refusals; answers with a Reply, or a
   * promise of one when the handler waits.
   */
  function dispatch(context: Context): Reply | Promise<Reply> {
    const { path } = context;
    // Before any route: no handler ever sees U+0000 decoded from the path or query.
    assertNoNulInUrl(context.req.url ?? '');
    const underV1 = isUnder(path, '/v1');
    const underPortal = isUnder(path, '/portal/v1');
    // An instance of many that cannot vouch it holds every acknowledged write answers nothing
    // from memory (it would answer from the past): 503, and the balancer's next try goes elsewhere.
    if (underV1 || underPortal || isUnder(path, '/admin')) {
      const stale = deps.store.staleness();
      if (stale !== null) throw instanceBehind(stale);
    }
    if (!underV1) {
      if (underPortal) return dispatchPortal(context);
      return isUnder(path, '/admin') || path === '/metrics' ? dispatchOperator(context) : dispatchPublic(context);
    }

    // 0. Every /v1 answer may differ per key and must be revalidated; an allowed browser origin
    //    is told it may read it; a browser's preflight is answered before any key is asked for.
    context.responseHeaders['Cache-Control'] = 'private, no-cache';
    deps.cors.decorate(context.responseHeaders, context.req.headers.origin);
    if (isPreflight(context.method, context.req.headers)) return preflight(context);

    // 1. Key: 401 for a missing, malformed, unknown or revoked key; repeated failures from one
    //    address turn into 429 so keys cannot be guessed at speed.
    const plainKey = presentedKey(context.req.headers);
    const caller = deps.authenticator.authenticate(plainKey);
    if (caller === null) {
      labelAskedRoute(deps.apiRoutes, context);
      const failures = deps.failedAuthLimiter.hit(deps.clientAddress(context.req), deps.failedAuthLimit);
      const refused = () => keyRequired(deps.authenticator.refusalOf(plainKey));
      // The in-process limiter decides at once; a shared one (Redis) answers with a promise.
      if (failures instanceof Promise) return failures.then((decided) => refuseFailedAuthentication(decided, refused));
      return refuseFailedAuthentication(failures, refused);
    }
    context.caller = caller;

    // 2. CPU budget: a key that used more than its share of the event loop in the last minute
    //    waits (429, not counted by the rate limit, like every 429); then the rate limit, where
    //    every authenticated request counts, except those refused here.
    if (cpuBudget !== null) {
      const waitSeconds = cpuBudget.waitSeconds(caller.key.id, caller.key.rate_limit);
      if (waitSeconds > 0) return refuseOverBudget(context, waitSeconds);
    }
    const decision = deps.keyLimiter.hit(caller.key.id, caller.key.rate_limit);
    if (decision instanceof Promise) return decision.then((decided) => dispatchAdmitted(context, decided));
    return dispatchAdmitted(context, decision);
  }

  /** Steps 2 (answering the limiter's decision) to 7, for a request with a valid key. */
  function dispatchAdmitted(context: Context, decision: RateDecision): Reply | Promise<Reply> {
    const { path } = context;
    const caller = context.caller!;
    setRateLimitHeaders(context.responseHeaders, decision, deps.clock);
    if (!decision.allowed) {
      // Analytics counts the 429 against the endpoint that was asked for (one router look-up).
      labelAskedRoute(deps.apiRoutes, context);
      const waitSeconds = retryAfterSeconds(decision);
      context.responseHeaders['Retry-After'] = waitSeconds;
      // Answered rather than thrown: a client over its limit may keep hammering, and throwing
      // and unwinding was the largest part of a 429's own cost (profiled). Same body as a thrown one.
      return {
        status: 429,
        body: { error: `Rate limit of ${decision.limit} requests per minute exceeded. Retry after ${waitSeconds} s.`, request_id: context.requestId },
      };
    }

    // 2b. Suspension: a suspended user's keys get 403 on every route, after key and limit.
    assertNotSuspended(caller.user);

    // 3. Route: 404 for an unknown path, 405 with Allow for a known path with another method.
    const route = matchRoute(deps.apiRoutes, context);

    // 4. Permission, derived from the route's declaration (checked again when a write commits).
    if (!permissionSetOf(caller.key.permissions).allows(route, path)) throw permissionRefused(route);
    context.apiRoute = route;

    // 5-7. The handler checks input, ownership and state. A POST with Idempotency-Key may
    //      instead replay its first answer.
    const idempotencyKey = context.req.headers['idempotency-key'];
    if (context.method !== 'POST' || typeof idempotencyKey !== 'string') return route.handle(context);
    return handleIdempotent(route, context, idempotencyKey);
  }

  /**
   * 429 for a key past its CPU budget. Its rate-limit headers say the same wait: no room now
   * (Remaining 0) until the budget admits again (Reset), so a client honouring either header is admitted.
   */
  function refuseOverBudget(context: Context, waitSeconds: number): Reply {
    const caller = context.caller!;
    labelAskedRoute(deps.apiRoutes, context);
    context.responseHeaders['X-RateLimit-Limit'] = caller.key.rate_limit;
    context.responseHeaders['X-RateLimit-Remaining'] = 0;
    context.responseHeaders['X-RateLimit-Reset'] = Math.ceil(deps.clock.now() / 1000) + waitSeconds;
    context.responseHeaders['Retry-After'] = waitSeconds;
    deps.metrics?.countCpuBudgetRefusal?.();
    return {
      status: 429,
      body: {
        error: `This key used its share of the server's CPU for the last minute (${Math.round(cpuBudget!.budgetOf(caller.key.rate_limit))} ms). Retry after ${waitSeconds} s.`,
        request_id: context.requestId,
      },
    };
  }

  /** A CORS preflight: 204, allowing the path's methods to an allowed origin (and nothing to others). */
  function preflight(context: Context): Reply {
    const match = deps.apiRoutes.match('OPTIONS', context.path);
    const methods = match.kind === 'method-not-allowed' ? match.allowed : [];
    const asked = context.req.headers['access-control-request-method'];
    if (typeof asked === 'string') labelAskedRoute(deps.apiRoutes, context, asked);
    Object.assign(context.responseHeaders, deps.cors.preflightHeaders(context.req.headers.origin, methods));
    return { status: 204 };
  }

  /**
   * /admin: the operator token (401, or 429 once the address has failed too often: the same
   * count as /v1's keys, so guessing either one costs the same), then the route, then the handler.
   */
  function dispatchOperator(context: Context): Reply | Promise<Reply> {
    if (!operatorToken.matches(context.req.headers.authorization)) {
      labelAskedRoute(deps.operatorRoutes, context);
      const failures = deps.failedAuthLimiter.hit(deps.clientAddress(context.req), deps.failedAuthLimit);
      if (failures instanceof Promise) return failures.then((decided) => refuseFailedAuthentication(decided, operatorTokenRequired));
      return refuseFailedAuthentication(failures, operatorTokenRequired);
    }
    return matchRoute(deps.operatorRoutes, context).handle(context);
  }

  /**
   * /portal/v1, the developer portal's session API: answers are never cached; a write must come
   * from a page of this server's own origin and send JSON (403, before anything else, so another
   * site's page can neither sign a user in nor act with her cookie); then the route; then, unless
   * the route is open, a live session (401).
   */
  function dispatchPortal(context: Context): Reply | Promise<Reply> {
    context.responseHeaders['Cache-Control'] = 'no-store';
    const { req } = context;
    if (!SAFE_METHODS.has(context.method)) {
      if (!isSameOriginWrite(req, deps.sessions.origin)) {
        throw forbidden('Portal writes are accepted only from the portal itself: send an Origin header equal to this server\'s origin (or Sec-Fetch-Site: same-origin).');
      }
      if (hasBody(req) && !isJsonContentType(req.headers['content-type'])) throw forbidden('Portal writes must send JSON ("Content-Type: application/json").');
    }
    const route = matchRoute(deps.portalRoutes, context);
    context.signedIn = deps.sessions.signedIn(req);
    if (route.open === true) return route.handle(context);
    if (context.signedIn === null) throw sessionRequired();
    return route.handle(context);
  }

  /** Everything else: the dashboard's files, then the public routes (health, OpenAPI). */
  function dispatchPublic(context: Context): Reply | Promise<Reply> {
    const asset = (context.method === 'GET' || context.method === 'HEAD') && deps.staticAsset ? deps.staticAsset(context.path) : null;
    if (asset) {
      context.routeLabel = context.path.startsWith('/portal') ? 'GET /portal' : 'GET /dashboard';
      return { status: asset.status, bytes: asset.body, headers: asset.headers };
    }
    return matchRoute(deps.publicRoutes, context).handle(context);
  }


  async function handleIdempotent(route: ApiRoute, context: Context, idempotencyKey: string): Promise<Reply> {
    const outcome = deps.idempotency.claim(context.key.id, idempotencyKey, context.method, context.path, await context.rawBody());
    if ('replay' in outcome) return outcome.replay;
    context.idempotencyClaim = outcome.claim;
    try {
      return await route.handle(context);
    } finally {
      deps.idempotency.release(outcome.claim);
    }
  }

  function respond(context: Context, reply: Reply): void {
    let status: number | Promise<number>;
    try {
      status = sendReply(context, reply);
    } catch (error) {
      status = sendError(context, error);
    }
    // A large answer being compressed off the main thread is counted once it is sent.
    if (status instanceof Promise) status.then((sent) => finish(context, sent), (error: unknown) => finish(context, sendError(context, error)));
    else finish(context, status);
  }

  /** Turns any thrown value into its JSON answer; returns the status sent. */
  function sendError(context: Context, error: unknown): number {
    if (error instanceof StoreUnavailableError || error instanceof StoreClosedError) error = storeUnavailable();
    if (error instanceof LimiterUnavailableError) error = limiterUnavailable();
    const { status, body, headers: errorHeaders } = errorResponse(error, context.requestId);
    if (status >= 500 && !(error instanceof HttpError)) deps.logError(context.requestId, error);
    if (context.res.headersSent) {
      context.res.destroy();
      return status;
    }
    sendBytes(context.res, status, JSON.stringify(body), Object.assign(context.responseHeaders, errorHeaders));
    return status;
  }

  /** The last step of every request, answered or refused: usage counting and the access log. */
  function finish(context: Context, status: number): void {
    const keyId = context.caller?.key.id ?? null;
    if (keyId !== null) deps.usage.recordRequest(keyId, context.routeLabel ?? `${context.method} (unknown route)`, status, deps.clock.now());
    if (deps.accessLog === null && !deps.metrics) return;
    const durationMs = deps.clock.monotonic() - context.startedAt;
    deps.metrics?.recordRequest(context.method, context.routeLabel, status, durationMs);
    if (deps.accessLog !== null) {
      deps.accessLog.record({
        method: context.method,
        route: context.routeLabel,
        path: context.path,
        status,
        durationMs,
        keyId,
        requestId: context.requestId,
        client: deps.clientAddress(context.req),
      });
    }
  }

  return handle;
}

/**
 * Step 1's 401 for a missing, malformed, unknown, revoked or expired key. A key that exists but
 * expired, or a secret replaced by a roll whose grace has ended, is told so: its holder had the
 * secret, so the message gives nothing away and saves a support request.
 */
function keyRequired(refusal: ReturnType<KeyAuthenticator['refusalOf']> = null): HttpError {
  if (refusal?.reason === 'expired') {
    return new HttpError(401, `The API key is missing or invalid: this key expired at ${refusal.at}.`, { hint: 'Create a new key in the developer portal, or ask the operator for one.' });
  }
  if (refusal?.reason === 'rolled') {
    const when = refusal.at === null ? '' : ` at ${refusal.at}`;
    return new HttpError(401, `The API key is missing or invalid: this secret was replaced by a roll and its grace period ended${when}.`, { hint: 'Send the new secret the roll gave you.' });
  }
  return new HttpError(401, AUTH_ERROR, { hint: AUTH_HINT });
}

/** A failed key or operator token: its 401, or 429 once the caller's address has failed too often. */
function refuseFailedAuthentication(failures: RateDecision, unauthorized: () => HttpError): never {
  if (failures.allowed) throw unauthorized();
  const waitSeconds = retryAfterSeconds(failures);
  throw new HttpError(429, `Too many failed authentications from your address. Wait ${waitSeconds} s and send a valid key or token.`, {
    headers: { 'Retry-After': String(waitSeconds) },
  });
}

/**
 * For a request refused before step 3 (no key, a wrong token, a preflight, the CPU budget or
 * the rate limit): names the route it asked for (one router look-up, on the refusal path only),
 * so metrics, analytics and the access log count it there; an unknown path keeps no label and
 * is counted as unmatched.
 */
function labelAskedRoute<R extends { method: string; pattern: string }>(router: Router<R>, context: Context, method = context.method): void {
  const match = router.match(method, context.path);
  if (match.kind !== 'found') return;
  context.routeLabel = method === context.method ? routeLabel(match.route) : `${context.method} ${match.route.pattern}`;
}

/** Step 3: the matched route, recorded on the context; or the 404 (unknown path) / 405 with Allow (known path, other method). */
function matchRoute<R extends { method: string; pattern: string }>(router: Router<R>, context: Context): R {
  const { method, path } = context;
  const match = router.match(method, path);
  if (match.kind === 'not-found') throw new HttpError(404, `No route ${method} ${path}.`);
  if (match.kind === 'method-not-allowed') {
    context.routeLabel = `${method} ${match.pattern}`;
    const allowed = match.allowed.join(', ');
    throw new HttpError(405, `${method} is not allowed on ${path}. Allowed: ${allowed}.`, { headers: { Allow: allowed } });
  }
  context.routeLabel = routeLabel(match.route);
  context.params = match.params;
  return match.route;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

function hasBody(req: IncomingMessage): boolean {
  return Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
}

/** True for `prefix` itself and anything below it ("/v1", "/v1/…", not "/v1x"). */
function isUnder(path: string, prefix: string): boolean {
  return path.startsWith(prefix) && (path.length === prefix.length || path.charCodeAt(prefix.length) === SLASH);
}

const SLASH = 0x2f;
