// `marketplace migrate`: copies every record of a store from a data dir into an empty PostgreSQL
// database, or from a database into an empty data dir, then reads both sides back and compares
// them record by record. Records are copied as they are (ids, hashed keys, timestamps, usage
// counters, audit entries, pending deliveries), so keys that worked before work after.
//
// Safety: nothing is written until every check has passed — the source exists and no server
// holds it (the data dir's LOCK; for a database, no instance following its changes), and the
// destination is empty. The copy is all or nothing: one transaction in PostgreSQL, one
// crash-safe rewrite of the log (temp file, fsync, rename) in a data dir. The data dir's lock is
// held from the first read to the last check, so no server starts on it meanwhile.
//
// The PostgreSQL driver is imported only when one side is a database.

import { existsSync, readdirSync, statSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { resolve } from 'node:path';
import { OPERATOR_TOKEN_FILE_NAME } from '../auth/operator-token-source.ts';
import { FileLog } from '../store/file-log.ts';
import { encodeWrite, headerLine, LOG_FILE_NAME, type StoredRecord, type WriteOp } from '../store/format.ts';
import { MAX_LINE_BYTES } from '../store/lines.ts';
import { DataDirLockedError, LOCK_FILE_NAME } from '../store/lock.ts';
import type { Log } from '../store/log.ts';
import type { PostgresLog } from './postgres/postgres-log.ts';

/** Where a store lives: a data dir, or a PostgreSQL database. */
export type StoreLocation = { kind: 'dir'; path: string } | { kind: 'postgres'; url: string };

/** The migration would be unsafe or makes no sense (bad arguments, busy source, full destination): nothing was changed. */
export class MigrationRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MigrationRefusedError';
  }
}

export interface CollectionCounts {
  source: number;
  destination: number;
  mismatches: number;
}

export interface Mismatch {
  collection: string;
  id: string;
  problem: 'missing from the destination' | 'only in the destination' | 'different';
}

export interface Comparison {
  /** True when both sides hold exactly the same records. */
  identical: boolean;
  records: { source: number; destination: number };
  collections: Record<string, CollectionCounts>;
  mismatch_count: number;
  /** The first mismatches found (at most MISMATCHES_SHOWN). */
  mismatches: Mismatch[];
}

export interface MigrationSummary extends Comparison {
  from: string;
  to: string;
}

/** Every live record of a store: collection → id → record. */
type Records = Map<string, Map<string, StoredRecord>>;

const MISMATCHES_SHOWN = 50;

/**
 * Reads `--from`/`--to` text: a postgres:// or postgresql:// URL is a database, anything else a
 * data dir (relative to `cwd`).
 * @example parseLocation('./data', process.cwd()) // { kind: 'dir', path: '/srv/app/data' }
 */
export function parseLocation(text: string, cwd: string): StoreLocation {
  if (/^postgres(ql)?:\/\//i.test(text)) return { kind: 'postgres', url: text };
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) throw new MigrationRefusedError(`${redact(text)} is neither a data dir nor a postgres:// URL`);
  if (text === ':memory:') throw new MigrationRefusedError('an in-memory store keeps nothing to migrate');
  return { kind: 'dir', path: resolve(cwd, text) };
}

/** The location for messages and summaries: a URL's password is never shown. */
export function describeLocation(location: StoreLocation): string {
  return location.kind === 'dir' ? location.path : redact(location.url);
}

/**
 * Copies every record from `from` into the empty `to`, then compares both record by record.
 * Throws MigrationRefusedError (nothing changed) when the copy would be unsafe. A summary with
 * `identical: false` means the destination does not hold what the source holds.
 * @example
 * const summary = await migrateStore({ kind: 'dir', path: '/srv/data' }, { kind: 'postgres', url }, console.warn);
 */
