// GET /admin/v1/webhooks: the operator's read-only list of webhooks for the dashboard, every
// user's or one user's, never with a secret. A user's own webhook routes are handlers/v1/webhooks.ts.

import { newestFirst } from '../../domain/order.ts';
import { WEBHOOKS } from '../../domain/records.ts';
import { badRequest } from '../../domain/errors.ts';
import { operatorWebhookView } from '../../domain/webhook-records.ts';
import { checkQueryNames, pageOf, readPageRequest } from '../../http/lists.ts';
import type { AdminRoute, Reply, RequestContext } from '../../http/route.ts';
import type { Store } from '../../store/store.ts';
import type { WebhookOutbox } from '../../webhooks/outbox.ts';

export interface AdminWebhookRouteDeps {
  store: Store;
  outbox: WebhookOutbox;
}

/** GET /admin/v1/webhooks?user_id=&page=&limit=: every webhook, or one user's; never a secret. */
export function adminWebhookRoutes(deps: AdminWebhookRouteDeps): AdminRoute[] {
  const { store, outbox } = deps;

  function list(context: RequestContext): Reply {
    checkQueryNames(context.query, ['user_id', 'page', 'limit']);
    const request = readPageRequest(context.query);
    const userId = context.query.get('user_id');
    if (userId === '') throw badRequest('Query parameter "user_id" must not be empty.', { user_id: 'must not be empty' });
    const webhooks = userId === null ? [...store.values(WEBHOOKS)] : outbox.webhooksOf(userId);
    return { status: 200, body: pageOf(webhooks.sort(newestFirst).map(operatorWebhookView), request) };
  }

  return [{ method: 'GET', pattern: '/admin/v1/webhooks', summary: "List webhooks (all, or one user's)", handle: list }];
}
