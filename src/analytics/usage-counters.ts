// Counts requests per key and views and impressions per listing in hourly buckets, in memory,
// and saves what changed to the store every minute and at stop(). A crash loses at most the
// counts since the last flush. Key buckets are saved whole; listing counts are saved as what
// each flush adds, many listings to one record, and an hour's records are merged into one
// when the hour is over (or has many), so a read costs the log a few bytes, not a record.
// Buckets older than the retention are dropped from memory and from the store, so memory
// stays bounded by keys, listings and retained hours.

import { randomBytes } from 'node:crypto';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { isoTime, type Clock } from '../clock.ts';
import { USAGE_FLUSH_MS } from '../config.ts';
import { USAGE } from '../domain/records.ts';
import type { StoredRecord, WriteOp } from '../store/format.ts';
import type { Store } from '../store/store.ts';
import {
  bucketMsOf,
  DAY_MS,
  floorTo,
  HOUR_MS,
  newKeyHour,
  newListingHour,
  Tally,
  type HourBucket,
  type KeyCounters,
  type KeyHour,
  type ListingCounters,
  type ListingHour,
} from './buckets.ts';
import type { EndpointUsage, HourSpan, KeyUsageReport, ListingCounts, SeriesRange, UsageReader } from './reader.ts';
import { PeriodicSaver } from './periodic-saver.ts';
import type { UsageRecorder } from './recorder.ts';
import {
  decodeUsageRecord,
  keyHourId,
  keyHourRecord,
  keyLastUsedRecord,
  listingCountsId,
  listingCountsRecord,
} from './snapshots.ts';

export interface UsageCountersOptions {
  store: Store;
  clock: Clock;
  /** How often changed buckets are saved; also the most a crash can lose. Default 60 s. */
  flushIntervalMs?: number;
  /** Hourly buckets older than this many days are dropped. Default 90. */
  retentionDays?: number;
  warn?: (message: string) => void;
  /**
   * With many instances (summed-usage.ts): this instance's records get ids ending in
   * `#<instanceTag>` so no other instance overwrites them, and it starts from none of its own.
   */
  instanceTag?: string;
  /** Loads only the records whose id passes (default: every record). */
  loadOnly?: (recordId: string) => boolean;
}

export const DEFAULT_FLUSH_INTERVAL_MS = USAGE_FLUSH_MS;
export const DEFAULT_RETENTION_DAYS = 90;
/** Records per store write, so one flush after a busy interval is not one enormous log line. */
const OPS_PER_WRITE = 500;
/** Distinct page arrays held before their impressions are spread out anyway (no flush running). */
const MAX_PENDING_PAGES = 10_000;
/** Listings per listing-counts record, so no record becomes one enormous log line. */
const LISTINGS_PER_RECORD = 5_000;
/** An hour's listing records are merged into one once it has this many (or the hour is over). */
const MERGE_AT_RECORDS = 15;

export class UsageCounters implements UsageRecorder, UsageReader {
  private readonly store: Store;
  private readonly clock: Clock;
  private readonly retentionMs: number;
  private readonly warn: (message: string) => void;
  private readonly keys = new Map<string, KeyCounters>();
  private readonly listings = new Map<string, ListingCounters>();
  /** Hour start → that hour's buckets, so the retention drops whole hours without a scan. */
  private readonly byHour = new Map<number, HourBucket[]>();
  /** Buckets changed since the last flush, each once (see HourBucket.dirty). */
  private dirty: HourBucket[] = [];
  /** Ids of dropped buckets still to delete from the store. */
  private tombstones: string[] = [];
  /** Hour start → ids of the saved records holding that hour's listing counts (they add up). */
  private readonly listingRecords = new Map<number, string[]>();
  /**
   * Impressions of the current hour not yet spread over listings: page (the array of ids it
   * shows) → times served. A cached page passes the same array on every hit, so counting it
   * is one Map update, whatever the page size.
   */
  private readonly pendingPages = new Map<readonly string[], number>();
  private pendingHourStart = -Infinity;
  private readonly saver: PeriodicSaver;
  private readonly idSuffix: string;

