// The limits of the gate (per key, failed authentication per address, failed portal sign-ins
// per account) kept in one Redis, for many instances. app.ts imports this file only when REDIS_URL is set.

import type { RateLimiter } from '../../limits/rate-limiter.ts';
import { ACCOUNT_FAILURE_WINDOW_MS } from '../../portal/sign-in-limits.ts';
import { RedisSlidingWindowLimiter } from './redis-limiter.ts';
import { RespClient } from './resp-client.ts';

export interface SharedLimiters {
  keyLimiter: RateLimiter;
  failedAuthLimiter: RateLimiter;
  signInLimiter: RateLimiter;
  close(): void;
}

export function openRedisLimiters(url: string, monotonicNow: () => number): SharedLimiters {
  const client = new RespClient(url);
  return {
    keyLimiter: new RedisSlidingWindowLimiter({ client, prefix: 'marketplace:limit:key:', monotonicNow }),
    failedAuthLimiter: new RedisSlidingWindowLimiter({ client, prefix: 'marketplace:limit:auth:', monotonicNow }),
    signInLimiter: new RedisSlidingWindowLimiter({ client, prefix: 'marketplace:limit:signin:', windowMs: ACCOUNT_FAILURE_WINDOW_MS, monotonicNow }),
    close: () => client.close(),
  };
}
