// The /v1 gate: the contract's checks in order (section 5), each a numbered step:
//   0. the URL (U+0000); Cache-Control and CORS; a preflight answered
//   1. key (401; 429 once an address fails too often)
//   2. quota used up, CPU budget, then rate limit (429) → 2b. suspended account (403)
//   (many instances: the rate limiter's answer carries the commit watermark; an instance behind
//    it catches up, or answers 503, and checks the key again before going on, so a key revoked
//    or narrowed on another instance is refused here from the next request on; a key not found
//    is looked for again after a catch-up, so a key made on another instance works at once)
//   3. route (404/405) → 4. permission (403)
//   5-7. the handler: input (400/413/415), ownership and role (403), state (404/409); a POST
//        with Idempotency-Key may instead replay its first answer.
// Each request gets an KeyContext (src/http/key-context.ts): its commit re-reads the key.

import { AUTH_ERROR, AUTH_HINT, presentedKey, type KeyAuthenticator } from '../auth/authenticate.ts';
import type { KeyQuotas, QuotaCounter } from '../analytics/quota-counters.ts';
import { permissionRefused } from '../auth/authorize-commit.ts';
import { permissionSetOf } from '../auth/permissions.ts';
import { assertNotSuspended } from '../auth/suspension.ts';
import { isoTime } from '../clock.ts';
import { HttpError } from '../domain/errors.ts';
import type { PlanQuota } from '../domain/records.ts';
import { KeyContext, type PostIdempotency } from '../http/key-context.ts';
import { retryAfterSeconds, setQuotaHeaders, setRateLimitHeaders } from '../http/rate-limit-headers.ts';
import type { ApiRoute, Reply } from '../http/route.ts';
import type { RateDecision } from '../limits/sliding-window.ts';
import type { PipelineDeps } from './deps.ts';
import { refuseFailedAuthentication } from './failed-authentication.ts';
import { checkUrl } from './first-checks.ts';
import type { Gate, Run } from './gate.ts';
import { labelAskedRoute, matchRoute } from './route-step.ts';

type V1Deps = Pick<
  PipelineDeps,
  'store' | 'clock' | 'authenticator' | 'keyLimiter' | 'metering' | 'failedAuthLimiter' | 'failedAuthLimit' | 'clientAddress' | 'apiRoutes' | 'idempotency' | 'cors' | 'observer'
>;

/** A request counted against its plan's quota (step 2), given back if the rate limit refuses it. */
interface QuotaTaken {
  quotas: KeyQuotas;
  quota: PlanQuota;
  taken: QuotaCounter;
}

