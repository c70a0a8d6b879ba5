// Plan requests: a user asks for a plan they may not pick themselves; the operator approves
// (the key moves to the plan, and its limit with it, in the same write) or declines, with an
// optional note the user reads. The operator's side, with no request in sight, as
// `decideX(tx, actor, input, now)` (src/domain/actor.ts) returning the store's Decision; the
// user's side (asking, at most 10 a day, and cancelling) is the portal's
// (src/modules/portal/own-plan-requests.ts).

import { isoTime } from '../clock.ts';
import { onPlan } from './keys.ts';
import { conflict, notFound } from '../domain/errors.ts';
import type { OperatorActor } from '../domain/actor.ts';
import type { WriteOp } from '../store/format.ts';
import type { Decision, Transaction } from '../store/transaction.ts';
import { planById } from '../auth/plans.ts';
import { isExpired } from '../auth/key-lifetime.ts';
import { KEYS, PLAN_REQUESTS, type KeyRecord, type PlanRequestRecord, type PlanRequestStatus } from '../domain/records.ts';
import { BodyChecker } from '../http/validation.ts';

export const PLAN_REQUEST_STATUSES: readonly PlanRequestStatus[] = ['pending', 'approved', 'declined', 'cancelled'];

/** The longest operator's note on a decision. */
export const MAX_PLAN_REQUEST_NOTE = 500;

/** A request as its answers show it: `note` always present (null on requests made before notes). */
export function planRequestView(request: PlanRequestRecord): PlanRequestRecord {
  return { ...request, note: request.note ?? null };
}

/** The operator's optional note on a decision, from `{note}`; an empty note is none. Throws one 400. */
export function readDecisionNote(body: Record<string, unknown>): string | null {
  const checker = new BodyChecker(body, ['note']);
  const note = checker.string('note', 0, MAX_PLAN_REQUEST_NOTE);
  checker.finish();
  return note ? note : null;
}

/** A decided request, and its key moved to the plan (null when declined). */
export interface PlanRequestDecided {
  request: PlanRequestRecord;
  key: KeyRecord | null;
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
