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

const FNV_OFFSET = 0xcbf29ce484222325n;
const FNV_PRIME = 0x100000001b3n;
const MASK = (1n << 64n) - 1n;

/** FNV-1a of the name's UTF-8 bytes, as a signed 64-bit number (PostgreSQL's bigint). */
export function lockKey(name: string): bigint {
  let hash = FNV_OFFSET;
  for (const byte of Buffer.from(name, 'utf8')) hash = ((hash ^ BigInt(byte)) * FNV_PRIME) & MASK;
  return BigInt.asIntN(64, hash);
}
