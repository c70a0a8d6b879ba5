// The analytics endpoints (contract section 11): a key's usage (totals, per endpoint, a time
// series and its current rate-limit window) for the calling key under /v1 and for any key under
// /admin/v1, and views and impressions of the caller's own listings. The readings are
// resources/usage.ts.

import { KEYS } from '../../domain/records.ts';
import { notFound } from '../../domain/errors.ts';
import type { ApiRoute, KeyContext, OperatorRoute, Reply, RequestContext } from '../../http/route.ts';
import type { Store } from '../../store/store.ts';
import { listingStatsBody, usageBody, type UsageAnswerDeps } from '../../resources/usage.ts';

export interface AnalyticsRoutesDeps extends UsageAnswerDeps {
  /** Where the caller's listings are found (archived ones too). */
  store: Store;
}

export interface OperatorUsageRouteDeps extends UsageAnswerDeps {
  /** Where the key is found. */
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
