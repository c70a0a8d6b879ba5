// Reading usage, with no request in sight: a key's usage (totals, per endpoint, a time series
// and its current rate-limit window), as /v1/analytics/usage, the operator's and the portal's
// per-key usage all answer it, with the key's plan quota; and the views and impressions of one user's listings. Each
// reading takes the query's parameters and refuses a bad one with a 400 naming it.

import type { Metering } from '../analytics/quota-counters.ts';
import type { ListingCounts, UsageReader } from '../analytics/reader.ts';
import { readHourSpan, readSeriesRange } from '../analytics/time-range.ts';
import { isoTime, type Clock } from '../clock.ts';
import { badRequest } from '../domain/errors.ts';
import { LISTINGS, type KeyRecord, type ListingStatus } from '../domain/records.ts';
import { checkQueryNames, pageOf, readPageRequest } from '../http/lists.ts';
import { resetUnixSeconds } from '../http/rate-limit-headers.ts';
import type { RateDecision } from '../limits/sliding-window.ts';
import type { RecordReader } from '../store/collections.ts';

/** The key limiter, read without counting a request (at once in-process, a promise from Redis). */
export interface RateWindowPeek {
  peek(keyId: string, limit: number): RateDecision | Promise<RateDecision>;
}

/** What answering a usage query needs. */
export interface UsageAnswerDeps {
  clock: Clock;
  usage: UsageReader;
  keyLimiter: RateWindowPeek;
  /** What the key is metered as, and the counts against plan quotas (the quota's part of the answer; none without the plans module). */
  metering: Metering;
}

const USAGE_QUERY = ['granularity', 'from', 'to'];
const LISTINGS_QUERY = ['page', 'limit', 'sort', 'from', 'to'];
export const LISTING_STATS_SORTS = ['-views', 'views', '-impressions', 'impressions'] as const;
type ListingStatsSort = (typeof LISTING_STATS_SORTS)[number];

/** One row of the listing statistics: a listing of the user's with its counts in the span asked for. */
export interface ListingStats extends ListingCounts {
  listing_id: string;
  title: string;
  status: ListingStatus;
}

/** The usage answer for `key` (GET /v1/analytics/usage, the operator's and the portal's per-key usage). */
export async function usageBody(deps: UsageAnswerDeps, query: URLSearchParams, key: KeyRecord) {
  checkQueryNames(query, USAGE_QUERY);
  const range = readSeriesRange(query, deps.clock.now());
  const report = deps.usage.keyUsage(key.id, range);
  const meterId = deps.metering.meterOf(key);
  const window = await deps.keyLimiter.peek(meterId, key.rate_limit);
  const from = isoTime(range.fromMs);
  const to = isoTime(range.toMs);
  return {
    key_id: key.id,
    granularity: range.granularity,
    from,
    to,
    totals: report.totals,
    endpoints: report.endpoints,
    series: { granularity: range.granularity, from, to, points: report.points },
    window: { limit: window.limit, remaining: window.remaining, reset: resetUnixSeconds(window, deps.clock) },
    // Shared by the user's keys on the plan, as the window is; null for a plan with no quota (or no plans module).
    quota: deps.metering.quotas === null ? null : await deps.metering.quotas.viewOf(key, meterId),
  };
}

/** The page of `userId`'s listings with their views and impressions, sorted as asked, and the totals over all of them. */
export function listingStatsBody(reader: RecordReader, usage: UsageReader, query: URLSearchParams, userId: string) {
  checkQueryNames(query, LISTINGS_QUERY);
  const request = readPageRequest(query);
  const sort = readSort(query);
  const span = readHourSpan(query);
  const rows: ListingStats[] = [];
  const totals = { views: 0, impressions: 0 };
  // Archived listings included: their views so far still belong to their owner.
  for (const listing of reader.values(LISTINGS)) {
    if (listing.owner_id !== userId) continue;
    const counts = usage.listingCounts(listing.id, span);
    rows.push({ listing_id: listing.id, title: listing.title, status: listing.status, ...counts });
    totals.views += counts.views;
    totals.impressions += counts.impressions;
  }
  rows.sort(comparatorOf(sort));
  const page = pageOf(rows, request);
  return { data: page.data, pagination: page.pagination, totals };
}

function readSort(query: URLSearchParams): ListingStatsSort {
  const sort = query.get('sort') ?? '-views';
  if (!(LISTING_STATS_SORTS as readonly string[]).includes(sort)) {
    throw badRequest(`Query parameter "sort" must be one of: ${LISTING_STATS_SORTS.join(', ')}.`, { sort: `must be one of ${LISTING_STATS_SORTS.join(', ')}` });
  }
  return sort as ListingStatsSort;
}

/** Orders by the chosen count, ties by listing id so pages are stable. */
function comparatorOf(sort: ListingStatsSort): (left: ListingStats, right: ListingStats) => number {
  const field = sort.endsWith('views') ? 'views' : 'impressions';
  const direction = sort.startsWith('-') ? -1 : 1;
  return (left, right) => (left[field] - right[field]) * direction || (left.listing_id < right.listing_id ? -1 : left.listing_id > right.listing_id ? 1 : 0);
}
