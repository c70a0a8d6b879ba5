// The operator's side of self-service keys, against a real server: keys with expires_at, rolled
// keys with a grace period, the plan list and plan requests, each audited.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PLAN_REQUESTS, type PlanRequestRecord } from '../../src/domain/records.ts';
import { eventually } from '../helpers/eventually.ts';
import { startServer } from '../helpers/server.ts';

test('POST /admin/v1/keys with expires_at: works until then, then 401 saying it expired, from the very next request', async (t) => {
  const server = await startServer(t);
  const user = await server.createUser();
  const past = await server.admin('POST', '/admin/v1/keys', { user_id: user.id, expires_at: '2020-01-01T00:00:00Z' });
  assert.equal(past.status, 400);
  assert.match(past.body.details.expires_at, /future/);
  const garbled = await server.admin('POST', '/admin/v1/keys', { user_id: user.id, expires_at: 'tomorrow' });
  assert.equal(garbled.status, 400);

  const expiresAt = new Date(Date.now() + 1_500).toISOString();
  const made = await server.admin('POST', '/admin/v1/keys', { user_id: user.id, expires_at: expiresAt, plan: 'pro' });
  assert.equal(made.status, 201);
  assert.equal(made.body.data.expires_at, expiresAt);
  const first = await server.request('GET', '/v1/listings', { key: made.body.data.key });
  assert.equal(first.status, 200, 'before expiry');
  // Polled as fast as the server answers: the cached check must not outlive the expiry.
  await eventually(async () => (await server.request('GET', '/v1/listings', { key: made.body.data.key })).status === 401, 5_000, 'the key is refused after expires_at');
  const refused = await server.request('GET', '/v1/listings', { key: made.body.data.key });
  assert.ok(Date.now() >= Date.parse(expiresAt), 'not refused before its time');
  assert.equal(refused.status, 401);
  assert.match(refused.body.error, /expired/);

  // The operator may extend or clear the expiry of a live key.
  const other = await server.admin('POST', '/admin/v1/keys', { user_id: user.id, expires_at: new Date(Date.now() + 60_000).toISOString() });
  const cleared = await server.admin('PATCH', `/admin/v1/keys/${other.body.data.id}`, { expires_at: null });
  assert.equal(cleared.status, 200);
  assert.equal(cleared.body.data.expires_at, null);
  const audit = await server.admin('GET', `/admin/v1/audit?target_id=${other.body.data.id}`);
  assert.ok(audit.body.data.some((entry: any) => entry.action === 'key.update' && entry.changes.expires_at), 'expiry change audited');
});

test('POST /admin/v1/keys/:id/roll: same key, new secret; the old one works through the grace, then 401', async (t) => {
  const server = await startServer(t);
  const { key, keyId } = await server.userWithKey('member', ['read:listings'], 1_000);
  assert.equal((await server.admin('POST', `/admin/v1/keys/${keyId}/roll`, { grace_seconds: 604_801 })).status, 400);
  assert.equal((await server.admin('POST', '/admin/v1/keys/key_unknown/roll', { grace_seconds: 1 })).status, 404);

  const rolled = await server.admin('POST', `/admin/v1/keys/${keyId}/roll`, { grace_seconds: 1 });
  assert.equal(rolled.status, 201);
  assert.equal(rolled.headers.get('cache-control'), 'no-store');
  const { key: newKey, id, previous_secret_expires_at: oldEnds, permissions, rate_limit } = rolled.body.data;
  assert.equal(id, keyId, 'the same key record');
  assert.notEqual(newKey, key);
  assert.deepEqual(permissions, ['read:listings']);
  assert.equal(rate_limit, 1_000);
  assert.ok(Date.parse(oldEnds) > Date.now() - 1_000);

  const both = [await server.request('GET', '/v1/listings', { key }), await server.request('GET', '/v1/listings', { key: newKey })];
  assert.deepEqual(both.map((answer) => answer.status), [200, 200], 'old and new both work during the grace');
  assert.equal(both[1]!.headers.get('x-ratelimit-remaining'), '998', 'one limit for both secrets: the same key');
  await eventually(async () => (await server.request('GET', '/v1/listings', { key })).status === 401, 5_000, 'the old secret is refused after its grace');
  const refused = await server.request('GET', '/v1/listings', { key });
  assert.match(refused.body.error, /roll/);
  assert.equal((await server.request('GET', '/v1/listings', { key: newKey })).status, 200, 'the new one still works');

  // No grace: the previous secret stops at once.
  const again = await server.admin('POST', `/admin/v1/keys/${keyId}/roll`, { grace_seconds: 0 });
  assert.equal((await server.request('GET', '/v1/listings', { key: newKey })).status, 401);
  assert.equal((await server.request('GET', '/v1/listings', { key: again.body.data.key })).status, 200);

  const audit = await server.admin('GET', `/admin/v1/audit?action=key.roll&target_id=${keyId}`);
  assert.equal(audit.body.data.length, 2);
  assert.ok(!JSON.stringify(audit.body.data).includes(newKey), 'no secret in the audit log');
  await server.admin('DELETE', `/admin/v1/keys/${keyId}`);
  assert.equal((await server.admin('POST', `/admin/v1/keys/${keyId}/roll`, {})).status, 409, 'a revoked key is not rolled');
});

