// The plan list rule (src/modules/plans/plan-list.ts) as a table, without a server: a new list in, the
// ops replacing it (keys whose plan's limit moved move with it) or the 409 for a plan an active
// key still uses. Decided on a memory store's Transaction.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { OPERATOR } from '../../src/domain/actor.ts';
import type { Plan } from '../../src/domain/records.ts';
import { decidePlanListReplace } from '../../src/modules/plans/plan-list.ts';
import { aKey, aUser, decideOnly, openRulesStore, opSummary, refusalOf, seedOps, START } from './rules-store.ts';

const free: Plan = { id: 'free', name: 'Free', rate_limit: 100, self_service: true };
const pro: Plan = { id: 'pro', name: 'Pro', rate_limit: 1_000, self_service: true };

test('replacing the plan list: limits follow the plan, and no active key is left on a plan that is gone', async (t) => {
  const { store } = await openRulesStore(t);
  const keys = [aKey('key_free', 'usr_a'), aKey('key_pro', 'usr_a', { plan: 'pro', rate_limit: 1_000 }), aKey('key_own_limit', 'usr_a', { plan: null, rate_limit: 7 }), aKey('key_old_pro', 'usr_a', { plan: 'pro', revoked_at: START })];
  await store.write(seedOps({ users: [aUser('usr_a')], keys }));
  const cases: Array<{ label: string; plans: Plan[]; ops?: string[]; relimited?: number; status?: number }> = [
    { label: 'the same limits', plans: [free, pro], ops: ['put plans'], relimited: 0 },
    { label: 'pro doubled', plans: [free, { ...pro, rate_limit: 2_000 }], ops: ['put plans', 'put keys'], relimited: 1 },
    { label: 'both changed', plans: [{ ...free, rate_limit: 50 }, { ...pro, rate_limit: 500 }], ops: ['put plans', 'put keys', 'put keys'], relimited: 2 },
    { label: 'pro gone while a live key is on it', plans: [free], status: 409 },
  ];
  for (const { label, plans, ops, relimited, status } of cases) {
    const refusal = await refusalOf(() => decideOnly(store, (tx) => decidePlanListReplace(tx, OPERATOR, { plans }, Date.parse(START))));
    if (status !== undefined) {
      assert.equal(refusal?.status, status, label);
      continue;
    }
    const decided = await decideOnly(store, (tx) => decidePlanListReplace(tx, OPERATOR, { plans }, Date.parse(START)));
    assert.deepEqual([opSummary(decided.ops), decided.result.relimited], [ops, relimited], label);
    assert.deepEqual(decided.result.before.map((plan) => plan.id), ['free', 'pro', 'business'], `${label}: the defaults it replaces`);
  }
});
