// The rules of the plan list, with no request in sight: replacing it. Keys on a plan whose
// limit changed get the new limit in the same write; a plan still used by an active key cannot
// be removed (409), so no key is ever left on a plan that is gone. Reading the list from a body
// is auth/plans.ts's readPlanList(), which the key rules share.

import { currentPlans, PLAN_LIST_ID } from '../../auth/plans.ts';
import { isoTime } from '../../clock.ts';
import { conflict } from '../../domain/errors.ts';
import { KEYS, PLANS, type KeyRecord, type Plan, type PlanListRecord } from '../../domain/records.ts';
import type { OperatorActor } from '../../domain/actor.ts';
import type { WriteOp } from '../../store/format.ts';
import type { Decision, Transaction } from '../../store/transaction.ts';

/** What replacing the plan list left: the list it replaced, and how many keys' limits moved. */
export interface PlanListReplaced {
  before: readonly Plan[];
  relimited: number;
}

/** The operator replacing the plan list with `plans`: the list's op and one per key whose limit moves. */
export function decidePlanListReplace(tx: Transaction, _actor: OperatorActor, input: { plans: Plan[] }, nowMs: number): Decision<PlanListReplaced> {
  const { plans } = input;
  const before = currentPlans(tx);
  const byId = new Map(plans.map((plan) => [plan.id, plan]));
  const now = isoTime(nowMs);
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
  return { ops, result: { before, relimited } };
}