  constructor(options: UsageCountersOptions) {
    this.store = options.store;
    this.clock = options.clock;
    this.retentionMs = (options.retentionDays ?? DEFAULT_RETENTION_DAYS) * DAY_MS;
    this.warn = options.warn ?? ((message: string) => console.warn(message));
    this.saver = new PeriodicSaver(() => this.flushOnce(), options.flushIntervalMs ?? DEFAULT_FLUSH_INTERVAL_MS);
    if (!(this.retentionMs > 0)) throw new RangeError('retentionDays must be a positive number');
    this.idSuffix = options.instanceTag === undefined ? '' : `#${options.instanceTag}`;
    // A tagged instance starts with no records of its own; the others' are summed by its reader.
    // An instance that owns the whole store (file-backed, one process) takes over records that
    // other instances saved, folding them into its own; a reader of some records leaves them be.
    if (options.instanceTag === undefined) this.load(options.loadOnly ?? (() => true), options.loadOnly === undefined);
  }

  // --- The request path: a few Map updates, no I/O. ---

  recordRequest(keyId: string, endpoint: string, status: number, wallMs: number): void {
    const counters = this.keyCounters(keyId);
    let bucket = counters.current;
    if (bucket === null || wallMs < bucket.start || wallMs >= bucket.start + HOUR_MS) {
      bucket = this.keyHour(counters, keyId, floorTo(wallMs, HOUR_MS));
      counters.current = bucket;
    }
    bucket.total.add(status);
    let tally = bucket.endpoints.get(endpoint);
    if (tally === undefined) {
      tally = new Tally();
      bucket.endpoints.set(endpoint, tally);
    }
    tally.add(status);
    if (wallMs > counters.lastUsedMs) counters.lastUsedMs = wallMs;
    this.markDirty(bucket);
  }

  recordListingView(listingId: string, wallMs: number): void {
    const counters = this.listingCounters(listingId);
    const bucket = this.currentListingHour(counters, listingId, wallMs);
    bucket.views += 1;
    bucket.unsavedViews += 1;
    counters.views += 1;
    this.markDirty(bucket);
  }

  recordListingImpressions(listingIds: readonly string[], wallMs: number): void {
    if (listingIds.length === 0) return;
    if (wallMs < this.pendingHourStart || wallMs >= this.pendingHourStart + HOUR_MS || this.pendingPages.size >= MAX_PENDING_PAGES) {
      this.settleImpressions();
      this.pendingHourStart = floorTo(wallMs, HOUR_MS);
    }
    this.pendingPages.set(listingIds, (this.pendingPages.get(listingIds) ?? 0) + 1);
  }

  // --- Questions the routes ask. ---

  keyUsage(keyId: string, range: SeriesRange): KeyUsageReport {
    const sizeMs = bucketMsOf(range.granularity);
    const pointCount = Math.max(0, Math.ceil((range.toMs - range.fromMs) / sizeMs));
    const perPoint = Array.from({ length: pointCount }, () => new Tally());
    const totals = new Tally();
    const perEndpoint = new Map<string, Tally>();
    for (const bucket of this.keys.get(keyId)?.hours.values() ?? []) {
      if (bucket.start < range.fromMs || bucket.start >= range.toMs) continue;
      perPoint[Math.floor((bucket.start - range.fromMs) / sizeMs)]!.addTally(bucket.total);
      totals.addTally(bucket.total);
      for (const [endpoint, tally] of bucket.endpoints) {
        let sum = perEndpoint.get(endpoint);
        if (sum === undefined) {
          sum = new Tally();
          perEndpoint.set(endpoint, sum);
        }
        sum.addTally(tally);
      }
    }
    const endpoints: EndpointUsage[] = [...perEndpoint].map(([endpoint, tally]) => {
      const space = endpoint.indexOf(' ');
      return { endpoint, method: endpoint.slice(0, space), route: endpoint.slice(space + 1), ...tally.counts() };
    });
    endpoints.sort((left, right) => right.requests - left.requests || (left.endpoint < right.endpoint ? -1 : left.endpoint > right.endpoint ? 1 : 0));
    const points = perPoint.map((tally, index) => ({ start: isoTime(range.fromMs + index * sizeMs), ...tally.counts(), errors: tally.errors() }));
    return { totals: totals.counts(), endpoints, points };
  }

  listingCounts(listingId: string, span: HourSpan): ListingCounts {
    if (this.pendingPages.size > 0) this.settleImpressions();
    const counters = this.listings.get(listingId);
    if (counters === undefined) return { views: 0, impressions: 0 };
    if (span.fromMs === null && span.toMs === null) return { views: counters.views, impressions: counters.impressions };
    const fromMs = span.fromMs ?? -Infinity;
    const toMs = span.toMs ?? Infinity;
    const counts = { views: 0, impressions: 0 };
    for (const bucket of counters.hours.values()) {
      if (bucket.start < fromMs || bucket.start >= toMs) continue;
      counts.views += bucket.views;
      counts.impressions += bucket.impressions;
    }
    return counts;
  }

