// Plans in the developer portal: the plans the operator offers, and requests for a plan the
// user may not pick themselves (the operator approves or declines them under /admin/v1; the
// user follows them here and may cancel a pending one). A
// self-service plan is switched to directly with PATCH /portal/v1/keys/:id. Audited with the
// user as actor.

import type { AuditLog } from '../../../audit/audit-log.ts';
import { userActor } from '../../../audit/audit-log.ts';
import type { Clock } from '../../../clock.ts';
import { actingUser } from '../../../domain/actor.ts';
import { newestFirst } from '../../../domain/order.ts';
import { planRequestView } from '../../../resources/plan-requests.ts';
import { decideOwnPlanRequest, decidePlanRequestCancel, readPlanRequest } from '../own-plan-requests.ts';
import { currentPlans } from '../../../auth/plans.ts';
import { PLAN_REQUESTS } from '../../../domain/records.ts';
import { checkQueryNames, pageOf, readPageRequest } from '../../../http/lists.ts';
import type { PortalContext, PortalRoute, Reply } from '../../../http/route.ts';
import type { Store } from '../../../store/store.ts';

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
      const { ops, result: cancelled } = decidePlanRequestCancel(tx, actingUser(user), { requestId: context.params.id! }, clock.now());
      const changes = { status: { from: 'pending', to: 'cancelled' }, key_id: cancelled.key_id, plan: cancelled.plan };
      return {
        ops: [...ops, audit.entryOp(context.requestId, { action: 'portal.plan_request_cancel', target_type: 'plan', target_id: cancelled.id, changes, actor: userActor(user.id) })],
        result: { status: 200, body: { data: planRequestView(cancelled) } },
      };
    });
  }

  async function requestPlan(context: PortalContext): Promise<Reply> {
    const fields = readPlanRequest(await context.readJsonBody());
    return context.commit((tx, user) => {
      const { ops, result: { request, key } } = decideOwnPlanRequest(tx, actingUser(user), { fields }, clock.now());
      return {
        ops: [
          ...ops,
          audit.entryOp(context.requestId, { action: 'portal.plan_request', target_type: 'plan', target_id: request.id, changes: { key_id: key.id, plan: request.plan }, actor: userActor(user.id) }),
        ],
        result: { status: 201, body: { data: planRequestView(request) } },
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
