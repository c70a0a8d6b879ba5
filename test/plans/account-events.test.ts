// Events about the account (contract section 23) reach the user's own webhooks, signed, once
// each: quota.warning at 80 % of a plan's quota and quota.exhausted when it is used up (once a
// period), key.expiring seven days before a key's expires_at (once), plan_request.decided.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULT_PLANS } from '../../src/auth/plans.ts';
import { PLAN_REQUESTS, type PlanRequestRecord } from '../../src/domain/records.ts';
import { verifySignature } from '../../src/webhooks/verify.ts';
import { startServer } from '../helpers/server.ts';
import { answer, pause, startReceiver, waitFor } from '../webhooks/fixtures.ts';

test('quota.warning, quota.exhausted, key.expiring and plan_request.decided are delivered to the user\'s webhook once each, signed', async (t) => {
  const receiver = await startReceiver(t, answer(200));
  const server = await startServer(t, { dataDir: null, env: { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_DELAYS_MS: '10,20' } });
  const plans = { plans: DEFAULT_PLANS.map((plan) => (plan.id === 'free' ? { ...plan, quota: { requests: 5, period: 'day' } } : plan)) };
  assert.equal((await server.admin('PUT', '/admin/v1/plans', plans)).status, 200);
  const user = await server.createUser();
  const own = await server.createKey(user.id, { rate_limit: 1_000, permissions: ['read:webhooks', 'write:webhooks'] });
  const registered = await server.request('POST', '/v1/webhooks', { key: own.key, body: { url: receiver.url } });
  assert.equal(registered.status, 201, registered.text);
  const { secret } = registered.body.data;
  await waitFor('the ping', () => receiver.received.length === 1);

  const metered = await server.admin('POST', '/admin/v1/keys', { user_id: user.id, plan: 'free', permissions: ['read:listings'], expires_at: new Date(Date.now() + 3 * 24 * 3600_000).toISOString() });
  for (let index = 0; index < 7; index += 1) await server.request('GET', '/v1/listings', { key: metered.body.data.key });
  await server.app.sweepRecords();
  await server.app.sweepRecords();
  const request: PlanRequestRecord = { id: 'prq_events', key_id: own.id, user_id: user.id, plan: 'business', status: 'pending', created_at: new Date().toISOString(), decided_at: null };
  await server.app.store.write([{ op: 'put', collection: PLAN_REQUESTS, id: request.id, data: request }]);
  assert.equal((await server.admin('POST', '/admin/v1/plan-requests/prq_events/decline', { note: 'not now' })).status, 200);

  await waitFor('the four events', () => receiver.received.length >= 5);
  await pause(200); // nothing more arrives
  const events = receiver.received.map((received) => {
    assert.ok(verifySignature(secret, received.headers, received.body, Math.floor(Date.now() / 1000)), 'signed');
    return JSON.parse(received.body) as { type: string; data: any };
  });
  assert.deepEqual(events.map((event) => event.type).sort(), ['key.expiring', 'ping', 'plan_request.decided', 'quota.exhausted', 'quota.warning']);
  const byType = Object.fromEntries(events.map((event) => [event.type, event.data]));
  assert.deepEqual({ ...byType['quota.warning'], resets_at: undefined }, { user_id: user.id, plan: 'free', requests: 5, used: 4, period: 'day', resets_at: undefined });
  assert.equal(byType['quota.exhausted'].used, 5);
  assert.equal(byType['key.expiring'].key_id, metered.body.data.id);
  assert.equal(byType['plan_request.decided'].status, 'declined');
});
