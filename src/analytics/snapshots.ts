// The records the counters keep in the store's `usage` collection: one per key and hour and one
// per key for its last use, each holding whole counts (a newer snapshot replaces the older);
// and, for listings, records of views and impressions added in one hour, many listings to a
// record, which add up (a listing read once would otherwise cost a ~290-byte record per save;
// here it costs its id). Listing records of an hour are merged into one now and then
// (usage-counters.ts). Stores written before keep one `listing_hour` record per listing and
// hour; they are still read.

import { isoTime } from '../clock.ts';
import type { StoredRecord } from '../store/store.ts';
import { HOUR_MS, Tally, type KeyHour, type ListingHour, type UsageCounts } from './buckets.ts';

export interface KeyHourRecord extends StoredRecord, UsageCounts {
  readonly kind: 'key_hour';
  readonly key_id: string;
  /** Start of the UTC hour, ISO. */
  readonly hour: string;
  readonly endpoints: Readonly<Record<string, UsageCounts>>;
}

export interface ListingHourRecord extends StoredRecord {
  readonly kind: 'listing_hour';
  readonly listing_id: string;
  readonly hour: string;
  readonly views: number;
  readonly impressions: number;
}

export interface KeyLastUsedRecord extends StoredRecord {
  readonly kind: 'key_last_used';
  readonly key_id: string;
  readonly last_used_at: string;
}

/**
 * Views and impressions added in one hour, for many listings: "<views>/<impressions>" → the
 * ids of the listings that got exactly those, separated by spaces (most listings share a few
 * small pairs, so each costs little more than its id).
 */
export interface ListingCountsRecord extends StoredRecord {
  readonly kind: 'listing_counts';
  readonly hour: string;
  readonly counts: Readonly<Record<string, string>>;
}

export type UsageRecord = KeyHourRecord | ListingHourRecord | KeyLastUsedRecord | ListingCountsRecord;

export const keyHourId = (keyId: string, start: number) => `key:${keyId}@${isoTime(start)}`;
export const listingHourId = (listingId: string, start: number) => `listing:${listingId}@${isoTime(start)}`;
export const keyLastUsedId = (keyId: string) => `key:${keyId}@last_used`;
/** `unique` tells apart the records of one hour (several saves, several runs). */
export const listingCountsId = (start: number, unique: string) => `listings@${isoTime(start)}/${unique}`;

export function keyHourRecord(bucket: KeyHour): KeyHourRecord {
  const endpoints: Record<string, UsageCounts> = {};
  for (const [endpoint, tally] of bucket.endpoints) endpoints[endpoint] = tally.counts();
  return { id: keyHourId(bucket.keyId, bucket.start), kind: 'key_hour', key_id: bucket.keyId, hour: isoTime(bucket.start), ...bucket.total.counts(), endpoints };
}

export function listingHourRecord(bucket: ListingHour): ListingHourRecord {
  return {
    id: listingHourId(bucket.listingId, bucket.start),
    kind: 'listing_hour',
    listing_id: bucket.listingId,
    hour: isoTime(bucket.start),
    views: bucket.views,
    impressions: bucket.impressions,
  };
}

/** One record of what `additions` (listing id → [views, impressions]) add to the hour `start`. */
export function listingCountsRecord(id: string, start: number, additions: ReadonlyMap<string, readonly [number, number]>): ListingCountsRecord {
  const idsByPair = new Map<string, string[]>();
  for (const [listingId, [views, impressions]] of additions) {
    const pair = `${views}/${impressions}`;
    const ids = idsByPair.get(pair);
    if (ids === undefined) idsByPair.set(pair, [listingId]);
    else ids.push(listingId);
  }
  const counts: Record<string, string> = {};
  for (const [pair, ids] of idsByPair) counts[pair] = ids.join(' ');
  return { id, kind: 'listing_counts', hour: isoTime(start), counts };
}

export function keyLastUsedRecord(keyId: string, lastUsedMs: number): KeyLastUsedRecord {
  return { id: keyLastUsedId(keyId), kind: 'key_last_used', key_id: keyId, last_used_at: isoTime(lastUsedMs) };
}

/** A stored record read back, checked field by field; null when it is not one of ours. */
export type DecodedRecord =
  | { kind: 'key_hour'; keyId: string; start: number; total: Tally; endpoints: Map<string, Tally> }
  | { kind: 'listing_hour'; listingId: string; start: number; views: number; impressions: number }
  | { kind: 'key_last_used'; keyId: string; lastUsedMs: number }
  | { kind: 'listing_counts'; start: number; additions: Array<{ listingId: string; views: number; impressions: number }> };

export function decodeUsageRecord(record: StoredRecord): DecodedRecord | null {
  const fields = record as unknown as Record<string, unknown>;
  switch (fields.kind) {
    case 'key_hour': {
      const start = hourOf(fields.hour);
      const total = tallyOf(fields);
      if (typeof fields.key_id !== 'string' || start === null || total === null) return null;
      if (typeof fields.endpoints !== 'object' || fields.endpoints === null) return null;
      const endpoints = new Map<string, Tally>();
      for (const [endpoint, counts] of Object.entries(fields.endpoints)) {
        const tally = tallyOf(counts);
        if (tally === null) return null;
        endpoints.set(endpoint, tally);
      }
      return { kind: 'key_hour', keyId: fields.key_id, start, total, endpoints };
    }
    case 'listing_hour': {
      const start = hourOf(fields.hour);
      if (typeof fields.listing_id !== 'string' || start === null) return null;
      if (!isCount(fields.views) || !isCount(fields.impressions)) return null;
      return { kind: 'listing_hour', listingId: fields.listing_id, start, views: fields.views, impressions: fields.impressions };
    }
    case 'key_last_used': {
      const lastUsedMs = typeof fields.last_used_at === 'string' ? Date.parse(fields.last_used_at) : NaN;
      if (typeof fields.key_id !== 'string' || !Number.isFinite(lastUsedMs)) return null;
      return { kind: 'key_last_used', keyId: fields.key_id, lastUsedMs };
    }
    case 'listing_counts': {
      const start = hourOf(fields.hour);
      if (start === null || typeof fields.counts !== 'object' || fields.counts === null) return null;
      const additions: Array<{ listingId: string; views: number; impressions: number }> = [];
      for (const [pair, ids] of Object.entries(fields.counts)) {
        const match = /^(\d+)\/(\d+)$/.exec(pair);
        if (match === null || typeof ids !== 'string') return null;
        const views = Number(match[1]);
        const impressions = Number(match[2]);
        if (!isCount(views) || !isCount(impressions)) return null;
        for (const listingId of ids.split(' ')) if (listingId !== '') additions.push({ listingId, views, impressions });
      }
      return { kind: 'listing_counts', start, additions };
    }
    default:
      return null;
  }
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

function hourOf(value: unknown): number | null {
  if (typeof value !== 'string') return null;
  const ms = Date.parse(value);
  return Number.isFinite(ms) && ms % HOUR_MS === 0 ? ms : null;
}

function tallyOf(value: unknown): Tally | null {
  if (typeof value !== 'object' || value === null) return null;
  const counts = value as Record<string, unknown>;
  const byStatus = counts.by_status as Record<string, unknown> | null | undefined;
  if (typeof byStatus !== 'object' || byStatus === null) return null;
  const numbers = [counts.requests, counts.rate_limited, byStatus['2xx'], byStatus['3xx'], byStatus['4xx'], byStatus['5xx']];
  if (!numbers.every(isCount)) return null;
  return Tally.fromCounts(counts as unknown as UsageCounts);
}
