// Quotas over a period (contract section 23): a plan's `quota` of requests per UTC day or month,
// shared by one user's keys on the plan; X-Quota-* on every /v1 answer for such a key; past it a
// 429 with Retry-After and the quota, counting against nothing; the count in the usage reads, set
// or topped up by the operator (audited), kept across a plan change and a graceful restart.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { DEFAULT_PLANS } from '../../src/auth/plans.ts';
import { QUOTA_COUNTS } from '../../src/domain/records.ts';
import { eventually } from '../helpers/eventually.ts';
import { startServer, temporaryDir, type TestResponse, type TestServer } from '../helpers/server.ts';

const DAY = 24 * 60 * 60 * 1000;

function plansWith(quota: unknown, id = 'free') {
  return { plans: DEFAULT_PLANS.map((plan) => (plan.id === id ? { ...plan, quota } : plan)) };
}

async function planKey(server: TestServer, userId: string, plan = 'free'): Promise<{ key: string; id: string }> {
  const made = await server.admin('POST', '/admin/v1/keys', { user_id: userId, plan, permissions: ['read:listings', 'read:analytics'] });
  assert.equal(made.status, 201, made.text);
  return { key: made.body.data.key, id: made.body.data.id };
}

function quotaHeaders(answer: TestResponse) {
  return { limit: answer.headers.get('x-quota-limit'), remaining: answer.headers.get('x-quota-remaining'), reset: answer.headers.get('x-quota-reset') };
}

test('a plan quota is validated: requests from 1 to 10^9, day or month, no other fields; a 400 names the field and nothing changes', async (t) => {
  const server = await startServer(t, { dataDir: null });
  const before = await server.admin('GET', '/admin/v1/plans');
  assert.deepEqual(before.body.data[0], { id: 'free', name: 'Free', rate_limit: 100, self_service: true, quota: null }, 'no quota by default');
  const bad: Array<[unknown, string]> = [
    [{ requests: 0, period: 'day' }, 'plans[0].quota.requests'],
    [{ requests: 1_000_000_001, period: 'day' }, 'plans[0].quota.requests'],
    [{ requests: 1.5, period: 'day' }, 'plans[0].quota.requests'],
    [{ requests: 5, period: 'week' }, 'plans[0].quota.period'],
    [{ requests: 5, period: 'day', burst: 3 }, 'plans[0].quota.burst'],
    [{ requests: 5 }, 'plans[0].quota.period'],
    ['lots', 'plans[0].quota'],
  ];
  for (const [quota, field] of bad) {
    const refused = await server.admin('PUT', '/admin/v1/plans', plansWith(quota));
    assert.equal(refused.status, 400, JSON.stringify(quota));
    assert.ok(field in refused.body.details, `${JSON.stringify(quota)} names ${field}: ${refused.text}`);
  }
  assert.deepEqual((await server.admin('GET', '/admin/v1/plans')).body.data, before.body.data, 'nothing changed');
  const saved = await server.admin('PUT', '/admin/v1/plans', plansWith({ requests: 1_000_000_000, period: 'month' }));
  assert.equal(saved.status, 200, saved.text);
  assert.deepEqual(saved.body.data[0].quota, { requests: 1_000_000_000, period: 'month' });
});