test('plans: defaults, a validated replacement that re-limits keys on a changed plan, and a key made on a plan', async (t) => {
  const server = await startServer(t);
  const plans = await server.admin('GET', '/admin/v1/plans');
  assert.deepEqual(plans.body.data, [
    { id: 'free', name: 'Free', rate_limit: 100, self_service: true, quota: null },
    { id: 'pro', name: 'Pro', rate_limit: 1_000, self_service: true, quota: null },
    { id: 'business', name: 'Business', rate_limit: 10_000, self_service: false, quota: null },
  ]);
  const user = await server.createUser();
  const plain = await server.admin('POST', '/admin/v1/keys', { user_id: user.id });
  assert.equal(plain.body.data.plan, 'free', 'a key made with neither plan nor limit is on Free');
  assert.equal(plain.body.data.rate_limit, 100);
  const pro = await server.admin('POST', '/admin/v1/keys', { user_id: user.id, plan: 'pro' });
  assert.equal(pro.body.data.rate_limit, 1_000);
  assert.equal((await server.admin('POST', '/admin/v1/keys', { user_id: user.id, plan: 'gold' })).status, 400);
  assert.equal((await server.admin('POST', '/admin/v1/keys', { user_id: user.id, plan: 'pro', rate_limit: 5 })).status, 400);
  const own = await server.admin('PATCH', `/admin/v1/keys/${pro.body.data.id}`, { rate_limit: 7 });
  assert.equal(own.body.data.plan, null, 'a limit of its own takes the key off its plan');
  const back = await server.admin('PATCH', `/admin/v1/keys/${pro.body.data.id}`, { plan: 'pro' });
  assert.equal(back.body.data.rate_limit, 1_000);

  const bad = [
    {},
    { plans: [] },
    { plans: [{ id: 'Free!', name: 'x', rate_limit: 1, self_service: true }] },
    { plans: [{ id: 'a', name: 'A', rate_limit: 0, self_service: true }] },
    { plans: [{ id: 'a', name: 'A', rate_limit: 1, self_service: 'yes' }] },
    { plans: [{ id: 'a', name: 'A', rate_limit: 1, self_service: true }, { id: 'a', name: 'B', rate_limit: 2, self_service: true }] },
    { plans: [{ id: 'a', name: 'A', rate_limit: 1, self_service: true, price: 3 }] },
  ];
  for (const body of bad) assert.equal((await server.admin('PUT', '/admin/v1/plans', body)).status, 400, JSON.stringify(body));
  const withoutPro = await server.admin('PUT', '/admin/v1/plans', { plans: [{ id: 'free', name: 'Free', rate_limit: 100, self_service: true }] });
  assert.equal(withoutPro.status, 409, 'pro is still used by an active key');

  const replaced = await server.admin('PUT', '/admin/v1/plans', {
    plans: [
      { id: 'free', name: 'Free', rate_limit: 100, self_service: true },
      { id: 'pro', name: 'Pro', rate_limit: 2_000, self_service: true },
      { id: 'business', name: 'Business', rate_limit: 10_000, self_service: false },
    ],
  });
  assert.equal(replaced.status, 200);
  const after = await server.request('GET', '/v1/listings', { key: pro.body.data.key });
  assert.equal(after.headers.get('x-ratelimit-limit'), '2000', "the plan's new limit applies to its keys at once");
  const audit = await server.admin('GET', '/admin/v1/audit?action=plans.replace');
  assert.equal(audit.body.data.length, 1);
  assert.equal(audit.body.data[0].changes.keys_relimited, 1);
});

test('plan requests: approval moves the key to the plan and changes X-RateLimit-Limit from the next request; decisions are final', async (t) => {
  const server = await startServer(t);
  const { key, keyId, userId } = await server.userWithKey('member', ['read:listings'], 100);
  // Users make requests in the portal; here one is written as the portal would.
  const request = (id: string): PlanRequestRecord => ({ id, key_id: keyId, user_id: userId, plan: 'business', status: 'pending', created_at: new Date().toISOString(), decided_at: null });
  await server.app.store.write([
    { op: 'put', collection: PLAN_REQUESTS, id: 'prq_one', data: request('prq_one') },
    { op: 'put', collection: PLAN_REQUESTS, id: 'prq_two', data: request('prq_two') },
  ]);
  const pending = await server.admin('GET', '/admin/v1/plan-requests?status=pending');
  assert.equal(pending.body.data.length, 2);
  assert.equal((await server.admin('GET', '/admin/v1/plan-requests?status=maybe')).status, 400);

  assert.equal((await server.request('GET', '/v1/listings', { key })).headers.get('x-ratelimit-limit'), '100');
  const approved = await server.admin('POST', '/admin/v1/plan-requests/prq_one/approve');
  assert.equal(approved.status, 200);
  assert.equal(approved.body.data.status, 'approved');
  assert.equal((await server.request('GET', '/v1/listings', { key })).headers.get('x-ratelimit-limit'), '10000');
  assert.equal((await server.admin('POST', '/admin/v1/plan-requests/prq_one/decline')).status, 409, 'already decided');
  const declined = await server.admin('POST', '/admin/v1/plan-requests/prq_two/decline');
  assert.equal(declined.body.data.status, 'declined');
  assert.equal((await server.admin('POST', '/admin/v1/plan-requests/prq_none/approve')).status, 404);
  const keys = await server.admin('GET', `/admin/v1/keys?user_id=${userId}`);
  assert.equal(keys.body.data[0].plan, 'business');
  const audit = await server.admin('GET', '/admin/v1/audit');
  const actions = audit.body.data.map((entry: any) => entry.action);
  assert.ok(actions.includes('plan_request.approve') && actions.includes('plan_request.decline'));
});
