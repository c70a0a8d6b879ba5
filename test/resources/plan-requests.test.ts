// The plan request rules (src/resources/plan-requests.ts) as tables, without a server: a body
// in, the request read or the 400; a user and her keys in, the request a write would add or the
// refusal (a self-service plan is switched to, not asked for: 400; the same plan, one already
// pending, a revoked or expired key: 409; 10 a day: 429; another user's key: 404); the
// operator's approval (the key moves to the plan in the same write) and decline, and the
// user's cancel. Decisions run on a memory store's Transaction with the default plans.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { actingUser, OPERATOR } from '../../src/domain/actor.ts';
import { PLAN_REQUESTS, type PlanRequestRecord } from '../../src/domain/records.ts';
import { decidePlanRequestDecision, readDecisionNote } from '../../src/resources/plan-requests.ts';
import { decideOwnPlanRequest, decidePlanRequestCancel, readPlanRequest } from '../../src/modules/portal/own-plan-requests.ts';
import type { WriteOp } from '../../src/store/store.ts';
import { aKey, aUser, decideOnly, openRulesStore, opSummary, refusalOf, seedOps, START } from './rules-store.ts';

const NOW = Date.parse(START) + 60_000;
const ada = aUser('usr_ada');
const bob = aUser('usr_bob');

function aRequest(id: string, keyId: string, userId: string, extra: Partial<PlanRequestRecord> = {}): PlanRequestRecord {
  return { id, key_id: keyId, user_id: userId, plan: 'business', status: 'pending', created_at: START, decided_at: null, note: null, ...extra };
}

const putRequests = (requests: PlanRequestRecord[]): WriteOp[] => requests.map((data) => ({ op: 'put', collection: PLAN_REQUESTS, id: data.id, data }));

test('reading a plan request and a decision note: the fields, or one 400', async () => {
  assert.deepEqual(readPlanRequest({ key_id: 'key_1', plan: 'business' }), { keyId: 'key_1', planId: 'business' });
  const refused: Array<[Record<string, unknown>, string[]]> = [
    [{}, ['key_id', 'plan']],
    [{ key_id: 'key_1' }, ['plan']],
    [{ key_id: 'key_1', plan: 'business', status: 'approved' }, ['status']],
  ];
  for (const [body, fields] of refused) assert.deepEqual((await refusalOf(() => readPlanRequest(body)))?.fields, fields, JSON.stringify(body));

  const notes: Array<[Record<string, unknown>, string | null | number]> = [
    [{}, null],
    [{ note: '' }, null],
    [{ note: 'Welcome aboard' }, 'Welcome aboard'],
    [{ note: 'x'.repeat(501) }, 400],
    [{ reason: 'x' }, 400],
  ];
  for (const [body, expected] of notes) {
    if (typeof expected === 'number') assert.equal((await refusalOf(() => readDecisionNote(body)))?.status, expected, JSON.stringify(body));
    else assert.equal(readDecisionNote(body), expected, JSON.stringify(body));
  }
});

test('deciding a user\'s plan request, by her key and the plan asked for', async (t) => {
  const { store } = await openRulesStore(t);
  const keys = [
    aKey('key_free', ada.id),
    aKey('key_business', ada.id, { plan: 'business', rate_limit: 10_000 }),
    aKey('key_pending', ada.id),
    aKey('key_revoked', ada.id, { revoked_at: START }),
    aKey('key_expired', ada.id, { expires_at: START }),
    aKey('key_bob', bob.id),
  ];
  await store.write([...seedOps({ users: [ada, bob], keys }), ...putRequests([aRequest('prq_waiting', 'key_pending', ada.id)])]);
  const cases: Array<{ keyId: string; planId: string; status?: number }> = [
    { keyId: 'key_free', planId: 'business' },
    { keyId: 'key_free', planId: 'pro', status: 400 },
    { keyId: 'key_free', planId: 'gold', status: 400 },
    { keyId: 'key_business', planId: 'business', status: 409 },
    { keyId: 'key_pending', planId: 'business', status: 409 },
    { keyId: 'key_revoked', planId: 'business', status: 409 },
    { keyId: 'key_expired', planId: 'business', status: 409 },
    { keyId: 'key_bob', planId: 'business', status: 404 },
    { keyId: 'key_missing', planId: 'business', status: 404 },
  ];
  for (const { keyId, planId, status } of cases) {
    const label = `${keyId} → ${planId}`;
    const refusal = await refusalOf(() => decideOnly(store, (tx) => decideOwnPlanRequest(tx, actingUser(ada), { fields: { keyId, planId } }, NOW)));
    if (status !== undefined) {
      assert.equal(refusal?.status, status, label);
      continue;
    }
    assert.equal(refusal, null, label);
    const { ops, result: { request } } = await decideOnly(store, (tx) => decideOwnPlanRequest(tx, actingUser(ada), { fields: { keyId, planId } }, NOW));
    assert.deepEqual(opSummary(ops), ['put plan_requests'], label);
    assert.deepEqual({ ...request, id: 'x' }, { id: 'x', key_id: keyId, user_id: ada.id, plan: planId, status: 'pending', created_at: '2026-01-01T00:01:00.000Z', decided_at: null, note: null }, label);
  }
});

