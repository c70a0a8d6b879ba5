// Per-user daily limits on what a user can pile up from the portal: at most 50 keys created and
// 10 plan requests in any 24 hours (revoking a key or deciding a request gives no place back).
// Counted from the records themselves (their created_at) inside the write that would add one, so
// writes racing on one instance or on several sharing a database are decided one after another
// and never pass the limit, with no counter of its own to keep.

import { HttpError } from '../../domain/errors.ts';

export const DAY_MS = 24 * 60 * 60 * 1000;
export const KEYS_CREATED_PER_DAY = 50;
export const PLAN_REQUESTS_PER_DAY = 10;

/**
 * 429 with Retry-After (when the oldest of them leaves the last 24 hours) if `createdAts` (ISO
 * times of what the user already made) hold `limit` or more within the last 24 hours.
 */
export function assertWithinDailyLimit(createdAts: Iterable<string>, limit: number, nowMs: number, what: string): void {
  const since = nowMs - DAY_MS;
  const recent: number[] = [];
  for (const createdAt of createdAts) {
    const at = Date.parse(createdAt);
    if (at > since) recent.push(at);
  }
  if (recent.length < limit) return;
  recent.sort((a, b) => a - b);
  // The place that frees first: the (count - limit + 1)th oldest leaving the window.
  const freesAt = recent[recent.length - limit]! + DAY_MS;
  const waitSeconds = Math.max(1, Math.ceil((freesAt - nowMs) / 1000));
  throw new HttpError(429, `You made ${limit} ${what} in the last 24 hours, the most allowed. Wait ${waitSeconds} s before making another.`, { headers: { 'Retry-After': String(waitSeconds) } });
}