  lastUsedAt(keyId: string): string | null {
    const lastUsedMs = this.keys.get(keyId)?.lastUsedMs ?? -Infinity;
    return Number.isFinite(lastUsedMs) ? isoTime(lastUsedMs) : null;
  }

  // --- Saving. ---

  /** Saves every `flushIntervalMs`; the timer does not keep the process alive. */
  start(): void {
    this.saver.start();
  }

  /**
   * Saves the buckets changed since the last flush and deletes expired ones. Never rejects:
   * when the store refuses, the counts stay in memory, marked changed, and the next flush
   * tries again.
   */
  flush(): Promise<void> {
    return this.saver.save();
  }

  /** Stops the timer and makes a last flush; safe to call with the store already closed. */
  stop(): Promise<void> {
    return this.saver.stop();
  }

  private async flushOnce(): Promise<void> {
    try {
      this.settleImpressions();
      this.dropExpired(this.clock.now());
      const changed = this.dirty;
      this.dirty = [];
      const live: HourBucket[] = [];
      const listingHours = new Set<number>();
      for (const bucket of changed) {
        bucket.dirty = false;
        if (bucket.dropped) continue;
        if (bucket.kind === 'listing') listingHours.add(bucket.start);
        else live.push(bucket);
      }
      const tombstones = this.tombstones;
      this.tombstones = [];
      const writes: Array<Promise<void>> = [];
      for (let offset = 0; offset < live.length; offset += OPS_PER_WRITE) {
        // Tens of thousands of changed buckets (a look-up of every listing) take tens of
        // milliseconds to encode: requests are let in between slices, and their counts are
        // either in the records still to be made or marked changed for the next flush.
        if (offset > 0) await nextTurn();
        writes.push(this.saveBuckets(live.slice(offset, offset + OPS_PER_WRITE)));
      }
      for (let offset = 0; offset < tombstones.length; offset += OPS_PER_WRITE) writes.push(this.deleteRecords(tombstones.slice(offset, offset + OPS_PER_WRITE)));
      const currentHour = floorTo(this.clock.now(), HOUR_MS);
      // Past hours with several records are merged even when nothing of theirs changed now.
      for (const [start, ids] of this.listingRecords) if (start < currentHour && ids.length > 1) listingHours.add(start);
      for (const start of listingHours) writes.push(this.saveListingHour(start, start < currentHour));
      await Promise.all(writes);
    } catch (error) {
      this.warn(`Usage counters could not be saved: ${(error as Error)?.message ?? String(error)}`);
    }
  }

  private async saveBuckets(buckets: HourBucket[]): Promise<void> {
    const ops: WriteOp[] = [];
    const keysSeen = new Set<string>();
    for (const bucket of buckets) {
      for (const id of bucket.foldedIds ?? []) ops.push({ op: 'del', collection: USAGE, id });
      if (bucket.kind === 'listing') continue; // saved by saveListingHour
      ops.push(this.put(keyHourRecord(bucket)));
      // A key's last use changes only with a request, which also changes one of its hours.
      const lastUsedMs = this.keys.get(bucket.keyId)?.lastUsedMs ?? -Infinity;
      if (!keysSeen.has(bucket.keyId) && Number.isFinite(lastUsedMs)) ops.push(this.put(keyLastUsedRecord(bucket.keyId, lastUsedMs)));
      keysSeen.add(bucket.keyId);
    }
    try {
      await this.store.write(ops);
      for (const bucket of buckets) {
        bucket.stored = true;
        bucket.foldedIds = undefined;
      }
    } catch (error) {
      for (const bucket of buckets) if (!bucket.dropped) this.markDirty(bucket);
      this.warn(`Usage counters could not be saved (kept in memory; retried at the next flush): ${(error as Error)?.message ?? String(error)}`);
    }
  }