test('ten plan requests a day: the eleventh is 429, whatever became of the ten', async (t) => {
  const { store } = await openRulesStore(t);
  const ten = Array.from({ length: 10 }, (_, index) => aRequest(`prq_${index}`, 'key_other', ada.id, { status: 'cancelled' }));
  await store.write([...seedOps({ users: [ada], keys: [aKey('key_free', ada.id)] }), ...putRequests(ten)]);
  assert.equal((await refusalOf(() => decideOnly(store, (tx) => decideOwnPlanRequest(tx, actingUser(ada), { fields: { keyId: 'key_free', planId: 'business' } }, NOW))))?.status, 429);
});

test('the operator\'s decision and the user\'s cancel, by the request as it is', async (t) => {
  const { store } = await openRulesStore(t);
  const keys = [aKey('key_a', ada.id), aKey('key_gone', ada.id, { revoked_at: START })];
  const requests = [
    aRequest('prq_pending', 'key_a', ada.id),
    aRequest('prq_approved', 'key_a', ada.id, { status: 'approved', decided_at: START }),
    aRequest('prq_revoked_key', 'key_gone', ada.id),
    aRequest('prq_no_plan', 'key_a', ada.id, { plan: 'gold' }),
  ];
  await store.write([...seedOps({ users: [ada, bob], keys }), ...putRequests(requests)]);
  const decisions: Array<{ id: string; decision: 'approved' | 'declined'; ops?: string[]; status?: number; rateLimit?: number }> = [
    { id: 'prq_pending', decision: 'approved', ops: ['put plan_requests', 'put keys'], rateLimit: 10_000 },
    { id: 'prq_pending', decision: 'declined', ops: ['put plan_requests'] },
    { id: 'prq_approved', decision: 'declined', status: 409 },
    { id: 'prq_missing', decision: 'approved', status: 404 },
    { id: 'prq_revoked_key', decision: 'approved', status: 409 },
    { id: 'prq_revoked_key', decision: 'declined', ops: ['put plan_requests'] },
    { id: 'prq_no_plan', decision: 'approved', status: 409 },
  ];
  for (const { id, decision, ops, status, rateLimit } of decisions) {
    const label = `${decision} ${id}`;
    const refusal = await refusalOf(() => decideOnly(store, (tx) => decidePlanRequestDecision(tx, OPERATOR, { requestId: id, decision, note: 'noted' }, NOW)));
    if (status !== undefined) {
      assert.equal(refusal?.status, status, label);
      continue;
    }
    const decided = await decideOnly(store, (tx) => decidePlanRequestDecision(tx, OPERATOR, { requestId: id, decision, note: 'noted' }, NOW));
    assert.deepEqual(opSummary(decided.ops), ops, label);
    assert.deepEqual([decided.result.request.status, decided.result.request.note, decided.result.request.decided_at], [decision, 'noted', '2026-01-01T00:01:00.000Z'], label);
    assert.equal(decided.result.key?.rate_limit, rateLimit, label);
  }

  const cancels: Array<{ id: string; user: typeof ada; status?: number }> = [
    { id: 'prq_pending', user: ada },
    { id: 'prq_pending', user: bob, status: 404 },
    { id: 'prq_approved', user: ada, status: 409 },
  ];
  for (const { id, user, status } of cancels) {
    const refusal = await refusalOf(() => decideOnly(store, (tx) => decidePlanRequestCancel(tx, actingUser(user), { requestId: id }, NOW)));
    if (status !== undefined) assert.equal(refusal?.status, status, `cancel ${id} by ${user.id}`);
    else assert.equal((await decideOnly(store, (tx) => decidePlanRequestCancel(tx, actingUser(user), { requestId: id }, NOW))).result.status, 'cancelled');
  }
});