export async function migrateStore(from: StoreLocation, to: StoreLocation, warn: (message: string) => void): Promise<MigrationSummary> {
  if (from.kind === to.kind) {
    throw new MigrationRefusedError(
      from.kind === 'dir' ? 'both sides are data dirs: one of --from and --to must be a postgres:// URL' : 'both sides are databases: one of --from and --to must be a data dir',
    );
  }
  const source = await openSource(from, warn);
  try {
    const records = await readRecords(source);
    if (to.kind === 'dir') await copyIntoDir(to.path, records, warn);
    else await copyIntoDatabase(to.url, records, warn);
    // Read both sides back from where they are kept, not from what was sent.
    const comparison = compareRecords(await readRecords(source), await readLocation(to, warn));
    return { from: describeLocation(from), to: describeLocation(to), ...comparison };
  } finally {
    await source.close();
  }
}

/**
 * Reads two stores and compares them record by record (both must exist; neither is changed).
 * A data dir is read under its lock, so a server running on it is refused.
 */
export async function compareStores(from: StoreLocation, to: StoreLocation, warn: (message: string) => void): Promise<Comparison> {
  return compareRecords(await readLocation(from, warn), await readLocation(to, warn));
}

/** Record by record: the same ids in each collection, each record deep-equal (key order aside). */
export function compareRecords(source: Records, destination: Records): Comparison {
  const collections: Record<string, CollectionCounts> = {};
  const mismatches: Mismatch[] = [];
  let mismatchCount = 0;
  const note = (collection: string, id: string, problem: Mismatch['problem']) => {
    mismatchCount += 1;
    collections[collection]!.mismatches += 1;
    if (mismatches.length < MISMATCHES_SHOWN) mismatches.push({ collection, id, problem });
  };
  const names = [...new Set([...source.keys(), ...destination.keys()])].sort();
  for (const name of names) {
    const left = source.get(name) ?? new Map<string, StoredRecord>();
    const right = destination.get(name) ?? new Map<string, StoredRecord>();
    collections[name] = { source: left.size, destination: right.size, mismatches: 0 };
    for (const [id, record] of left) {
      const copy = right.get(id);
      if (copy === undefined) note(name, id, 'missing from the destination');
      else if (!isDeepStrictEqual(record, copy)) note(name, id, 'different');
    }
    for (const id of right.keys()) if (!left.has(id)) note(name, id, 'only in the destination');
  }
  return {
    identical: mismatchCount === 0,
    records: { source: countRecords(source), destination: countRecords(destination) },
    collections,
    mismatch_count: mismatchCount,
    mismatches,
  };
}

// ---------------------------------------------------------------- sources

/** Opens the side to copy from, refusing (nothing changed) when it is missing or in use. */
async function openSource(location: StoreLocation, warn: (message: string) => void): Promise<Log> {
  if (location.kind === 'dir') {
    if (!existsSync(resolve(location.path, LOG_FILE_NAME))) throw new MigrationRefusedError(`${location.path} holds no store (no ${LOG_FILE_NAME})`);
    return openDir(location.path, warn);
  }
  const log = await openDatabase(location.url, warn);
  try {
    await refuseIfInstancesRun(log, location.url);
  } catch (error) {
    await log.close();
    throw error;
  }
  return log;
}

async function readLocation(location: StoreLocation, warn: (message: string) => void): Promise<Records> {
  if (location.kind === 'dir' && !existsSync(resolve(location.path, LOG_FILE_NAME))) {
    throw new MigrationRefusedError(`${location.path} holds no store (no ${LOG_FILE_NAME})`);
  }
  const log = location.kind === 'dir' ? await openDir(location.path, warn) : await openDatabase(location.url, warn);
  try {
    return await readRecords(log);
  } finally {
    await log.close();
  }
}

/** Every live record the log loads (the last write of an id wins; removals remove). */
async function readRecords(log: Log): Promise<Records> {
  const records: Records = new Map();
  const collection = (name: string) => {
    let found = records.get(name);
    if (found === undefined) {
      found = new Map();
      records.set(name, found);
    }
    return found;
  };
  await log.load({
    put: (name, record) => void collection(name).set(record.id, record),
    remove: (name, id) => void collection(name).delete(id),
  });
  for (const [name, found] of records) if (found.size === 0) records.delete(name);
  return records;
}

