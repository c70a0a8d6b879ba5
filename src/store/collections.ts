// The records in memory: one map per collection, each record with the version of the write
// that last put it. Collections are named by typed names (`CollectionName<UserRecord>`), so a
// read says what it returns and call sites need no cast. Only the store's write queue changes
// them (`apply`), always after the log has kept the change.

import type { StoredRecord, WriteOp } from './format.ts';

declare const recordType: unique symbol;

/**
 * A collection's name, carrying the type of its records. A plain string is not one: names are
 * made once, next to the record type, with `collectionName`.
 * @example export const USERS = collectionName<UserRecord>('users');
 */
export type CollectionName<T extends StoredRecord> = string & { readonly [recordType]?: T };

export function collectionName<T extends StoredRecord>(name: string): CollectionName<T> {
  return name as CollectionName<T>;
}

/** Reading records; the store and a write's transaction both offer it. */
export interface RecordReader {
  get<T extends StoredRecord>(collection: CollectionName<T>, id: string): T | undefined;
  values<T extends StoredRecord>(collection: CollectionName<T>): IterableIterator<T>;
  size(collection: string): number;
}

/** What one applied operation changed, for listeners (indexes, caches, the webhook dispatcher). */
export interface ChangeEvent {
  collection: string;
  id: string;
  before: StoredRecord | undefined;
  after: StoredRecord | undefined;
}

/** A change to one record of a known collection, typed as its records are. */
export interface RecordChange<T extends StoredRecord> {
  id: string;
  before: T | undefined;
  after: T | undefined;
}

/** An absent record, and a collection never written, have this version. */
export const ABSENT = 0;

export class Collections implements RecordReader {
  private readonly records = new Map<string, Map<string, StoredRecord>>();
  /**
   * Versions of records put since load. A record loaded with the log's base version has no
   * entry (a million loaded records cost no second map); a deleted record has none either.
   */
  private readonly versions = new Map<string, Map<string, number>>();
  /** Per collection, the version of the last write to any of its records (a scan's version). */
  private readonly collectionVersions = new Map<string, number>();
  private readonly baseVersion: number;

  /** `baseVersion`: the version loaded records have unless the log states one. */
  constructor(baseVersion = 1) {
    this.baseVersion = baseVersion;
  }

  get<T extends StoredRecord>(collection: CollectionName<T>, id: string): T | undefined {
    // The one place a stored record becomes its collection's type: every write to
    // `collection` put a T (handlers build records typed by the same name).
    return this.records.get(collection)?.get(id) as T | undefined;
  }

  values<T extends StoredRecord>(collection: CollectionName<T>): IterableIterator<T> {
    const records = this.records.get(collection) ?? new Map<string, StoredRecord>();
    return records.values() as IterableIterator<T>;
  }

  size(collection: string): number {
    return this.records.get(collection)?.size ?? 0;
  }

  /** Every collection's name and records, for snapshots and compaction. */
  entries(): IterableIterator<[string, Map<string, StoredRecord>]> {
    return this.records.entries();
  }

  liveRecords(): number {
    let count = 0;
    for (const records of this.records.values()) count += records.size;
    return count;
  }

  /** The version of one record (ABSENT when there is none). */
  versionOf(collection: string, id: string): number {
    const version = this.versions.get(collection)?.get(id);
    if (version !== undefined) return version;
    return this.records.get(collection)?.has(id) ? this.baseVersion : ABSENT;
  }

  /** The version of the last write to any record of `collection` (a read of all of it). */
  collectionVersion(collection: string): number {
    return this.collectionVersions.get(collection) ?? (this.records.has(collection) ? this.baseVersion : ABSENT);
  }

  /** Loads a record as the log holds it (no listeners: nothing was decided yet). */
  loadPut(collection: string, record: StoredRecord, version: number): void {
    this.set(collection, record.id, record, version);
  }

  loadDelete(collection: string, id: string, version: number): void {
    this.set(collection, id, undefined, version);
  }

  /** Applies one operation the log has kept, as `version`; returns what it replaced. */
  apply(op: WriteOp, version: number): StoredRecord | undefined {
    return this.set(op.collection, op.id, op.op === 'put' ? op.data : undefined, version);
  }

  private set(collection: string, id: string, record: StoredRecord | undefined, version: number): StoredRecord | undefined {
    let records = this.records.get(collection);
    if (records === undefined) {
      records = new Map();
      this.records.set(collection, records);
    }
    const before = records.get(id);
    let versions = this.versions.get(collection);
    if (record !== undefined) {
      records.set(id, record);
      if (version !== this.baseVersion) {
        if (versions === undefined) {
          versions = new Map();
          this.versions.set(collection, versions);
        }
        versions.set(id, version);
      } else versions?.delete(id);
    } else {
      records.delete(id);
      versions?.delete(id);
    }
    if (version > (this.collectionVersions.get(collection) ?? ABSENT)) this.collectionVersions.set(collection, version);
    return before;
  }
}
