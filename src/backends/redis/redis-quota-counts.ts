// Plan quota counts kept in Redis, so that every instance counts against the same number: one
// Redis string per meter and period ("marketplace:quota:<user id>/<plan id>:<period start ms>"),
// expiring a day after the period ends. Taking a request is one Lua script (atomic on the Redis
// server, like the sliding-window limiter's): N requests at once against R remaining get exactly
// R admissions, whichever instances they reach. A failure to reach Redis throws
// LimiterUnavailableError (503), as the limits do; a call past its deadline records nothing.

import { createHash } from 'node:crypto';
import { LimiterUnavailableError } from '../../limits/rate-limiter.ts';
import type { SharedQuotaCounts } from '../../analytics/quota-counters.ts';
import type { RedisConnection } from './redis-connection.ts';

// KEYS[1] the count; ARGV: limit, expiry (Unix ms), deadline in microseconds on Redis's clock (0: none).
// Returns {admitted 0/1, used after}, or {-1, 0} past the deadline (nothing recorded).
const TAKE_SCRIPT = `
local deadline = tonumber(ARGV[3])
if deadline > 0 then
  local clock = redis.call('TIME')
  if tonumber(clock[1]) * 1000000 + tonumber(clock[2]) > deadline then return {-1, 0} end
end
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
if used >= tonumber(ARGV[1]) then return {0, used} end
used = redis.call('INCR', KEYS[1])
redis.call('PEXPIREAT', KEYS[1], ARGV[2])
return {1, used}
`;
const TAKE_SHA = createHash('sha1').update(TAKE_SCRIPT).digest('hex');
const PREFIX = 'marketplace:quota:';
const KEPT_AFTER_END_MS = 24 * 60 * 60 * 1000;

export class RedisQuotaCounts implements SharedQuotaCounts {
  private readonly connection: RedisConnection;

  constructor(connection: RedisConnection) {
    this.connection = connection;
  }

  async take(meterId: string, start: number, end: number, limit: number): Promise<{ admitted: boolean; used: number }> {
    const deadline = this.connection.deadlineOnRedisClock();
    const args = [String(limit), String(end + KEPT_AFTER_END_MS), deadline === null ? '0' : deadline.toFixed(0)];
    let answer: unknown;
    try {
      answer = await this.connection.evalScript(TAKE_SCRIPT, TAKE_SHA, [keyOf(meterId, start)], args);
    } catch (error) {
      throw new LimiterUnavailableError(`quotas cannot be checked: ${(error as Error).message}`);
    }
    const [admitted, used] = answer as [number, number];
    if (admitted === -1) throw new LimiterUnavailableError('quotas cannot be checked: Redis answered too late');
    return { admitted: admitted === 1, used };
  }

  async giveBack(meterId: string, start: number): Promise<void> {
    await this.connection.command(['DECR', keyOf(meterId, start)]);
  }

  async set(meterId: string, start: number, end: number, used: number): Promise<void> {
    await this.connection.command(['SET', keyOf(meterId, start), String(used), 'PXAT', String(end + KEPT_AFTER_END_MS)]);
  }

  async read(meterId: string, start: number): Promise<number> {
    const value = await this.connection.command(['GET', keyOf(meterId, start)]);
    return value === null || value === undefined ? 0 : Number(value);
  }
}

function keyOf(meterId: string, start: number): string {
  return `${PREFIX}${meterId}:${start}`;
}
