// The limits of the gate (per key, failed authentication per address, failed portal sign-ins
// per account) and of webhook redeliveries per user, kept in one Redis, for many instances, over one connection. Imported only when
// REDIS_URL is set.

import type { RateLimiter } from '../../limits/rate-limiter.ts';
import { ACCOUNT_FAILURE_WINDOW_MS } from '../../portal/sign-in-limits.ts';
import { REDELIVERY_WINDOW_MS } from '../../webhooks/redelivery.ts';
import { RedisConnection, type RedisConnectionOptions } from './redis-connection.ts';
import { RedisSlidingWindowLimiter } from './redis-limiter.ts';

export interface SharedLimiters {
  keyLimiter: RateLimiter;
  failedAuthLimiter: RateLimiter;
  signInLimiter: RateLimiter;
  redeliveryLimiter: RateLimiter;
  /** Where the windows are, in words: "Redis at host:6379 (TLS)". */
  description: string;
  close(): void;
}

export async function openRedisLimiters(options: RedisConnectionOptions & { monotonicNow: () => number }): Promise<SharedLimiters> {
  const connection = await RedisConnection.open(options);
  const { monotonicNow } = options;
  return {
    keyLimiter: new RedisSlidingWindowLimiter({ connection, prefix: 'marketplace:limit:key:', monotonicNow }),
    failedAuthLimiter: new RedisSlidingWindowLimiter({ connection, prefix: 'marketplace:limit:auth:', monotonicNow }),
    signInLimiter: new RedisSlidingWindowLimiter({ connection, prefix: 'marketplace:limit:signin:', windowMs: ACCOUNT_FAILURE_WINDOW_MS, monotonicNow }),
    redeliveryLimiter: new RedisSlidingWindowLimiter({ connection, prefix: 'marketplace:limit:redeliver:', windowMs: REDELIVERY_WINDOW_MS, monotonicNow }),
    description: `Redis at ${connection.describe()}`,
    close: () => connection.close(),
  };
}
