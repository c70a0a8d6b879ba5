// The limits of the gate (per key, failed authentication per address, failed portal sign-ins
// per account), the sign-in reservations in those windows, and webhook redeliveries per user,
// kept in one Redis, for many instances, over one connection. Imported only when REDIS_URL is set.

import { ACCOUNT_FAILURE_WINDOW_MS, type FailureReservations } from '../../limits/failure-reservations.ts';
import type { RateLimiter } from '../../limits/rate-limiter.ts';
import { REDELIVERY_WINDOW_MS } from '../../webhooks/redelivery.ts';
import { RedisConnection, type RedisConnectionOptions } from './redis-connection.ts';
import { RedisSlidingWindowLimiter } from './redis-limiter.ts';
import { RedisFailureReservations } from './redis-reservations.ts';
import { RedisQuotaCounts } from './redis-quota-counts.ts';
import { RedisWatermark } from './redis-watermark.ts';
import type { Watermark } from '../../store/instance-sync.ts';
import type { SharedQuotaCounts } from '../../analytics/quota-counters.ts';

const FAILED_AUTH_PREFIX = 'marketplace:limit:auth:';
const SIGN_IN_PREFIX = 'marketplace:limit:signin:';
const FAILED_AUTH_WINDOW_MS = 60_000;

export interface SharedLimiters {
  keyLimiter: RateLimiter;
  failedAuthLimiter: RateLimiter;
  /** Places taken before a secret is checked: in failed sign-ins per account and in failedAuthLimiter's window. */
  failureReservations: FailureReservations;
  redeliveryLimiter: RateLimiter;
  /** Plan quota counts, one number per user, plan and period. */
  quotaCounts: SharedQuotaCounts;
  /** The commit watermark on the same connection (read inside keyLimiter's decisions, when `watermarkKey` was given); `truth` reads the database's numbers. */
  watermark(truth: () => Promise<Watermark>): RedisWatermark;
  /** Where the windows are, in words: "Redis at host:6379 (TLS)". */
  description: string;
  close(): void;
}

export async function openRedisLimiters(options: RedisConnectionOptions & { monotonicNow: () => number; watermarkKey?: string }): Promise<SharedLimiters> {
  const connection = await RedisConnection.open(options);
  const { monotonicNow } = options;
  return {
    keyLimiter: new RedisSlidingWindowLimiter({ connection, prefix: 'marketplace:limit:key:', monotonicNow, watermarkKey: options.watermarkKey }),
    failedAuthLimiter: new RedisSlidingWindowLimiter({ connection, prefix: FAILED_AUTH_PREFIX, windowMs: FAILED_AUTH_WINDOW_MS, monotonicNow }),
    failureReservations: new RedisFailureReservations({
      connection,
      windows: { account: { prefix: SIGN_IN_PREFIX, windowMs: ACCOUNT_FAILURE_WINDOW_MS }, address: { prefix: FAILED_AUTH_PREFIX, windowMs: FAILED_AUTH_WINDOW_MS } },
    }),
    redeliveryLimiter: new RedisSlidingWindowLimiter({ connection, prefix: 'marketplace:limit:redeliver:', windowMs: REDELIVERY_WINDOW_MS, monotonicNow }),
    quotaCounts: new RedisQuotaCounts(connection),
    watermark: (truth) => new RedisWatermark(connection, options.watermarkKey ?? 'marketplace:watermark', truth),
    description: `Redis at ${connection.describe()}`,
    close: () => connection.close(),
  };
}
