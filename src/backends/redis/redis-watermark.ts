// The commit watermark in Redis: for each writer's slot of the PostgreSQL log, the sequence of
// its last committed write (src/store/instance-sync.ts). A writer raises its slot's number after
// each commit and only then answers; every request reads the numbers (inside the rate limiter's
// script on /v1, so it costs no round trip there) and catches up when its instance has applied
// less. One hash, one field per slot; raised with a script that never lowers a field.
//
// Never backwards. A Redis that restarts from an older state (a snapshot, a replica that had not
// received the latest raises) would hand out numbers below writes already acknowledged, and an
// instance behind them would answer from the past. So each new connection to Redis makes the
// watermark untrusted until this instance has repaired it: read every slot's true last
// sequence from PostgreSQL (where it was committed before any raise) and raise Redis to it. A
// restart closes every connection, so every instance repairs before it trusts Redis again;
// meanwhile its requests wait for the repair (or read PostgreSQL's numbers directly).

import { createHash } from 'node:crypto';
import type { Watermark } from '../../store/instance-sync.ts';
import type { RedisConnection } from './redis-connection.ts';

/** The watermark's key for the store with this id (several stores may share one Redis). */
export function watermarkKey(storeId: string): string {
  return `marketplace:watermark:${storeId}`;
}

// KEYS[1] the hash; ARGV pairs of slot and sequence. A field only ever grows.
const RAISE_SCRIPT = `
for i = 1, #ARGV, 2 do
  local current = tonumber(redis.call('HGET', KEYS[1], ARGV[i]) or '0')
  if tonumber(ARGV[i + 1]) > current then redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
end
return 1
`;
const RAISE_SHA = createHash('sha1').update(RAISE_SCRIPT).digest('hex');

/** HGETALL's answer (a flat list or, with RESP3, an object) as a watermark. */
export function watermarkFrom(reply: unknown): Map<string, number> {
  const watermark = new Map<string, number>();
  if (Array.isArray(reply)) {
    for (let index = 0; index + 1 < reply.length; index += 2) watermark.set(String(reply[index]), Number(reply[index + 1]));
  } else if (reply !== null && typeof reply === 'object') {
    for (const [slot, seq] of Object.entries(reply)) watermark.set(slot, Number(seq));
  }
  return watermark;
}

export class RedisWatermark {
  private readonly connection: RedisConnection;
  private readonly key: string;
  /** Every slot's true last sequence, read from PostgreSQL. */
  private readonly truth: () => Promise<Watermark>;
  /** Counts the connections made; the watermark is trusted once repaired on the current one. */
  private connections = 0;
  private repairedOn = -1;
  private repairing: Promise<void> | null = null;

  constructor(connection: RedisConnection, key: string, truth: () => Promise<Watermark>) {
    this.connection = connection;
    this.key = key;
    this.truth = truth;
    connection.onConnected(() => {
      this.connections += 1;
    });
  }

  /** Raises one slot's number (after its commit). */
  async raise(slot: string, seq: number): Promise<void> {
    await this.connection.evalScript(RAISE_SCRIPT, RAISE_SHA, [this.key], [slot, String(seq)]);
  }

  /** Drops the fields of slots the database no longer has (instances gone for an hour). */
  async forget(slots: readonly string[]): Promise<void> {
    await this.connection.command(['HDEL', this.key, ...slots]);
  }

  /** No connection was made since the last repair: what Redis says now is at least every acknowledged write. */
  trusted(): boolean {
    return this.repairedOn === this.connections;
  }

  /** The watermark now, repairing it first when the connection is new. */
  async read(): Promise<Watermark> {
    if (!this.trusted()) await this.repair();
    return watermarkFrom(await this.connection.command(['HGETALL', this.key]));
  }

  /** Raises Redis to PostgreSQL's numbers; shared by every request waiting meanwhile. */
  private repair(): Promise<void> {
    if (this.repairing !== null) return this.repairing;
    const connection = this.connections;
    this.repairing = (async () => {
      const truth = await this.truth();
      const pairs = [...truth].flatMap(([slot, seq]) => [slot, String(seq)]);
      if (pairs.length > 0) await this.connection.evalScript(RAISE_SCRIPT, RAISE_SHA, [this.key], pairs);
      // A connection made meanwhile needs its own repair.
      if (this.connections === connection) this.repairedOn = connection;
    })().finally(() => {
      this.repairing = null;
    });
    return this.repairing;
  }
}