export function createV1Gate(deps: V1Deps, run: Run): Gate {
  const services = { store: deps.store };
  // The cpu-budget module's step 2, or null without it.
  const cpuBudget = deps.observer.cpuBudget;
  const routes = deps.apiRoutes;

  function steps(context: KeyContext): Reply | Promise<Reply> {
    // 0. Every /v1 answer may differ per key and must be revalidated; an allowed browser origin
    //    is told it may read it; a browser's preflight is answered before any key is asked for.
    checkUrl(context);
    context.responseHeaders['Cache-Control'] = 'private, no-cache';
    deps.cors?.decorate(context.responseHeaders, context.req.headers.origin);
    if (isPreflight(context)) return preflight(context);

    // 1. Key: 401 for a missing, malformed, unknown or revoked key; repeated failures from one
    //    address turn into 429 so keys cannot be guessed at speed.
    const plainKey = presentedKey(context.req.headers);
    const caller = deps.authenticator.authenticate(plainKey);
    if (caller === null) {
      // Not known here: it may have been made on another instance a moment ago. Catch up first
      // (a round trip to the watermark, only for keys not found), then look again.
      const catchingUp = deps.store.ensureFresh();
      if (catchingUp !== null) return catchingUp.then(() => withCaller(context, deps.authenticator.authenticate(plainKey), plainKey));
    }
    return withCaller(context, caller, plainKey);
  }

  /** Steps 1 (refusing an unknown key) and 2. */
  function withCaller(context: KeyContext, caller: ReturnType<KeyAuthenticator['authenticate']>, plainKey: string | null): Reply | Promise<Reply> {
    context.keyReadAt = deps.store.memoryGeneration();
    if (caller === null) {
      labelAskedRoute(routes, context);
      return refuseFailedAuthentication(deps, context, () => keyRequired(deps.authenticator.refusalOf(plainKey)));
    }
    context.caller = caller;

    // 2. CPU budget (with the cpu-budget module): a key that used more than its share of the
    //    event loop in the last minute waits (429, not counted by the rate limit, like every
    //    429); then the rate limit, where every authenticated request counts, except those
    //    refused here.
    //    With the plans module a key on a plan is metered with its user's other keys on that plan
    //    (one window, one budget, one quota). A plan's quota is taken before the rate limit and
    //    given back if the rate limit refuses: a refused request counts against nothing.
    const { metering } = deps;
    const meterId = metering.meterOf(caller.key);
    const quotas = metering.quotas;
    const quota = quotas?.quotaOf(caller.key);
    if (quota !== undefined) return meteredByQuota(context, quotas!, meterId, quota);
    const overBudget = cpuBudget?.refusal(context, meterId, caller.key.rate_limit) ?? null;
    if (overBudget !== null) {
      labelAskedRoute(routes, context);
      return freshThen(context, () => overBudget);
    }
    const decision = deps.keyLimiter.hit(meterId, caller.key.rate_limit);
    if (decision instanceof Promise) return decision.then((decided) => admitted(context, decided));
    return admitted(context, decision);
  }

  /** Step 2 for a key whose plan has a quota: quota, CPU budget, the quota taken, then the rate limit. */
  function meteredByQuota(context: KeyContext, quotas: KeyQuotas, meterId: string, quota: PlanQuota): Reply | Promise<Reply> {
    if (quotas.exhausted(meterId, quota)) return quotaRefusal(context, quotas, meterId, quota);
    const overBudget = cpuBudget?.refusal(context, meterId, context.key.rate_limit) ?? null;
    if (overBudget !== null) {
      labelAskedRoute(routes, context);
      setQuotaHeaders(context.responseHeaders, quota, quotas.counter(meterId, quota));
      return freshThen(context, () => overBudget);
    }
    const taken = quotas.take(meterId, quota);
    if (taken instanceof Promise) return taken.then((counter) => (counter === null ? quotaRefusal(context, quotas, meterId, quota) : rateLimited(context, meterId, { quotas, quota, taken: counter })));
    return taken === null ? quotaRefusal(context, quotas, meterId, quota) : rateLimited(context, meterId, { quotas, quota, taken });
  }

  function rateLimited(context: KeyContext, meterId: string, counted: QuotaTaken): Reply | Promise<Reply> {
    const decision = deps.keyLimiter.hit(meterId, context.key.rate_limit);
    if (decision instanceof Promise) return decision.then((decided) => admitted(context, decided, meterId, counted));
    return admitted(context, decision, meterId, counted);
  }

  /**
   * `answer()` once this instance holds every acknowledged write (`known`: the watermark the
   * limiter's answer carried); after a catch-up the key is checked again on the new state.
   */
  function freshThen(context: KeyContext, answer: () => Reply | Promise<Reply>, known?: RateDecision['watermark']): Reply | Promise<Reply> {
    const recheck = () => {
      // Memory changed since the key was read (this catch-up, or one that ran while the limiter
      // answered): the key is read again, as it is now.
      if (deps.store.memoryGeneration() !== context.keyReadAt) {
        const plainKey = presentedKey(context.req.headers);
        const caller = deps.authenticator.authenticate(plainKey);
        if (caller === null) throw keyRequired(deps.authenticator.refusalOf(plainKey));
        context.caller = caller;
      }
      return answer();
    };
    const catchingUp = deps.store.ensureFresh(known);
    return catchingUp === null ? recheck() : catchingUp.then(recheck);
  }

  /** The route asked for is one whose handler reads everything inside its commit. */
  function checkedAtCommit(context: KeyContext): boolean {
    const match = routes.match(context.method, context.path);
    return match.kind === 'found' && match.route.checkedAtCommit === true;
  }

  /** Steps 2 (answering the limiter's decision) to 7, for a request with a valid key, once the instance is caught up. */
  function admitted(context: KeyContext, decision: RateDecision, meterId?: string, counted?: QuotaTaken): Reply | Promise<Reply> {
    const { watermark } = decision;
    if (watermark !== undefined && decision.allowed && deps.store.trustsWatermark(watermark) && checkedAtCommit(context)) {
      // A write whose every read is checked at its commit: decided at once, with no wait for a
      // catch-up (writes spread over instances would otherwise each wait for one); the store
      // decides a refusal again once caught up (KeyContext.commit → Store.commit's freshAs).
      context.freshAs = watermark;
      // The limit too is applied as the key stands at commit: one lowered elsewhere refuses this write.
      context.limitAtCommit = {
        over: (key) => {
          const current = underCurrentLimit(decision, key.rate_limit);
          return current.allowed ? null : current;
        },
        refuse: (current) => rateLimitRefusal(context, current, meterId, counted),
      };
      try {
        return decided(context, decision, meterId, counted);
      } catch (error) {
        if (!(error instanceof HttpError)) throw error;
        // A refusal of this gate (suspension, permission) made on older state: caught up first, as any other request.
        context.freshAs = undefined;
        context.limitAtCommit = null;
      }
    }
    return freshThen(context, () => decided(context, underCurrentLimit(decision, context.key.rate_limit), meterId, counted), decision.watermark);
  }

  function decided(context: KeyContext, decision: RateDecision, meterId?: string, counted?: QuotaTaken): Reply | Promise<Reply> {
    const { key, user } = context;
    if (!decision.allowed) return rateLimitRefusal(context, decision, meterId, counted);
    setRateLimitHeaders(context.responseHeaders, decision, deps.clock);
    if (counted !== undefined) setQuotaHeaders(context.responseHeaders, counted.quota, counted.taken);

    // 2b. Suspension: a suspended user's keys get 403 on every route, after key and limit.
    assertNotSuspended(user);

    // 3. Route: 404 for an unknown path, 405 with Allow for a known path with another method.
    const route = matchRoute(routes, context);

    // 4. Permission, derived from the route's declaration (checked again when a write commits).
    if (!permissionSetOf(key.permissions).allows(route, context.path)) throw permissionRefused(route);
    context.apiRoute = route;

    // 5-7. The handler checks input, ownership and state. A POST with Idempotency-Key may
    //      instead replay its first answer (with the idempotency module).
    const idempotencyKey = context.req.headers['idempotency-key'];
    if (context.method !== 'POST' || typeof idempotencyKey !== 'string' || deps.idempotency === null) return route.handle(context);
    return handleIdempotent(deps.idempotency, route, context, idempotencyKey);
  }

  /**
   * Step 2's 429 for a request over its rate limit, at the door or at its commit: the quota it
   * took given back (a refused request counts against nothing), the window's headers, and
   * Retry-After until the window admits it.
   */
  function rateLimitRefusal(context: KeyContext, decision: RateDecision, meterId?: string, counted?: QuotaTaken): Reply {
    setRateLimitHeaders(context.responseHeaders, decision, deps.clock);
    if (counted !== undefined) {
      counted.quotas.giveBack(meterId!, counted.taken);
      setQuotaHeaders(context.responseHeaders, counted.quota, counted.taken);
    }
    // Analytics counts the 429 against the endpoint that was asked for (one router look-up).
    labelAskedRoute(routes, context);
    const waitSeconds = retryAfterSeconds(decision);
    context.responseHeaders['Retry-After'] = waitSeconds;
    // Answered rather than thrown: a client over its limit may keep hammering, and throwing
    // and unwinding was the largest part of a 429's own cost (profiled). Same body as a thrown one.
    return {
      status: 429,
      body: { error: `Rate limit of ${decision.limit} requests per minute exceeded. Retry after ${waitSeconds} s.`, request_id: context.requestId },
    };
  }

  /**
   * Step 2's 429 for a meter whose quota is used up: Retry-After until the period ends, and the
   * quota in the body (what tells it from the per-minute 429). The rate-limit headers are read
   * without counting.
   */
  function quotaRefusal(context: KeyContext, quotas: KeyQuotas, meterId: string, quota: PlanQuota): Reply | Promise<Reply> {
    return freshThen(context, () => quotaRefusalReply(context, quotas, meterId, quota));
  }

  function quotaRefusalReply(context: KeyContext, quotas: KeyQuotas, meterId: string, quota: PlanQuota): Reply | Promise<Reply> {
    labelAskedRoute(routes, context);
    const counter = quotas.counter(meterId, quota);
    const headers = context.responseHeaders;
    setQuotaHeaders(headers, quota, counter);
    const waitSeconds = Math.max(1, Math.ceil((counter.end - deps.clock.now()) / 1000));
    headers['Retry-After'] = waitSeconds;
    const reply: Reply = {
      status: 429,
      body: {
        error: `The ${quota.period === 'day' ? 'daily' : 'monthly'} quota of ${quota.requests} requests is used up. Retry after ${waitSeconds} s, when the ${quota.period} ends.`,
        quota: { requests: quota.requests, used: counter.used, period: quota.period, resets_at: isoTime(counter.end) },
        request_id: context.requestId,
      },
    };
    const window = deps.keyLimiter.peek(meterId, context.key.rate_limit);
    if (window instanceof Promise) {
      return window.then((peeked) => {
        setRateLimitHeaders(headers, peeked, deps.clock);
        return reply;
      });
    }
    setRateLimitHeaders(headers, window, deps.clock);
    return reply;
  }

  /** A CORS preflight: 204, allowing the path's methods to an allowed origin (and nothing to others, nor to anyone with CORS off). */
  function preflight(context: KeyContext): Reply {
    const match = routes.match('OPTIONS', context.path);
    const methods = match.kind === 'method-not-allowed' ? match.allowed : [];
    const asked = context.req.headers['access-control-request-method'];
    if (typeof asked === 'string') labelAskedRoute(routes, context, asked);
    if (deps.cors !== null) Object.assign(context.responseHeaders, deps.cors.preflightHeaders(context.req.headers.origin, methods));
    return { status: 204 };
  }

  async function handleIdempotent(idempotency: PostIdempotency, route: ApiRoute, context: KeyContext, idempotencyKey: string): Promise<Reply> {
    const outcome = idempotency.claim(context.key.id, idempotencyKey, context.method, context.path, await context.rawBody());
    if ('replay' in outcome) return outcome.replay;
    context.idempotencyClaim = outcome.claim;
    try {
      return await route.handle(context);
    } finally {
      idempotency.release(outcome.claim);
    }
  }

  return (req, res, startedAt) => run(new KeyContext(req, res, services), steps, startedAt);
}

/** True for a CORS preflight: OPTIONS carrying Origin and Access-Control-Request-Method. */
function isPreflight({ method, req: { headers } }: KeyContext): boolean {
  return method === 'OPTIONS' && headers.origin !== undefined && headers['access-control-request-method'] !== undefined;
}

/**
 * The limiter's decision judged again under the key's limit as it is after a catch-up (a limit
 * changed on another instance applies from the next request on): the admission already counted
 * stays counted, and is allowed when the window holds no more than the new limit.
 */
function underCurrentLimit(decision: RateDecision, limit: number): RateDecision {
  if (decision.limit === limit) return decision;
  if (!decision.allowed) return { ...decision, limit, remaining: 0 };
  const used = decision.limit - decision.remaining;
  return { ...decision, limit, allowed: used <= limit, remaining: Math.max(0, limit - used) };
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
