// GET /admin/v1/keys/:id/usage: the operator's view of any key's usage, the same answer the key's
// owner gets from /v1/analytics/usage (handlers/v1/analytics.ts); the reading is resources/usage.ts.
// (Setting a key's quota count is the plans module's: src/modules/plans/quota-route.ts.)

import { KEYS } from '../../domain/records.ts';
import { notFound } from '../../domain/errors.ts';
import type { AdminRoute, Reply, RequestContext } from '../../http/route.ts';
import type { Store } from '../../store/store.ts';
import { usageBody, type UsageAnswerDeps } from '../../resources/usage.ts';

export interface AdminUsageRouteDeps extends UsageAnswerDeps {
  /** Where the key is found. */
  store: Store;
}

export function adminUsageRoute(deps: AdminUsageRouteDeps): AdminRoute {
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