// ---------------------------------------------------------------- destinations

/**
 * Writes the records as the dir's log in one crash-safe rewrite. The dir may be missing, empty,
 * or hold a store without records (a server started once with no demo); anything else is refused.
 */
async function copyIntoDir(path: string, records: Records, warn: (message: string) => void): Promise<void> {
  refuseUnlessEmptyDir(path);
  const lines = encodeRecords(records);
  const log = await openDir(path, warn);
  try {
    const existing = countRecords(await readRecords(log));
    if (existing > 0) throw new MigrationRefusedError(`${path} is not empty: it holds a store with ${existing} records`);
    // The log's crash-safe rewrite (a compaction's steps): either the empty log or the full copy survives.
    await log.rewriteFrom(lines);
  } finally {
    await log.close();
  }
}

function refuseUnlessEmptyDir(path: string): void {
  if (!existsSync(path)) return;
  if (!statSync(path).isDirectory()) throw new MigrationRefusedError(`${path} exists and is not a directory`);
  // What a server leaves in a data dir it started on with no records; anything else is someone's.
  const expected = new Set([LOG_FILE_NAME, LOCK_FILE_NAME, OPERATOR_TOKEN_FILE_NAME]);
  const others = readdirSync(path).filter((name) => !expected.has(name));
  if (others.length > 0) throw new MigrationRefusedError(`${path} is not empty (it holds ${others.slice(0, 3).join(', ')}${others.length > 3 ? ', …' : ''}): give an empty or new directory`);
}

async function copyIntoDatabase(url: string, records: Records, warn: (message: string) => void): Promise<void> {
  const { DatabaseNotEmptyError } = await import('./postgres/postgres-log.ts');
  const log = await openDatabase(url, warn);
  try {
    await refuseIfInstancesRun(log, url);
    const ops: WriteOp[] = [];
    for (const [collection, found] of records) for (const [id, data] of found) ops.push({ op: 'put', collection, id, data });
    await log.fillEmpty(ops);
  } catch (error) {
    if (error instanceof DatabaseNotEmptyError) throw new MigrationRefusedError(`${redact(url)}: ${error.message}`);
    throw error;
  } finally {
    await log.close();
  }
}

/** The records as log lines (header first), refusing one too long for the file store to load back. */
function encodeRecords(records: Records): Buffer[] {
  const chunks: Buffer[] = [Buffer.from(headerLine(new Date().toISOString()))];
  for (const [collection, found] of records) {
    for (const [id, data] of found) {
      const line = encodeWrite([{ op: 'put', collection, id, data }]);
      if (Buffer.byteLength(line) > MAX_LINE_BYTES) {
        throw new MigrationRefusedError(`${collection}/${id} is ${Buffer.byteLength(line)} bytes, longer than a data dir's log takes (${MAX_LINE_BYTES} bytes)`);
      }
      chunks.push(Buffer.from(line));
    }
  }
  return chunks;
}

// ---------------------------------------------------------------- opening

async function openDir(path: string, warn: (message: string) => void): Promise<FileLog> {
  try {
    return await FileLog.open({ dataDir: path, warn, now: Date.now });
  } catch (error) {
    if (error instanceof DataDirLockedError) throw new MigrationRefusedError(`${error.message} (stop the server before migrating)`);
    throw error;
  }
}

async function openDatabase(url: string, warn: (message: string) => void): Promise<PostgresLog> {
  const { PostgresLog } = await import('./postgres/postgres-log.ts');
  return PostgresLog.open({ url, warn, follow: false });
}

async function refuseIfInstancesRun(log: PostgresLog, url: string): Promise<void> {
  const running = await log.followers();
  if (running > 0) throw new MigrationRefusedError(`${running} server instance(s) are running on ${redact(url)}: stop them before migrating`);
}

function countRecords(records: Records): number {
  let count = 0;
  for (const found of records.values()) count += found.size;
  return count;
}

function redact(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@]*):[^@/]*@/i, '$1:***@');
}
