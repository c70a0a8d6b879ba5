// What the analytics routes ask of the counters: a key's usage over a range of whole hours or
// days, a listing's views and impressions, a key's last use. Kept apart from the class so the
// routes (and their tests) depend on these questions, not on how the counting is done.

import type { RecordChange, StoredRecord } from '../store/store.ts';
import type { Granularity, UsageCounts } from './buckets.ts';

/** [fromMs, toMs) in wall ms, both on bucket boundaries of `granularity`. */
export interface SeriesRange {
  granularity: Granularity;
  fromMs: number;
  toMs: number;
}

/** [fromMs, toMs) in wall ms on hour boundaries; null bounds mean "since / until any time". */
export interface HourSpan {
  fromMs: number | null;
  toMs: number | null;
}

export interface EndpointUsage extends UsageCounts {
  /** "METHOD /route/:pattern", e.g. "GET /v1/listings/:id". */
  endpoint: string;
  method: string;
  route: string;
}

export interface UsagePoint extends UsageCounts {
  /** Start of the bucket, ISO. */
  start: string;
  /** 4xx and 5xx answers other than 429. */
  errors: number;
}

export interface KeyUsageReport {
  totals: UsageCounts;
  /** Most requests first, ties by endpoint. */
  endpoints: EndpointUsage[];
  /** One point per bucket of the range, empty ones included, oldest first. */
  points: UsagePoint[];
}

export interface ListingCounts {
  views: number;
  impressions: number;
}

export interface UsageReader {
  keyUsage(keyId: string, range: SeriesRange): KeyUsageReport;
  listingCounts(listingId: string, span: HourSpan): ListingCounts;
  /** ISO time of the key's last counted request, or null if it has none. */
  lastUsedAt(keyId: string): string | null;
  /** For a reader that also sums what other instances saved: told of every change of `usage` (app.ts wires it). */
  onUsageChange?(change: RecordChange<StoredRecord>): void;
}
