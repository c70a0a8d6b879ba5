// The reservations of src/limits/failure-reservations.ts kept in Redis, so that every instance
// counts an account's and an address's attempts in the same places. One Lua script (atomic on
// the Redis server) checks every failure window and every in-flight count, then records the
// attempt in all of them or in none. The failure windows are the very sorted sets the
// sliding-window limiter keeps (redis-limiter.ts): the address's is shared with failed API keys
// and operator tokens. In-flight places are sorted sets too, each entry leased for
// IN_FLIGHT_LEASE_MS, so that an instance that dies mid-check frees its places on its own.
// Giving places back is best effort: if Redis cannot be reached then, the failure places stay
// until their window passes and the in-flight ones until their lease ends (never fewer limits).

import { createHash, randomUUID } from 'node:crypto';
import { IN_FLIGHT_PER_PLACE, IN_FLIGHT_RETRY_MS, type FailurePlace, type FailureReservations, type FailureWindow, type HeldPlaces, type ReserveOutcome } from '../../limits/failure-reservations.ts';
import { LimiterUnavailableError } from '../../limits/rate-limiter.ts';
import type { RedisConnection } from './redis-connection.ts';

/** Longer than any check takes (the scrypt queue is bounded); only an instance that died leaves a place this long. */
const IN_FLIGHT_LEASE_MS = 60_000;

// KEYS: per place i, KEYS[2i-1] its failure window and KEYS[2i] its in-flight set.
// ARGV: token, in-flight cap, lease ms, deadline (µs on Redis's clock, 0: none), then per place
// i its limit (ARGV[3+2i]) and window ms (ARGV[4+2i]).
// Returns {1, 0, 0} granted; {0, i, µs until room} window i full; {2, i, 0} place i has the cap
// in flight; {-1, 0, 0} past the deadline (the caller already answered 503; nothing recorded).
const RESERVE_SCRIPT = `
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
local deadline = tonumber(ARGV[4])
if deadline > 0 and now > deadline then return {-1, 0, 0} end
local places = #KEYS / 2
local cap = tonumber(ARGV[2])
local lease = tonumber(ARGV[3]) * 1000
for i = 1, places do
  local limit = tonumber(ARGV[3 + 2 * i])
  local span = tonumber(ARGV[4 + 2 * i]) * 1000
  redis.call('ZREMRANGEBYSCORE', KEYS[2 * i - 1], '-inf', string.format('%.0f', now - span))
  local count = redis.call('ZCARD', KEYS[2 * i - 1])
  if count >= limit then
    local freeing = redis.call('ZRANGE', KEYS[2 * i - 1], count - limit, count - limit, 'WITHSCORES')
    return {0, i, tonumber(freeing[2]) + span - now}
  end
end
for i = 1, places do
  redis.call('ZREMRANGEBYSCORE', KEYS[2 * i], '-inf', string.format('%.0f', now - lease))
  if redis.call('ZCARD', KEYS[2 * i]) >= cap then return {2, i, 0} end
end
for i = 1, places do
  redis.call('ZADD', KEYS[2 * i - 1], string.format('%.0f', now), ARGV[1])
  redis.call('PEXPIRE', KEYS[2 * i - 1], ARGV[4 + 2 * i])
  redis.call('ZADD', KEYS[2 * i], string.format('%.0f', now), ARGV[1])
  redis.call('PEXPIRE', KEYS[2 * i], ARGV[3])
end
return {1, 0, 0}
`;
const RESERVE_SHA = createHash('sha1').update(RESERVE_SCRIPT).digest('hex');

// KEYS as above; ARGV: token, 1 to leave the failure windows too (given back) or 0 (kept as a failure).
const RELEASE_SCRIPT = `
for i = 1, #KEYS / 2 do
  if ARGV[2] == '1' then redis.call('ZREM', KEYS[2 * i - 1], ARGV[1]) end
  redis.call('ZREM', KEYS[2 * i], ARGV[1])
end
return 1
`;
const RELEASE_SHA = createHash('sha1').update(RELEASE_SCRIPT).digest('hex');

export interface RedisReservationsOptions {
  connection: RedisConnection;
  /** Each window's key prefix (the sliding-window limiter's) and length in ms. */
  windows: Record<FailureWindow, { prefix: string; windowMs: number }>;
}

export class RedisFailureReservations implements FailureReservations {
  private readonly connection: RedisConnection;
  private readonly windows: Record<FailureWindow, { prefix: string; windowMs: number }>;
  /** Tokens not yet released, so that a second release of one reservation does nothing. */
  private readonly open = new Set<string>();

  constructor(options: RedisReservationsOptions) {
    this.connection = options.connection;
    this.windows = options.windows;
  }

  async reserve(places: readonly FailurePlace[]): Promise<ReserveOutcome> {
    const token = randomUUID();
    const deadline = this.connection.deadlineOnRedisClock();
    const args = [token, String(IN_FLIGHT_PER_PLACE), String(IN_FLIGHT_LEASE_MS), deadline === null ? '0' : deadline.toFixed(0)];
    for (const place of places) args.push(String(place.limit), String(this.windows[place.window].windowMs));
    let answer: unknown;
    try {
      answer = await this.connection.evalScript(RESERVE_SCRIPT, RESERVE_SHA, this.keysOf(places), args);
    } catch (error) {
      throw new LimiterUnavailableError(`sign-in limits cannot be checked: ${(error as Error).message}`);
    }
    const [outcome, index, waitMicros] = answer as [number, number, number];
    if (outcome === -1) throw new LimiterUnavailableError('sign-in limits cannot be checked: Redis answered too late');
    if (outcome === 1) {
      this.open.add(token);
      return { granted: true, held: { places, token } };
    }
    const place = places[index - 1]!;
    if (outcome === 2) return { granted: false, place, reason: 'in-flight', waitMs: IN_FLIGHT_RETRY_MS };
    return { granted: false, place, reason: 'failures', waitMs: waitMicros / 1000 };
  }

  giveBack(held: HeldPlaces): Promise<void> {
    return this.release(held, true);
  }

  keep(held: HeldPlaces): Promise<void> {
    return this.release(held, false);
  }

  private async release(held: HeldPlaces, fromWindows: boolean): Promise<void> {
    if (!this.open.delete(held.token)) return;
    try {
      await this.connection.evalScript(RELEASE_SCRIPT, RELEASE_SHA, this.keysOf(held.places), [held.token, fromWindows ? '1' : '0']);
    } catch {
      // Best effort (see the header): the places end with their window or lease.
    }
  }

  private keysOf(places: readonly FailurePlace[]): string[] {
    return places.flatMap((place) => [this.windows[place.window].prefix + place.id, `marketplace:in-flight:${place.window}:${place.id}`]);
  }
}
