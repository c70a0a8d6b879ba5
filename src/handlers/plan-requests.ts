// Plan requests: a user asks for a plan they may not pick themselves; the operator approves
// (the key moves to the plan, and its limit with it, in the same write) or declines, with an
// optional note the user reads; the user may cancel while it is pending. One pending request
// per key at a time, and none for a key that is revoked or expired.

import { isoTime } from '../clock.ts';
import { assertPlanChangeable, existingPlan, onPlan } from '../http/key-fields.ts';
import { badRequest, conflict, notFound } from '../domain/errors.ts';
import type { WriteOp } from '../store/format.ts';
import type { Transaction } from '../store/transaction.ts';
import { newId } from '../domain/ids.ts';
import { planById } from '../auth/plans.ts';
import { isExpired } from '../auth/key-lifetime.ts';
import { KEYS, PLAN_REQUESTS, type KeyRecord, type PlanRequestRecord, type PlanRequestStatus } from '../domain/records.ts';

export const PLAN_REQUEST_STATUSES: readonly PlanRequestStatus[] = ['pending', 'approved', 'declined', 'cancelled'];

/** The longest operator's note on a decision. */
export const MAX_PLAN_REQUEST_NOTE = 500;

/** A request as its answers show it: `note` always present (null on requests made before notes). */
export function planRequestView(request: PlanRequestRecord): PlanRequestRecord {
  return { ...request, note: request.note ?? null };
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

/** The ops deciding a pending request; approval moves the key to the plan in the same write. */
export function decidePlanRequest(tx: Transaction, requestId: string, decision: 'approved' | 'declined', note: string | null, nowMs: number): { request: PlanRequestRecord; key: KeyRecord | null; ops: WriteOp[] } {
  const request = tx.get(PLAN_REQUESTS, requestId);
  if (!request) throw notFound('Plan request');
  if (request.status !== 'pending') throw conflict(`This plan request was already ${request.status}.`);
  const now = isoTime(nowMs);
  const decided: PlanRequestRecord = { ...request, status: decision, decided_at: now, note };
  const ops: WriteOp[] = [{ op: 'put', collection: PLAN_REQUESTS, id: requestId, data: decided }];
  if (decision === 'declined') return { request: decided, key: null, ops };
  const key = tx.get(KEYS, request.key_id);
  if (!key) throw conflict('The key of this plan request no longer exists; decline it.');
  if (key.revoked_at !== null) throw conflict('The key of this plan request is revoked; decline it.');
  if (isExpired(key, nowMs)) throw conflict('The key of this plan request has expired; decline it.');
  const plan = planById(tx, request.plan);
  if (!plan) throw conflict(`Plan ${request.plan} no longer exists; decline the request.`);
  const moved: KeyRecord = { ...onPlan(key, plan), updated_at: now };
  ops.push({ op: 'put', collection: KEYS, id: key.id, data: moved });
  return { request: decided, key: moved, ops };
}


/** The ops cancelling the user's own pending request; anyone else's is 404, a decided one 409. */
export function cancelPlanRequest(tx: Transaction, requestId: string, userId: string, nowMs: number): { request: PlanRequestRecord; ops: WriteOp[] } {
  const request = tx.get(PLAN_REQUESTS, requestId);
  if (!request || request.user_id !== userId) throw notFound('Plan request');
  if (request.status !== 'pending') throw conflict(`This plan request was already ${request.status}.`);
  const cancelled: PlanRequestRecord = { ...request, status: 'cancelled', decided_at: isoTime(nowMs), note: request.note ?? null };
  return { request: cancelled, ops: [{ op: 'put', collection: PLAN_REQUESTS, id: requestId, data: cancelled }] };
}
