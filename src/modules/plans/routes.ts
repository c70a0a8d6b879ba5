// The operator's plans and plan requests under /admin/v1 (contract section 20): read and replace
// the plan list, list requests, approve or decline them (the rules are plan-list.ts and
// src/resources/plan-requests.ts). Every write commits its audit entry with the change.

import type { AuditLog } from '../../audit/audit-log.ts';
import type { Clock } from '../../clock.ts';
import { OPERATOR } from '../../domain/actor.ts';
import { newestFirst } from '../../domain/order.ts';
import { decidePlanRequestDecision, PLAN_REQUEST_STATUSES, planRequestView, readDecisionNote } from '../../resources/plan-requests.ts';
import { decidePlanListReplace } from './plan-list.ts';
import { currentPlans, readPlanList } from '../../auth/plans.ts';
import { PLAN_REQUESTS, type Plan, type PlanRequestStatus } from '../../domain/records.ts';
import { badRequest } from '../../domain/errors.ts';
import { checkQueryNames, pageOf, readPageRequest } from '../../http/lists.ts';
import type { AdminRoute, Reply, RequestContext } from '../../http/route.ts';
import type { Store } from '../../store/store.ts';
import type { EventOutbox } from '../../domain/events.ts';

export interface PlanRoutesDeps {
  store: Store;
  clock: Clock;
  audit: AuditLog;
  outbox: EventOutbox;
}

export function planRoutes({ store, clock, audit, outbox }: PlanRoutesDeps): AdminRoute[] {
  function listPlans(): Reply {
    return { status: 200, body: { data: currentPlans(store) } };
  }

  /** Replaces the list; keys on a plan whose limit changed move with it (plan-list.ts). */
  async function replacePlans(context: RequestContext): Promise<Reply> {
    const plans = readPlanList(await context.readJsonBody());
    return context.commit((tx) => {
      const { ops, result: { before, relimited } } = decidePlanListReplace(tx, OPERATOR, { plans }, clock.now());
      const changes = { plans: { from: before.map(planSummary), to: plans.map(planSummary) }, keys_relimited: relimited };
      return { ops: [...ops, audit.entryOp(context.requestId, { action: 'plans.replace', target_type: 'plan', target_id: 'plans', changes })], result: { status: 200, body: { data: plans } } };
    });
  }

  function listPlanRequests(context: RequestContext): Reply {
    checkQueryNames(context.query, ['status', 'page', 'limit']);
    const status = context.query.get('status');
    if (status !== null && !PLAN_REQUEST_STATUSES.includes(status as PlanRequestStatus)) {
      throw badRequest(`status must be one of ${PLAN_REQUEST_STATUSES.join(', ')}.`, { status: 'is not a request status' });
    }
    const request = readPageRequest(context.query);
    const found = [...store.values(PLAN_REQUESTS)].filter((entry) => status === null || entry.status === status).sort(newestFirst);
    const page = pageOf(found, request);
    return { status: 200, body: { data: page.data.map(planRequestView), pagination: page.pagination } };
  }

  /** The optional `{note}` the user will read with the decision; no body at all means no note. */
  async function readNote(context: RequestContext): Promise<string | null> {
    const headers = context.req.headers;
    const hasBody = headers['transfer-encoding'] !== undefined || Number(headers['content-length'] ?? 0) > 0;
    if (!hasBody) return null;
    return readDecisionNote(await context.readJsonBody());
  }

  function decide(decision: 'approved' | 'declined') {
    return async (context: RequestContext): Promise<Reply> => {
      const note = await readNote(context);
      return context.commit((tx) => {
        const { ops, result: decided } = decidePlanRequestDecision(tx, OPERATOR, { requestId: context.params.id!, decision, note }, clock.now());
        const changes = { status: { from: 'pending', to: decision }, key_id: decided.request.key_id, plan: decided.request.plan };
        const action = decision === 'approved' ? 'plan_request.approve' : 'plan_request.decline';
        return {
          ops: [
            ...ops,
            // The user's webhooks hear of the decision in the same write.
            ...outbox.eventOps(tx, 'plan_request.decided', decided.request.user_id, planRequestView(decided.request)),
            audit.entryOp(context.requestId, { action, target_type: 'plan', target_id: decided.request.id, changes }),
          ],
          result: { status: 200, body: { data: planRequestView(decided.request) } },
        };
      });
    };
  }

  return [
    { method: 'GET', pattern: '/admin/v1/plans', summary: 'The plans (tiers of requests per minute)', handle: listPlans },
    { method: 'PUT', pattern: '/admin/v1/plans', summary: 'Replace the plans', handle: replacePlans },
    { method: 'GET', pattern: '/admin/v1/plan-requests', summary: "Users' requests for plans they cannot pick themselves", handle: listPlanRequests },
    { method: 'POST', pattern: '/admin/v1/plan-requests/:id/approve', summary: "Approve a plan request: the key's plan and limit change at once", handle: decide('approved') },
    { method: 'POST', pattern: '/admin/v1/plan-requests/:id/decline', summary: 'Decline a plan request', handle: decide('declined') },
  ];
}

function planSummary(plan: Plan): string {
  return `${plan.id}:${plan.rate_limit}${plan.self_service ? '' : ' (on request)'}`;
}
