// Plans in the developer portal: the plans the operator offers, and requests for a plan the
// user may not pick themselves (the operator approves or declines them under /admin/v1; the
// user follows them here and may cancel a pending one). A
// self-service plan is switched to directly with PATCH /portal/v1/keys/:id. Audited with the
// user as actor.

import type { AuditLog } from '../audit/audit-log.ts';
import type { Clock } from '../clock.ts';
import { newestFirst } from '../domain/order.ts';
import { cancelPlanRequest, newPlanRequest, planRequestView } from './plan-requests.ts';
import { currentPlans } from '../auth/plans.ts';
import { PLAN_REQUESTS } from '../domain/records.ts';
import { checkQueryNames, pageOf, readPageRequest } from '../http/lists.ts';
import type { PortalContext, PortalRoute, Reply } from '../http/route.ts';
import { BodyChecker } from '../http/validation.ts';
import type { Store } from '../store/store.ts';
import { assertWithinDailyLimit, PLAN_REQUESTS_PER_DAY } from '../portal/daily-limits.ts';
import { ownKey } from './portal-keys.ts';

export interface PortalPlanRoutesDeps {
  store: Store;
  clock: Clock;
  audit: AuditLog;
}

export function portalPlanRoutes({ store, clock, audit }: PortalPlanRoutesDeps): PortalRoute[] {
  function listPlans(): Reply {
    return { status: 200, body: { data: currentPlans(store) } };
  }

  function listRequests(context: PortalContext): Reply {
    checkQueryNames(context.query, ['key_id', 'page', 'limit']);
    const keyId = context.query.get('key_id');
    const mine = [...store.values(PLAN_REQUESTS)]
      .filter((request) => request.user_id === context.user.id && (keyId === null || request.key_id === keyId))
      .sort(newestFirst);
    const page = pageOf(mine, readPageRequest(context.query));
    return { status: 200, body: { data: page.data.map(planRequestView), pagination: page.pagination } };
  }

  function cancelRequest(context: PortalContext): Promise<Reply> {
    return context.commit((tx, user) => {
      const cancelled = cancelPlanRequest(tx, context.params.id!, user.id, clock.now());
      const changes = { status: { from: 'pending', to: 'cancelled' }, key_id: cancelled.request.key_id, plan: cancelled.request.plan };
      return {
        ops: [...cancelled.ops, audit.entryOp(context.requestId, { action: 'portal.plan_request_cancel', target_type: 'plan', target_id: cancelled.request.id, changes, actor: { type: 'user', id: user.id } })],
        reply: { status: 200, body: { data: planRequestView(cancelled.request) } },
      };
    });
  }

  async function requestPlan(context: PortalContext): Promise<Reply> {
    const checker = new BodyChecker(await context.readJsonBody(), ['key_id', 'plan'], ['id', 'status', 'user_id', 'created_at', 'decided_at']);
    checker.requireFields(['key_id', 'plan']);
    const keyId = checker.string('key_id', 1, 100);
    const planId = checker.string('plan', 1, 40);
    checker.finish();
    return context.commit((tx, user) => {
      const key = ownKey(tx, keyId!, user);
      const request = newPlanRequest(tx, key, planId!, clock.now());
      // Counted on the requests as they are when the write commits (also across instances).
      const mine = [...tx.values(PLAN_REQUESTS)].filter((earlier) => earlier.user_id === user.id).map((earlier) => earlier.created_at);
      assertWithinDailyLimit(mine, PLAN_REQUESTS_PER_DAY, clock.now(), 'plan requests');
      return {
        ops: [
          { op: 'put', collection: PLAN_REQUESTS, id: request.id, data: request },
          audit.entryOp(context.requestId, { action: 'portal.plan_request', target_type: 'plan', target_id: request.id, changes: { key_id: key.id, plan: request.plan }, actor: { type: 'user', id: user.id } }),
        ],
        reply: { status: 201, body: { data: planRequestView(request) } },
      };
    });
  }

  return [
    { method: 'GET', pattern: '/portal/v1/plans', summary: 'The plans: requests per minute, and whether you may pick each yourself', handle: listPlans },
    { method: 'GET', pattern: '/portal/v1/plan-requests', summary: 'Your plan requests and their decisions', handle: listRequests },
    { method: 'POST', pattern: '/portal/v1/plan-requests', summary: 'Ask the operator for a plan that is not self-service', handle: requestPlan },
    { method: 'DELETE', pattern: '/portal/v1/plan-requests/:id', summary: 'Cancel one of your pending plan requests', handle: cancelRequest },
  ];
}