  /**
   * Saves what the listings of hour `start` gained since the last save: as one more record of
   * additions, or, once the hour is over (`hourIsOver`) or holds many records, as one record of
   * the hour's whole counts that replaces all of them, in one write.
   */
  private async saveListingHour(start: number, hourIsOver: boolean): Promise<void> {
    const buckets: ListingHour[] = [];
    for (const bucket of this.byHour.get(start) ?? []) if (bucket.kind === 'listing' && !bucket.dropped) buckets.push(bucket);
    const saved = this.listingRecords.get(start) ?? [];
    const merge = saved.length + 1 >= MERGE_AT_RECORDS || (hourIsOver && saved.length > 0);
    // What is written now, taken before any await: counts added meanwhile stay unsaved.
    const taken = new Map<ListingHour, readonly [number, number]>();
    const additions = new Map<string, readonly [number, number]>();
    for (const bucket of buckets) {
      const views = merge ? bucket.views : bucket.unsavedViews;
      const impressions = merge ? bucket.impressions : bucket.unsavedImpressions;
      if (bucket.unsavedViews > 0 || bucket.unsavedImpressions > 0) taken.set(bucket, [bucket.unsavedViews, bucket.unsavedImpressions]);
      if (views > 0 || impressions > 0) additions.set(bucket.listingId, [views, impressions]);
    }
    if (taken.size === 0 && !merge) return;
    const ops: WriteOp[] = [];
    const newIds: string[] = [];
    const entries = [...additions];
    for (let offset = 0; offset < entries.length; offset += LISTINGS_PER_RECORD) {
      const op = this.put(listingCountsRecord(listingCountsId(start, randomBytes(6).toString('base64url')), start, new Map(entries.slice(offset, offset + LISTINGS_PER_RECORD))));
      ops.push(op);
      newIds.push(op.id);
    }
    if (merge) for (const id of saved) ops.push({ op: 'del', collection: USAGE, id });
    for (const [bucket, [views, impressions]] of taken) {
      bucket.unsavedViews -= views;
      bucket.unsavedImpressions -= impressions;
    }
    try {
      if (ops.length > 0) await this.store.write(ops);
      // Dropped by the retention while the write ran: its tombstones must name these too.
      if (!this.byHour.has(start)) this.tombstones.push(...newIds);
      else this.listingRecords.set(start, merge ? newIds : [...(this.listingRecords.get(start) ?? []), ...newIds]);
    } catch (error) {
      for (const [bucket, [views, impressions]] of taken) {
        bucket.unsavedViews += views;
        bucket.unsavedImpressions += impressions;
        if (!bucket.dropped) this.markDirty(bucket);
      }
      this.warn(`Listing counts could not be saved (kept in memory; retried at the next flush): ${(error as Error)?.message ?? String(error)}`);
    }
  }

  private async deleteRecords(ids: string[]): Promise<void> {
    try {
      await this.store.write(ids.map((id) => ({ op: 'del', collection: USAGE, id })));
    } catch (error) {
      this.tombstones.push(...ids);
      this.warn(`Expired usage counters could not be deleted (retried at the next flush): ${(error as Error)?.message ?? String(error)}`);
    }
  }

  // --- Buckets. ---

  /** `bucket` holds the counts of another instance's record `recordId`: saved under this instance's id with the next flush, which deletes that record. */
  private fold(bucket: HourBucket, recordId: string): void {
    (bucket.foldedIds ??= []).push(recordId);
    this.markDirty(bucket);
  }

  private markDirty(bucket: HourBucket): void {
    if (bucket.dirty) return;
    bucket.dirty = true;
    this.dirty.push(bucket);
  }

  private keyCounters(keyId: string): KeyCounters {
    let counters = this.keys.get(keyId);
    if (counters === undefined) {
      counters = { hours: new Map(), current: null, lastUsedMs: -Infinity };
      this.keys.set(keyId, counters);
    }
    return counters;
  }

  private listingCounters(listingId: string): ListingCounters {
    let counters = this.listings.get(listingId);
    if (counters === undefined) {
      counters = { hours: new Map(), current: null, views: 0, impressions: 0 };
      this.listings.set(listingId, counters);
    }
    return counters;
  }

  private keyHour(counters: KeyCounters, keyId: string, start: number): KeyHour {
    let bucket = counters.hours.get(start);
    if (bucket === undefined) {
      bucket = newKeyHour(keyId, start);
      counters.hours.set(start, bucket);
      this.indexByHour(bucket);
    }
    return bucket;
  }

  private currentListingHour(counters: ListingCounters, listingId: string, wallMs: number): ListingHour {
    const current = counters.current;
    if (current !== null && wallMs >= current.start && wallMs < current.start + HOUR_MS) return current;
    const start = floorTo(wallMs, HOUR_MS);
    let bucket = counters.hours.get(start);
    if (bucket === undefined) {
      bucket = newListingHour(listingId, start);
      counters.hours.set(start, bucket);
      this.indexByHour(bucket);
    }
    counters.current = bucket;
    return bucket;
  }

  private indexByHour(bucket: HourBucket): void {
    const sameHour = this.byHour.get(bucket.start);
    if (sameHour === undefined) this.byHour.set(bucket.start, [bucket]);
    else sameHour.push(bucket);
  }

