// The operator's plans and plan requests under /admin/v1 (contract section 20): read and replace
// the plan list, list requests, approve or decline them. Every write commits its audit entry
// with the change.

import type { AuditLog } from '../audit/audit-log.ts';
import type { Clock } from '../clock.ts';
import { isoTime } from '../clock.ts';
import { newestFirst } from '../domain/order.ts';
import { decidePlanRequest, MAX_PLAN_REQUEST_NOTE, PLAN_REQUEST_STATUSES, planRequestView } from './plan-requests.ts';
import { BodyChecker } from '../http/validation.ts';
import { currentPlans, PLAN_LIST_ID, readPlanList } from '../auth/plans.ts';
import { KEYS, PLAN_REQUESTS, PLANS, type KeyRecord, type Plan, type PlanListRecord, type PlanRequestStatus } from '../domain/records.ts';
import { badRequest, conflict } from '../domain/errors.ts';
import { checkQueryNames, pageOf, readPageRequest } from '../http/lists.ts';
import type { OperatorRoute, Reply, RequestContext } from '../http/route.ts';
import type { WriteOp } from '../store/format.ts';
import type { Store } from '../store/store.ts';

export interface PlanRoutesDeps {
  store: Store;
  clock: Clock;
  audit: AuditLog;
}

export function planRoutes({ store, clock, audit }: PlanRoutesDeps): OperatorRoute[] {
  function listPlans(): Reply {
    return { status: 200, body: { data: currentPlans(store) } };
  }

  /**
   * Replaces the list. Keys on a plan whose limit changed get the new limit in the same write;
   * a plan still used by an active key cannot be removed (409), so no key is left on a plan
   * that is gone.
   */
  async function replacePlans(context: RequestContext): Promise<Reply> {
    const plans = readPlanList(await context.readJsonBody());
    return context.commit((tx) => {
      const before = currentPlans(tx);
      const byId = new Map(plans.map((plan) => [plan.id, plan]));
      const now = isoTime(clock.now());
      const list: PlanListRecord = { id: PLAN_LIST_ID, plans, updated_at: now };
      const ops: WriteOp[] = [{ op: 'put', collection: PLANS, id: PLAN_LIST_ID, data: list }];
      let relimited = 0;
      for (const key of tx.values(KEYS)) {
        if (key.revoked_at !== null || !key.plan) continue;
        const plan = byId.get(key.plan);
        if (!plan) throw conflict(`Plan ${key.plan} is still used by active key ${key.id}; move its keys to another plan first.`);
        if (plan.rate_limit !== key.rate_limit) {
          const changed: KeyRecord = { ...key, rate_limit: plan.rate_limit, updated_at: now };
          ops.push({ op: 'put', collection: KEYS, id: key.id, data: changed });
          relimited += 1;
        }
      }
      const changes = { plans: { from: before.map(planSummary), to: plans.map(planSummary) }, keys_relimited: relimited };
      ops.push(audit.entryOp(context.requestId, { action: 'plans.replace', target_type: 'plan', target_id: 'plans', changes }));
      return { ops, reply: { status: 200, body: { data: plans } } };
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
    const checker = new BodyChecker(await context.readJsonBody(), ['note']);
    const note = checker.string('note', 0, MAX_PLAN_REQUEST_NOTE);
    checker.finish();
    return note ? note : null;
  }

  function decide(decision: 'approved' | 'declined') {
    return async (context: RequestContext): Promise<Reply> => {
      const note = await readNote(context);
      return context.commit((tx) => {
        const decided = decidePlanRequest(tx, context.params.id!, decision, note, clock.now());
        const changes = { status: { from: 'pending', to: decision }, key_id: decided.request.key_id, plan: decided.request.plan };
        const action = decision === 'approved' ? 'plan_request.approve' : 'plan_request.decline';
        return {
          ops: [...decided.ops, audit.entryOp(context.requestId, { action, target_type: 'plan', target_id: decided.request.id, changes })],
          reply: { status: 200, body: { data: planRequestView(decided.request) } },
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