test('a day quota of 5 over two keys: 4,3,2,1,0 remaining, then 429 with Retry-After to the next UTC midnight, counting nothing; the next day resets it', async (t) => {
  const clock = new ManualClock(Date.UTC(2026, 2, 10, 18, 0, 0));
  const server = await startServer(t, { clock, dataDir: null });
  assert.equal((await server.admin('PUT', '/admin/v1/plans', plansWith({ requests: 5, period: 'day' }))).status, 200);
  const user = await server.createUser();
  const [first, second] = [await planKey(server, user.id), await planKey(server, user.id)];
  const midnight = Date.UTC(2026, 2, 11);
  const remaining: string[] = [];
  for (let index = 0; index < 5; index += 1) {
    const answer = await server.request('GET', '/v1/listings', { key: (index % 2 === 0 ? first : second).key });
    assert.equal(answer.status, 200);
    const headers = quotaHeaders(answer);
    assert.equal(headers.limit, '5');
    assert.equal(headers.reset, String(midnight / 1000));
    remaining.push(headers.remaining!);
  }
  assert.deepEqual(remaining, ['4', '3', '2', '1', '0']);

  const refused = await server.request('GET', '/v1/listings', { key: second.key });
  assert.equal(refused.status, 429);
  assert.equal(refused.headers.get('retry-after'), String((midnight - clock.now()) / 1000));
  assert.deepEqual(refused.body.quota, { requests: 5, used: 5, period: 'day', resets_at: new Date(midnight).toISOString() });
  assert.match(refused.body.error, /quota/i);
  assert.equal(quotaHeaders(refused).remaining, '0');
  assert.equal(refused.headers.get('x-ratelimit-remaining'), '95', 'a refused request counts against nothing');
  // Errors for such a key carry the headers too.
  const other = await server.createUser();
  const theirs = await planKey(server, other.id);
  const notFound = await server.request('GET', '/v1/nowhere', { key: theirs.key });
  assert.equal(notFound.status, 404);
  assert.equal(quotaHeaders(notFound).remaining, '4', "another user's count is their own");

  // The usage reads show the quota.
  const expected = { requests: 5, used: 5, remaining: 0, period: 'day', resets_at: new Date(midnight).toISOString() };
  assert.deepEqual((await server.admin('GET', `/admin/v1/keys/${first.id}/usage`)).body.data.quota, expected);
  const own = await server.request('GET', '/v1/analytics/usage', { key: theirs.key });
  assert.deepEqual(own.body.data.quota, { ...expected, used: 2, remaining: 3 });

  // A key with a limit of its own has no quota and no headers.
  const plain = await server.createKey(user.id, { rate_limit: 10, permissions: ['read:listings'] });
  const unmetered = await server.request('GET', '/v1/listings', { key: plain.key });
  assert.equal(unmetered.headers.get('x-quota-limit'), null);

  clock.advance(midnight - clock.now() + 1_000);
  const nextDay = await server.request('GET', '/v1/listings', { key: first.key });
  assert.equal(nextDay.status, 200, 'past midnight the count starts again');
  assert.equal(quotaHeaders(nextDay).remaining, '4');
  assert.equal(quotaHeaders(nextDay).reset, String((midnight + DAY) / 1000));
});

test('a month quota resets on the 1st (UTC)', async (t) => {
  const clock = new ManualClock(Date.UTC(2026, 0, 31, 23, 0, 0));
  const server = await startServer(t, { clock, dataDir: null });
  await server.admin('PUT', '/admin/v1/plans', plansWith({ requests: 2, period: 'month' }));
  const user = await server.createUser();
  const { key } = await planKey(server, user.id);
  assert.equal((await server.request('GET', '/v1/listings', { key })).status, 200);
  assert.equal((await server.request('GET', '/v1/listings', { key })).status, 200);
  const refused = await server.request('GET', '/v1/listings', { key });
  assert.equal(refused.status, 429);
  assert.equal(refused.headers.get('retry-after'), '3600');
  assert.equal(refused.body.quota.resets_at, '2026-02-01T00:00:00.000Z');
  clock.advance(3_600_000);
  const february = await server.request('GET', '/v1/listings', { key });
  assert.equal(february.status, 200);
  assert.equal(quotaHeaders(february).reset, String(Date.UTC(2026, 2, 1) / 1000), 'February ends on March 1st');
});

