// The analytics endpoints (contract section 11): a key's usage (totals, per endpoint, a time
// series and its current rate-limit window) for the calling key under /v1 and for any key under
// /admin/v1, and views and impressions of the caller's own listings.

import type { ListingCounts, UsageReader } from '../analytics/reader.ts';
import { readHourSpan, readSeriesRange } from '../analytics/time-range.ts';
import { isoTime, type Clock } from '../clock.ts';
import { KEYS, LISTINGS, type KeyRecord, type ListingStatus } from '../domain/records.ts';
import { badRequest, notFound } from '../domain/errors.ts';
import { checkQueryNames, pageOf, readPageRequest } from '../http/lists.ts';
import { resetUnixSeconds } from '../http/rate-limit-headers.ts';
import type { ApiRoute, KeyContext, OperatorRoute, Reply, RequestContext } from '../http/route.ts';
import type { RateDecision } from '../limits/sliding-window.ts';
import type { Store } from '../store/store.ts';

/** The key limiter, read without counting a request (at once in-process, a promise from Redis). */
export interface RateWindowPeek {
  peek(keyId: string, limit: number): RateDecision | Promise<RateDecision>;
}

/** What answering a usage query needs. */
export interface UsageAnswerDeps {
  clock: Clock;
  usage: UsageReader;
  keyLimiter: RateWindowPeek;
}

export interface AnalyticsRoutesDeps extends UsageAnswerDeps {
  /** Where the caller's listings are found (archived ones too). */
  store: Store;
}

export interface OperatorUsageRouteDeps extends UsageAnswerDeps {
  /** Where the key is found. */
  store: Store;
}

const USAGE_QUERY = ['granularity', 'from', 'to'];
const LISTINGS_QUERY = ['page', 'limit', 'sort', 'from', 'to'];
export const LISTING_STATS_SORTS = ['-views', 'views', '-impressions', 'impressions'] as const;
type ListingStatsSort = (typeof LISTING_STATS_SORTS)[number];

interface ListingStats extends ListingCounts {
  listing_id: string;
  title: string;
  status: ListingStatus;
}

export function analyticsRoutes(deps: AnalyticsRoutesDeps): ApiRoute[] {
  async function usage(context: KeyContext): Promise<Reply> {
    return { status: 200, body: { data: await usageBody(deps, context.query, context.key) } };
  }

  function listings(context: KeyContext): Reply {
    checkQueryNames(context.query, LISTINGS_QUERY);
    const request = readPageRequest(context.query);
    const sort = readSort(context.query);
    const span = readHourSpan(context.query);
    const rows: ListingStats[] = [];
    const totals = { views: 0, impressions: 0 };
    // Archived listings included: their views so far still belong to their owner.
    for (const listing of deps.store.values(LISTINGS)) {
      if (listing.owner_id !== context.user.id) continue;
      const counts = deps.usage.listingCounts(listing.id, span);
      rows.push({ listing_id: listing.id, title: listing.title, status: listing.status, ...counts });
      totals.views += counts.views;
      totals.impressions += counts.impressions;
    }
    rows.sort(comparatorOf(sort));
    const page = pageOf(rows, request);
    return { status: 200, body: { data: page.data, pagination: page.pagination, totals } };
  }

  return [
    { method: 'GET', pattern: '/v1/analytics/usage', resource: 'analytics', summary: 'API usage of the calling key', handle: usage },
    { method: 'GET', pattern: '/v1/analytics/listings', resource: 'analytics', summary: 'Views and impressions of your listings', handle: listings },
  ];
}

/** GET /admin/v1/keys/:id/usage: the same answer as /v1/analytics/usage, for any key. */
export function operatorUsageRoute(deps: OperatorUsageRouteDeps): OperatorRoute {
  return {
    method: 'GET',
    pattern: '/admin/v1/keys/:id/usage',
    summary: 'API usage of one key',
    async handle(context: RequestContext): Promise<Reply> {
      const key = deps.store.get(KEYS, context.params.id!);
      if (!key) throw notFound('Key');
      return { status: 200, body: { data: await usageBody(deps, context.query, key) } };
    },
  };
}

/** The usage answer for `key` (GET /v1/analytics/usage, the operator's and the portal's per-key usage). */
export async function usageBody(deps: UsageAnswerDeps, query: URLSearchParams, key: KeyRecord) {
  checkQueryNames(query, USAGE_QUERY);
  const range = readSeriesRange(query, deps.clock.now());
  const report = deps.usage.keyUsage(key.id, range);
  const window = await deps.keyLimiter.peek(key.id, key.rate_limit);
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
  };
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
