// The exact sliding-window limit of src/limits/sliding-window.ts, kept in Redis so that every
// instance behind a load balancer counts against the same window. Each id's window is a sorted
// set of admission times; one Lua script (run with EVALSHA, atomic on the Redis server) drops
// the expired times, decides, and records an admission, using the Redis server's clock so the
// instances' clocks never disagree. Refused requests are not recorded, as in-process.
// If Redis cannot be reached or does not answer within the connection's bound, the limiter
// throws LimiterUnavailableError: limits fail closed (503). Such a request must not count
// either, even if Redis runs the script later (a paused Redis resumes and reads what waited on
// its socket): each call carries a deadline on Redis's clock, past which the script records
// nothing.

import { createHash } from 'node:crypto';
import { LimiterUnavailableError, type RateLimiter } from '../../limits/rate-limiter.ts';
import type { RateDecision } from '../../limits/sliding-window.ts';
import type { RedisConnection } from './redis-connection.ts';
import { watermarkFrom } from './redis-watermark.ts';

// KEYS[1] the window, KEYS[2] (when given) the commit watermark, answered as a fourth element
// (src/backends/redis/redis-watermark.ts: the request learns it in the same round trip); ARGV: limit, window in ms, 1 to record an admission (0 to peek), the
// deadline in microseconds on Redis's clock (0: none).
// Returns {allowed 0/1, remaining, microseconds until one more request is admitted}, or {-1}
// when the deadline has passed (the caller has already answered 503; nothing is recorded).
// Members are "<time>:<count before>", unique even for two admissions in one microsecond.
// Numbers go to Redis through string.format: Lua would print a microsecond time in 14 digits.
const SLIDING_WINDOW_SCRIPT = `
local function answer(allowed, remaining, reset)
  if KEYS[2] then return {allowed, remaining, reset, redis.call('HGETALL', KEYS[2])} end
  return {allowed, remaining, reset}
end
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
local deadline = tonumber(ARGV[4])
if deadline > 0 and now > deadline then return {-1, 0, 0} end
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2]) * 1000
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', string.format('%.0f', now - window))
local count = redis.call('ZCARD', KEYS[1])
if count >= limit then
  local freeing = redis.call('ZRANGE', KEYS[1], count - limit, count - limit, 'WITHSCORES')
  return answer(0, 0, tonumber(freeing[2]) + window - now)
end
if ARGV[3] == '1' then
  redis.call('ZADD', KEYS[1], string.format('%.0f', now), clock[1] .. '.' .. clock[2] .. ':' .. count)
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  count = count + 1
end
if count == 0 then return answer(1, limit, window) end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return answer(1, limit - count, tonumber(oldest[2]) + window - now)
`;
const SCRIPT_SHA = createHash('sha1').update(SLIDING_WINDOW_SCRIPT).digest('hex');

export interface RedisLimiterOptions {
  connection: RedisConnection;
  /** Prefix of this limiter's keys in Redis, e.g. "marketplace:limit:key:". */
  prefix: string;
  windowMs?: number;
  monotonicNow: () => number;
  /** The commit watermark's key, read with each decision (many instances), or undefined. */
  watermarkKey?: string;
}

export class RedisSlidingWindowLimiter implements RateLimiter {
  private readonly connection: RedisConnection;
  private readonly prefix: string;
  private readonly windowMs: number;
  private readonly monotonicNow: () => number;
  private readonly keysAfterWindow: string[];

  constructor(options: RedisLimiterOptions) {
    this.connection = options.connection;
    this.prefix = options.prefix;
    this.windowMs = options.windowMs ?? 60_000;
    this.monotonicNow = options.monotonicNow;
    this.keysAfterWindow = options.watermarkKey === undefined ? [] : [options.watermarkKey];
  }

  hit(id: string, limit: number): Promise<RateDecision> {
    return this.decide(id, limit, true);
  }

  peek(id: string, limit: number): Promise<RateDecision> {
    return this.decide(id, limit, false);
  }

  private async decide(id: string, limit: number, record: boolean): Promise<RateDecision> {
    const deadline = this.connection.deadlineOnRedisClock();
    const args = [String(limit), String(this.windowMs), record ? '1' : '0', deadline === null ? '0' : deadline.toFixed(0)];
    let answer: unknown;
    try {
      answer = await this.connection.evalScript(SLIDING_WINDOW_SCRIPT, SCRIPT_SHA, [this.prefix + id, ...this.keysAfterWindow], args);
    } catch (error) {
      throw new LimiterUnavailableError(`rate limits cannot be checked: ${(error as Error).message}`);
    }
    const [allowed, remaining, resetInMicros, watermark] = answer as [number, number, number, unknown?];
    if (allowed === -1) throw new LimiterUnavailableError('rate limits cannot be checked: Redis answered too late');
    // Redis's clock decided; only the distance to the reset travels, measured from our own now.
    const decidedAt = this.monotonicNow();
    const decision: RateDecision = { allowed: allowed === 1, limit, remaining, resetAt: decidedAt + resetInMicros / 1000, decidedAt };
    if (watermark !== undefined) decision.watermark = watermarkFrom(watermark);
    return decision;
  }
}