test('the operator sets or tops up the count of a key\'s user and plan, audited; a plan change mid-period keeps the count', async (t) => {
  const clock = new ManualClock(Date.UTC(2026, 2, 10, 12));
  const server = await startServer(t, { clock, dataDir: null });
  await server.admin('PUT', '/admin/v1/plans', plansWith({ requests: 3, period: 'day' }));
  const user = await server.createUser();
  const [first, second] = [await planKey(server, user.id), await planKey(server, user.id)];
  for (let index = 0; index < 3; index += 1) await server.request('GET', '/v1/listings', { key: first.key });
  assert.equal((await server.request('GET', '/v1/listings', { key: second.key })).status, 429);

  for (const body of [{}, { used: 1, add: 1 }, { used: -1 }, { add: 0 }, { add: 1.5 }, { used: 1, note: 'x' }]) {
    assert.equal((await server.admin('POST', `/admin/v1/keys/${first.id}/quota`, body)).status, 400, JSON.stringify(body));
  }
  const topped = await server.admin('POST', `/admin/v1/keys/${first.id}/quota`, { add: 2 });
  assert.equal(topped.status, 200, topped.text);
  assert.deepEqual(topped.body.data, { requests: 3, used: 1, remaining: 2, period: 'day', resets_at: '2026-03-11T00:00:00.000Z' });
  assert.equal((await server.request('GET', '/v1/listings', { key: second.key })).status, 200, 'the top-up serves every key of the user on the plan');
  const set = await server.admin('POST', `/admin/v1/keys/${second.id}/quota`, { used: 0 });
  assert.equal(set.body.data.used, 0);
  const audit = await server.admin('GET', `/admin/v1/audit?action=key.quota`);
  assert.equal(audit.body.data.length, 2);
  assert.deepEqual(audit.body.data[0].changes.used, { from: 2, to: 0 });

  await server.request('GET', '/v1/listings', { key: first.key });
  assert.equal((await server.admin('PUT', '/admin/v1/plans', plansWith({ requests: 10, period: 'day' }))).status, 200);
  const after = await server.request('GET', '/v1/listings', { key: first.key });
  assert.equal(after.headers.get('x-quota-limit'), '10');
  assert.equal(after.headers.get('x-quota-remaining'), '8', 'the count so far is kept');

  const plain = await server.createKey(user.id, { rate_limit: 10 });
  assert.equal((await server.admin('POST', `/admin/v1/keys/${plain.id}/quota`, { add: 1 })).status, 409, 'a key with no quota');
  assert.equal((await server.admin('POST', '/admin/v1/keys/key_nothing/quota', { add: 1 })).status, 404);
});

test('a graceful restart keeps the count', async (t) => {
  const dataDir = temporaryDir(t);
  const clock = new ManualClock(Date.UTC(2026, 2, 10, 12));
  let server = await startServer(null, { clock, dataDir });
  await server.admin('PUT', '/admin/v1/plans', plansWith({ requests: 10, period: 'day' }));
  const user = await server.createUser();
  const { key } = await planKey(server, user.id);
  for (let index = 0; index < 3; index += 1) await server.request('GET', '/v1/listings', { key });
  await server.close();
  server = await startServer(t, { clock, dataDir });
  const answer = await server.request('GET', '/v1/listings', { key });
  assert.equal(answer.headers.get('x-quota-remaining'), '6');
});

test('counts reach the store with the other aggregates, within the save interval, without a stop (what a crash can give back is bounded by it)', async (t) => {
  const clock = new ManualClock(Date.UTC(2026, 2, 10, 12));
  const server = await startServer(t, { clock, config: { usageFlushMs: 100 } });
  await server.admin('PUT', '/admin/v1/plans', plansWith({ requests: 10, period: 'day' }));
  const user = await server.createUser();
  const { key } = await planKey(server, user.id);
  for (let index = 0; index < 3; index += 1) await server.request('GET', '/v1/listings', { key });
  const meter = `${user.id}/free`;
  await eventually(async () => server.app.store.get(QUOTA_COUNTS, meter)?.used === 3, 2_000, 'the count saved by the periodic save');
  assert.equal(server.app.store.get(QUOTA_COUNTS, meter)?.start, '2026-03-10T00:00:00.000Z');
});
