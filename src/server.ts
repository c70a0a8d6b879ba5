// The request pipeline. Each request's Context (src/http/context.ts) is built once, first, and
// passed as that one object through every step. /v1 requests pass the contract's checks in
// order (section 5), each a numbered step of `dispatch`:
//   1. key (401) → 2. CPU budget, then rate limit (429) → 2b. suspended account (403) → 3. route (404/405)
//   → 4. permission (403)
//   → 5-7. the handler: input (400/413/415), ownership and role (403), state (404/409).
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
import { Context } from './http/context.ts';
import { isPreflight, type CorsPolicy } from './http/cors.ts';
import { HttpError, limiterUnavailable, storeUnavailable } from './http/errors.ts';
import type { IdempotencyGuard } from './http/idempotency.ts';
import { retryAfterSeconds, setRateLimitHeaders } from './http/rate-limit-headers.ts';
import { errorResponse, sendBytes, sendReply } from './http/respond.ts';
import { routeLabel, type ApiRoute, type OperatorRoute, type PublicRoute, type Reply } from './http/route.ts';
import type { CpuBudget } from './limits/cpu-budget.ts';
import { LimiterUnavailableError, type RateLimiter } from './limits/rate-limiter.ts';
import type { RateDecision } from './limits/sliding-window.ts';
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
  operatorToken: string;
  usage: UsageRecorder;
  idempotency: IdempotencyGuard;
  /** Which browser origins may call /v1 (CORS_ORIGINS). */
  cors: CorsPolicy;
  accessLog: AccessLog | null;
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
  const commitServices = { store: deps.store, idempotency: deps.idempotency };
  const cpuBudget = deps.cpuBudget ?? null;

  function handle(req: IncomingMessage, res: ServerResponse): void {
    // Timed only for the access log: clock reads are a measurable share of a cached page.
    const context = new Context(req, res, commitServices, deps.accessLog === null && !deps.metrics ? 0 : deps.clock.monotonic());
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

  /** Charges the event-loop time since `began` to the request's key, if it has one. */
  function chargeSince(context: Context, began: number): void {
    if (cpuBudget !== null && context.caller) cpuBudget.charge(context.caller.key.id, performance.now() - began);
  }

  /**
   * The order of checks. Throws (synchronously) for refusals; answers with a Reply, or a
   * promise of one when the handler waits.
   */
  function dispatch(context: Context): Reply | Promise<Reply> {
    const { path } = context;
    if (!isUnder(path, '/v1')) return isUnder(path, '/admin') || path === '/metrics' ? dispatchOperator(context) : dispatchPublic(context);

    // 0. Every /v1 answer may differ per key and must be revalidated; an allowed browser origin
    //    is told it may read it; a browser's preflight is answered before any key is asked for.
    context.responseHeaders['Cache-Control'] = 'private, no-cache';
    deps.cors.decorate(context.responseHeaders, context.req.headers.origin);
    if (isPreflight(context.method, context.req.headers)) return preflight(context);

    // 1. Key: 401 for a missing, malformed, unknown or revoked key; repeated failures from one
    //    address turn into 429 so keys cannot be guessed at speed.
    const caller = deps.authenticator.authenticate(presentedKey(context.req.headers));
    if (caller === null) {
      const failures = deps.failedAuthLimiter.hit(context.req.socket.remoteAddress ?? 'unknown', deps.failedAuthLimit);
      // The in-process limiter decides at once; a shared one (Redis) answers with a promise.
      if (failures instanceof Promise) return failures.then((decided) => refuseFailedAuthentication(decided, keyRequired));
      return refuseFailedAuthentication(failures, keyRequired);
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
      const refused = deps.apiRoutes.match(context.method, path);
      if (refused.kind === 'found') context.routeLabel = routeLabel(refused.route);
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
    const refused = deps.apiRoutes.match(context.method, context.path);
    if (refused.kind === 'found') context.routeLabel = routeLabel(refused.route);
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
    Object.assign(context.responseHeaders, deps.cors.preflightHeaders(context.req.headers.origin, methods));
    return { status: 204 };
  }

  /**
   * /admin: the operator token (401, or 429 once the address has failed too often: the same
   * count as /v1's keys, so guessing either one costs the same), then the route, then the handler.
   */
  function dispatchOperator(context: Context): Reply | Promise<Reply> {
    if (!operatorToken.matches(context.req.headers.authorization)) {
      const failures = deps.failedAuthLimiter.hit(context.req.socket.remoteAddress ?? 'unknown', deps.failedAuthLimit);
      if (failures instanceof Promise) return failures.then((decided) => refuseFailedAuthentication(decided, operatorTokenRequired));
      return refuseFailedAuthentication(failures, operatorTokenRequired);
    }
    return matchRoute(deps.operatorRoutes, context).handle(context);
  }

  /** Everything else: the dashboard's files, then the public routes (health, OpenAPI). */
  function dispatchPublic(context: Context): Reply | Promise<Reply> {
    const asset = (context.method === 'GET' || context.method === 'HEAD') && deps.staticAsset ? deps.staticAsset(context.path) : null;
    if (asset) {
      context.routeLabel = 'GET /dashboard';
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
    let status: number;
    try {
      status = sendReply(context, reply);
    } catch (error) {
      status = sendError(context, error);
    }
    finish(context, status);
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
      deps.accessLog.record({ method: context.method, route: context.routeLabel, path: context.path, status, durationMs, keyId, requestId: context.requestId });
    }
  }

  return handle;
}

/** Step 1's 401 for a missing, malformed, unknown or revoked key. */
function keyRequired(): HttpError {
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

/** Step 3: the matched route, recorded on the context; or the 404 (unknown path) / 405 with Allow (known path, other method). */
function matchRoute<R extends { method: string; pattern: string }>(router: Router<R>, context: Context): R {
  const { method, path } = context;
  const match = router.match(method, path);
  if (match.kind === 'not-found') throw new HttpError(404, `No route ${method} ${path}.`);
  if (match.kind === 'method-not-allowed') {
    const allowed = match.allowed.join(', ');
    throw new HttpError(405, `${method} is not allowed on ${path}. Allowed: ${allowed}.`, { headers: { Allow: allowed } });
  }
  context.routeLabel = routeLabel(match.route);
  context.params = match.params;
  return match.route;
}

/** True for `prefix` itself and anything below it ("/v1", "/v1/…", not "/v1x"). */
function isUnder(path: string, prefix: string): boolean {
  return path.startsWith(prefix) && (path.length === prefix.length || path.charCodeAt(prefix.length) === SLASH);
}

const SLASH = 0x2f;
