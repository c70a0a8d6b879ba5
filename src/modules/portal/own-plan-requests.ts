// A user's own plan requests in the portal, with no request in sight: asking for a plan she may
// not pick herself (one pending request per key, none for a key that is revoked or expired, at
// most 10 a day) and cancelling one while it is pending. The operator decides them
// (src/resources/plan-requests.ts). Each as `decideX(tx, actor, input, now)`, returning the
// store's Decision.

import { isoTime } from '../../clock.ts';
import { existingPlan } from '../../resources/key-plans.ts';
import { assertPlanChangeable, ownKey } from '../../resources/keys.ts';
import { badRequest, conflict, notFound } from '../../domain/errors.ts';
import type { UserActor } from '../../domain/actor.ts';
import type { Decision, Transaction } from '../../store/transaction.ts';
import { newId } from '../../domain/ids.ts';
import { PLAN_REQUESTS, type KeyRecord, type PlanRequestRecord } from '../../domain/records.ts';
import { BodyChecker } from '../../http/validation.ts';
import { assertWithinDailyLimit, PLAN_REQUESTS_PER_DAY } from './daily-limits.ts';

/** What a user sends to ask for a plan. */
export interface PlanRequestFields {
  keyId: string;
  planId: string;
}

/** A plan request's body (`key_id` and `plan`, both required); throws one 400 naming every problem. */
export function readPlanRequest(body: Record<string, unknown>): PlanRequestFields {
  const checker = new BodyChecker(body, ['key_id', 'plan'], ['id', 'status', 'user_id', 'created_at', 'decided_at']);
  checker.requireFields(['key_id', 'plan']);
  const keyId = checker.string('key_id', 1, 100);
  const planId = checker.string('plan', 1, 40);
  checker.finish();
  return { keyId: keyId!, planId: planId! };
}

/** A new pending request, and the key it is for. */
export interface PlanRequestMade {
  request: PlanRequestRecord;
  key: KeyRecord;
}

/**
 * A user asking for a plan for her own key (404 for anyone else's): the new pending request,
 * counted on the requests as they are when the write commits (10 a day, also across instances).
 */
export function decideOwnPlanRequest(tx: Transaction, actor: UserActor, input: { fields: PlanRequestFields }, nowMs: number): Decision<PlanRequestMade> {
  const { user } = actor;
  const { fields } = input;
  const key = ownKey(tx, fields.keyId, user);
  const request = newPlanRequest(tx, key, fields.planId, nowMs);
  const mine = [...tx.values(PLAN_REQUESTS)].filter((earlier) => earlier.user_id === user.id).map((earlier) => earlier.created_at);
  assertWithinDailyLimit(mine, PLAN_REQUESTS_PER_DAY, nowMs, 'plan requests');
  return { ops: [{ op: 'put', collection: PLAN_REQUESTS, id: request.id, data: request }], result: { request, key } };
}

/** A new pending request for `key` to move to `planId` (which must exist and not be self-service). */
export function newPlanRequest(tx: Transaction, key: KeyRecord, planId: string, nowMs: number): PlanRequestRecord {
  assertPlanChangeable(key, nowMs);
  const plan = existingPlan(tx, planId);
  if (plan.self_service) throw badRequest(`The request body is invalid: plan ${plan.id} is self-service; switch the key to it with PATCH instead.`, { plan: 'is self-service' });
  if (key.plan === plan.id) throw conflict(`The key is already on plan ${plan.id}.`);
  for (const request of tx.values(PLAN_REQUESTS)) {
    if (request.key_id === key.id && request.status === 'pending') throw conflict(`The key already has a pending plan request (${request.id}); wait for the operator's decision.`);
  }
  return { id: newId('prq'), key_id: key.id, user_id: key.user_id, plan: plan.id, status: 'pending', created_at: isoTime(nowMs), decided_at: null, note: null };
}

/** The acting user cancelling her own pending request; anyone else's is 404, a decided one 409. The result is the cancelled request. */
export function decidePlanRequestCancel(tx: Transaction, actor: UserActor, input: { requestId: string }, nowMs: number): Decision<PlanRequestRecord> {
  const { requestId } = input;
  const request = tx.get(PLAN_REQUESTS, requestId);
  if (!request || request.user_id !== actor.user.id) throw notFound('Plan request');
  if (request.status !== 'pending') throw conflict(`This plan request was already ${request.status}.`);
  const cancelled: PlanRequestRecord = { ...request, status: 'cancelled', decided_at: isoTime(nowMs), note: request.note ?? null };
  return { ops: [{ op: 'put', collection: PLAN_REQUESTS, id: requestId, data: cancelled }], result: cancelled };
}
