// The advisory locks one commit takes (marketplace_commit, schema.ts), so that of two commits
// that read or write the same thing the later one sees the earlier one's rows, and commits that
// touch different records never wait for each other:
//
//   a record written            its key exclusive, its collection shared
//   a record read               its key shared, its collection shared
//   a whole collection read     the collection exclusive (a uniqueness check waits for every
//                               commit writing into the collection, and they for it)
//
// A batch that touches more than RECORDS_BEFORE_COLLECTION records of one collection (a sweep,
// an erasure) locks the collection exclusive instead, so one commit never needs thousands of
// locks. Keys are 64-bit FNV-1a hashes of "c/<collection>" and "r/<collection>/<id>": two names
// that share a hash only make their commits take turns. They are taken in ascending order, the
// same in every commit, so no two commits ever wait for each other in a circle.

import type { LogEntry } from '../../store/log.ts';

const RECORDS_BEFORE_COLLECTION = 64;

export interface CommitLocks {
  /** Signed 64-bit keys as decimal strings, ascending. */
  keys: string[];
  /** Per key: exclusive (true) or shared. */
  exclusive: boolean[];
}

export function commitLocks(entries: readonly LogEntry[]): CommitLocks {
  const recordModes = new Map<string, Map<string, boolean>>();
  const collectionModes = new Map<string, boolean>();
  const touch = (collection: string, id: string, exclusive: boolean) => {
    let records = recordModes.get(collection);
    if (records === undefined) recordModes.set(collection, (records = new Map()));
    records.set(id, exclusive || (records.get(id) ?? false));
    if (!collectionModes.has(collection)) collectionModes.set(collection, false);
  };
  for (const entry of entries) {
    for (const op of entry.ops) touch(op.collection, op.id, true);
    for (const read of entry.reads) {
      if (read.id === null) collectionModes.set(read.collection, true);
      else touch(read.collection, read.id, false);
    }
  }
  const modes = new Map<bigint, boolean>();
  const want = (key: bigint, exclusive: boolean) => modes.set(key, exclusive || (modes.get(key) ?? false));
  for (const [collection, records] of recordModes) {
    if (records.size > RECORDS_BEFORE_COLLECTION) collectionModes.set(collection, true);
  }
  for (const [collection, exclusive] of collectionModes) {
    want(lockKey(`c/${collection}`), exclusive);
    if (exclusive) continue; // the collection's lock covers its records
    for (const [id, recordExclusive] of recordModes.get(collection) ?? []) want(lockKey(`r/${collection}/${id}`), recordExclusive);
  }
  const sorted = [...modes].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return { keys: sorted.map(([key]) => key.toString()), exclusive: sorted.map(([, exclusive]) => exclusive) };
}

// FNV-1a's 64-bit offset basis and prime (2^40 + 0x1b3), the hash kept as two 32-bit halves:
// with Numbers each byte costs a few multiplications, where BigInt arithmetic cost microseconds
// per name, about ten names per write.
const OFFSET_HIGH = 0xcbf29ce4;
const OFFSET_LOW = 0x84222325;
const PRIME_LOW = 0x1b3;
const TWO_TO_32 = 2 ** 32;

/** FNV-1a of the name's UTF-8 bytes, as a signed 64-bit number (PostgreSQL's bigint). */
export function lockKey(name: string): bigint {
  let ascii = true;
  for (let i = 0; i < name.length && ascii; i += 1) ascii = name.charCodeAt(i) < 0x80;
  // An ASCII name's characters are its UTF-8 bytes (the names are ids and collection names).
  const utf8 = ascii ? null : Buffer.from(name, 'utf8');
  const length = utf8 === null ? name.length : utf8.length;
  let high = OFFSET_HIGH;
  let low = OFFSET_LOW;
  for (let i = 0; i < length; i += 1) {
    low = (low ^ (utf8 === null ? name.charCodeAt(i) : utf8[i]!)) >>> 0;
    // (high·2^32 + low) · (2^40 + 0x1b3) mod 2^64; low·0x1b3 is exact in a double (< 2^41).
    const lowProduct = low * PRIME_LOW;
    high = (Math.imul(high, PRIME_LOW) + Math.floor(lowProduct / TWO_TO_32) + (low << 8)) >>> 0;
    low = lowProduct >>> 0;
  }
  return BigInt.asIntN(64, (BigInt(high) << 32n) | BigInt(low));
}
