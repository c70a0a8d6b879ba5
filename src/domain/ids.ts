// Opaque ids with a type prefix (lst_, usr_, key_, wh_, evt_, dlv_, aud_, prq_): 20 random base62
// characters after it, so ids neither collide nor reveal counts or times.

import { randomBytes } from 'node:crypto';
import { randomBase62 } from '../auth/keys.ts';

/**
 * Ids draw their random bytes from a pool refilled 4 KiB at a time (about a hundred ids):
 * one call to the system's generator per id was 5% of a listing create's CPU (profiled).
 * API keys, which are secrets, still take theirs straight from the generator (auth/keys.ts).
 */
const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let used = 0;

function pooledRandomBytes(size: number): Buffer {
  if (used + size > pool.length) {
    pool = randomBytes(Math.max(POOL_BYTES, size));
    used = 0;
  }
  used += size;
  return pool.subarray(used - size, used);
}

export type IdPrefix = 'lst' | 'usr' | 'key' | 'wh' | 'evt' | 'dlv' | 'aud' | 'prq';

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBase62(20, pooledRandomBytes)}`;
}
