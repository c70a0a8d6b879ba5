// Plan requests: a user asks for a plan they may not pick themselves; the operator approves
// (the key moves to the plan, and its limit with it, in the same write) or declines, with an
// optional note the user reads; the user may cancel while it is pending. One pending request
// per key at a time, none for a key that is revoked or expired, at most 10 a user a day.
// The rules only, with no request in sight: the portal and /admin/v1 call them, each as
// `decideX(tx, actor, input, now)` (src/domain/actor.ts), returning the store's Decision.

import { isoTime } from '../clock.ts';
import { assertPlanChangeable, existingPlan, onPlan, ownKey } from './keys.ts';
import { badRequest, conflict, notFound } from '../domain/errors.ts';
import type { OperatorActor, UserActor } from '../domain/actor.ts';
import type { WriteOp } from '../store/format.ts';
import type { Decision, Transaction } from '../store/transaction.ts';
import { newId } from '../domain/ids.ts';
import { planById } from '../auth/plans.ts';
import { isExpired } from '../auth/key-lifetime.ts';
import { KEYS, PLAN_REQUESTS, type KeyRecord, type PlanRequestRecord, type PlanRequestStatus } from '../domain/records.ts';
import { BodyChecker } from '../http/validation.ts';
import { assertWithinDailyLimit, PLAN_REQUESTS_PER_DAY } from '../domain/daily-limits.ts';

export const PLAN_REQUEST_STATUSES: readonly PlanRequestStatus[] = ['pending', 'approved', 'declined', 'cancelled'];

/** The longest operator's note on a decision. */
export const MAX_PLAN_REQUEST_NOTE = 500;

/** A request as its answers show it: `note` always present (null on requests made before notes). */
export function planRequestView(request: PlanRequestRecord): PlanRequestRecord {
  return { ...request, note: request.note ?? null };
}

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

/** The operator's optional note on a decision, from `{note}`; an empty note is none. Throws one 400. */
export function readDecisionNote(body: Record<string, unknown>): string | null {
  const checker = new BodyChecker(body, ['note']);
  const note = checker.string('note', 0, MAX_PLAN_REQUEST_NOTE);
  checker.finish();
  return note ? note : null;
}

/** A new pending request, and the key it is for. */
export interface PlanRequestMade {
  request: PlanRequestRecord;
  key: KeyRecord;
}

/** A decided request, and its key moved to the plan (null when declined). */
export interface PlanRequestDecided {
  request: PlanRequestRecord;
  key: KeyRecord | null;
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

/** The operator deciding a pending request; approval moves the key to the plan in the same write. */
export function decidePlanRequestDecision(
  tx: Transaction,
  _actor: OperatorActor,
  input: { requestId: string; decision: 'approved' | 'declined'; note: string | null },
  nowMs: number,
): Decision<PlanRequestDecided> {
  const { requestId, decision, note } = input;
  const request = tx.get(PLAN_REQUESTS, requestId);
  if (!request) throw notFound('Plan request');
  if (request.status !== 'pending') throw conflict(`This plan request was already ${request.status}.`);
  const now = isoTime(nowMs);
  const decided: PlanRequestRecord = { ...request, status: decision, decided_at: now, note };
  const ops: WriteOp[] = [{ op: 'put', collection: PLAN_REQUESTS, id: requestId, data: decided }];
  if (decision === 'declined') return { ops, result: { request: decided, key: null } };
  const key = tx.get(KEYS, request.key_id);
  if (!key) throw conflict('The key of this plan request no longer exists; decline it.');
  if (key.revoked_at !== null) throw conflict('The key of this plan request is revoked; decline it.');
  if (isExpired(key, nowMs)) throw conflict('The key of this plan request has expired; decline it.');
  const plan = planById(tx, request.plan);
  if (!plan) throw conflict(`Plan ${request.plan} no longer exists; decline the request.`);
  const moved: KeyRecord = { ...onPlan(key, plan), updated_at: now };
  ops.push({ op: 'put', collection: KEYS, id: key.id, data: moved });
  return { ops, result: { request: decided, key: moved } };
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