  /** Spreads the pending page impressions over their listings' buckets. */
  private settleImpressions(): void {
    if (this.pendingPages.size === 0) return;
    const hourStart = this.pendingHourStart;
    for (const [listingIds, times] of this.pendingPages) {
      for (const listingId of listingIds) {
        const counters = this.listingCounters(listingId);
        const bucket = this.currentListingHour(counters, listingId, hourStart);
        bucket.impressions += times;
        bucket.unsavedImpressions += times;
        counters.impressions += times;
        this.markDirty(bucket);
      }
    }
    this.pendingPages.clear();
  }

  /** Drops every bucket of an hour older than the retention, queueing tombstones for the saved ones. */
  private dropExpired(nowMs: number): void {
    const cutoff = floorTo(nowMs, HOUR_MS) - this.retentionMs;
    for (const [start, buckets] of this.byHour) {
      if (start >= cutoff) continue;
      this.byHour.delete(start);
      for (const bucket of buckets) this.drop(bucket);
      this.tombstones.push(...(this.listingRecords.get(start) ?? []));
      this.listingRecords.delete(start);
    }
  }

  private drop(bucket: HourBucket): void {
    bucket.dropped = true;
    if (bucket.kind === 'key') {
      const counters = this.keys.get(bucket.keyId);
      counters?.hours.delete(bucket.start);
      if (counters?.current === bucket) counters.current = null;
      // The key's entry stays: it holds the last use, which outlives the retention.
      if (bucket.stored) this.tombstones.push(keyHourId(bucket.keyId, bucket.start) + this.idSuffix, ...(bucket.foldedIds ?? []));
      return;
    }
    const counters = this.listings.get(bucket.listingId);
    if (counters !== undefined) {
      counters.hours.delete(bucket.start);
      if (counters.current === bucket) counters.current = null;
      counters.views -= bucket.views;
      counters.impressions -= bucket.impressions;
      if (counters.hours.size === 0) this.listings.delete(bucket.listingId);
    }
    // Its records are the hour's listing records, deleted with the hour by dropExpired.
  }

  private put(data: StoredRecord): WriteOp {
    const id = data.id + this.idSuffix;
    return { op: 'put', collection: USAGE, id, data: this.idSuffix === '' ? data : { ...data, id } };
  }

  /** Rebuilds the counters from the snapshots in the store. */
  private load(loadOnly: (recordId: string) => boolean, foldOthers: boolean): void {
    let unreadable = 0;
    for (const record of this.store.values(USAGE)) {
      if (!loadOnly(record.id)) continue;
      const decoded = decodeUsageRecord(record);
      if (decoded === null) {
        unreadable += 1;
        continue;
      }
      if (decoded.kind === 'key_last_used') {
        const counters = this.keyCounters(decoded.keyId);
        counters.lastUsedMs = Math.max(counters.lastUsedMs, decoded.lastUsedMs);
      } else if (decoded.kind === 'key_hour') {
        const bucket = this.keyHour(this.keyCounters(decoded.keyId), decoded.keyId, decoded.start);
        bucket.total.addTally(decoded.total);
        // Several instances' records of one hour add up.
        for (const [endpoint, tally] of decoded.endpoints) {
          const sum = bucket.endpoints.get(endpoint);
          if (sum === undefined) bucket.endpoints.set(endpoint, tally);
          else sum.addTally(tally);
        }
        bucket.stored = true;
        if (foldOthers && record.id !== keyHourId(decoded.keyId, decoded.start)) this.fold(bucket, record.id);
      } else {
        // Listing records of an hour add up, whoever saved them; this instance merges them into
        // its own when it next saves the hour (other instances' too, when it owns the store).
        const additions = decoded.kind === 'listing_hour' ? [decoded] : decoded.additions;
        for (const { listingId, views, impressions } of additions) {
          const counters = this.listingCounters(listingId);
          const bucket = this.currentListingHour(counters, listingId, decoded.start);
          bucket.views += views;
          bucket.impressions += impressions;
          counters.views += views;
          counters.impressions += impressions;
        }
        if (foldOthers || record.id.endsWith(this.idSuffix)) {
          const ids = this.listingRecords.get(decoded.start);
          if (ids === undefined) this.listingRecords.set(decoded.start, [record.id]);
          else ids.push(record.id);
        }
      }
    }
    if (unreadable > 0) this.warn(`Ignored ${unreadable} unreadable usage record(s) in the store.`);
    // Loaded hours are not "current": the next request finds its own hour.
    for (const counters of this.listings.values()) counters.current = null;
    this.dropExpired(this.clock.now());
  }
}

