// The rate-limit headers every authenticated /v1 answer carries (X-RateLimit-Limit, -Remaining,
// -Reset), a plan quota's X-Quota-* headers, and the whole seconds a refused client is told to wait (Retry-After).

import type { Clock } from '../clock.ts';
import type { PlanQuota } from '../domain/records.ts';
import type { RateDecision } from '../limits/sliding-window.ts';
import type { Headers } from './respond.ts';

export function setRateLimitHeaders(headers: Headers, decision: RateDecision, clock: Clock): void {
  headers['X-RateLimit-Limit'] = decision.limit;
  headers['X-RateLimit-Remaining'] = decision.remaining;
  headers['X-RateLimit-Reset'] = resetUnixSeconds(decision, clock);
}

/**
 * The limiter's reset time, which is on the monotonic clock, as Unix seconds, rounded up so a
 * client waiting until then is admitted.
 */
export function resetUnixSeconds(decision: RateDecision, clock: Clock): number {
  return Math.ceil((clock.now() + (decision.resetAt - decision.decidedAt)) / 1000);
}

/** Whole seconds until the window admits again; at least 1, so "Retry-After: 0" never invites a hot loop. */
export function retryAfterSeconds(decision: RateDecision): number {
  return Math.max(1, Math.ceil((decision.resetAt - decision.decidedAt) / 1000));
}

/** X-Quota-Limit, -Remaining and -Reset (Unix seconds of the period's end) for a key whose plan has a quota. */
export function setQuotaHeaders(headers: Headers, quota: PlanQuota, counter: { used: number; end: number }): void {
  headers['X-Quota-Limit'] = quota.requests;
  headers['X-Quota-Remaining'] = Math.max(0, quota.requests - counter.used);
  headers['X-Quota-Reset'] = counter.end / 1000;
}
