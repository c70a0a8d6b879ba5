// The /v1 analytics endpoints (contract section 11): the calling key's usage (totals, per
// endpoint, a time series and its current rate-limit window) and views and impressions of the
// caller's own listings. The operator reads any key's usage through handlers/admin/key-usage.ts;
// the readings are resources/usage.ts.

import type { ApiRoute, KeyContext, Reply } from '../../http/route.ts';
import type { Store } from '../../store/store.ts';
import { listingStatsBody, usageBody, type UsageAnswerDeps } from '../../resources/usage.ts';

export interface AnalyticsRoutesDeps extends UsageAnswerDeps {
  /** Where the caller's listings are found (archived ones too). */
  store: Store;
}

export function analyticsRoutes(deps: AnalyticsRoutesDeps): ApiRoute[] {
  async function usage(context: KeyContext): Promise<Reply> {
    return { status: 200, body: { data: await usageBody(deps, context.query, context.key) } };
  }

  function listings(context: KeyContext): Reply {
    return { status: 200, body: listingStatsBody(deps.store, deps.usage, context.query, context.user.id) };
  }

  return [
    { method: 'GET', pattern: '/v1/analytics/usage', resource: 'analytics', summary: 'API usage of the calling key', handle: usage },
    { method: 'GET', pattern: '/v1/analytics/listings', resource: 'analytics', summary: 'Views and impressions of your listings', handle: listings },
  ];
}
