// The plan, roll and expiry commands of the CLI, and the AdminClient methods under them,
// against a real server.

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import { runCli } from '../../src/cli.ts';
import { AdminClient } from '../../src/client/admin-client.ts';
import { MarketplaceApiError } from '../../src/client/errors.ts';
import { PLAN_REQUESTS, type PlanRequestRecord } from '../../src/domain/records.ts';
import { ADMIN_TOKEN, startServer, temporaryDir } from '../helpers/server.ts';

async function run(argv: string[], url: string, cwd?: string) {
  let stdout = '';
  let stderr = '';
  const code = await runCli([...argv, '--url', url, '--token', ADMIN_TOKEN], {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    env: {},
    cwd,
  });
  return { code, stdout, stderr, json: () => JSON.parse(stdout) };
}

test('CLI: keys create/update with --plan and --expires-at, keys roll, plans list/set, plan-requests list/approve/decline', async (t) => {
  const server = await startServer(t, { dataDir: null });
  const user = await server.createUser();
  const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
  const made = await run(['keys', 'create', '--user-id', user.id, '--plan', 'pro', '--expires-at', expiresAt], server.url);
  assert.equal(made.code, 0, made.stderr);
  assert.equal(made.json().rate_limit, 1_000);
  assert.equal(made.json().expires_at, expiresAt);
  const keyId = made.json().id;
  const never = await run(['keys', 'update', keyId, '--expires-at', 'never'], server.url);
  assert.equal(never.json().expires_at, null);
  const rolled = await run(['keys', 'roll', keyId, '--grace-seconds', '60'], server.url);
  assert.equal(rolled.code, 0, rolled.stderr);
  assert.notEqual(rolled.json().key, made.json().key);
  assert.equal((await run(['keys', 'roll', keyId, '--grace-seconds', 'soon'], server.url)).code, 2);

  assert.deepEqual((await run(['plans', 'list'], server.url)).json().map((plan: { id: string }) => plan.id), ['free', 'pro', 'business']);
  const dir = temporaryDir(t);
  writeFileSync(join(dir, 'plans.json'), JSON.stringify([
    { id: 'free', name: 'Free', rate_limit: 60, self_service: true },
    { id: 'pro', name: 'Pro', rate_limit: 1_000, self_service: true },
    { id: 'business', name: 'Business', rate_limit: 10_000, self_service: false },
  ]));
  const set = await run(['plans', 'set', '--file', 'plans.json'], server.url, dir);
  assert.equal(set.code, 0, set.stderr);
  assert.equal(set.json()[0].rate_limit, 60);
  writeFileSync(join(dir, 'bad.json'), JSON.stringify({ plans: [] }));
  const bad = await run(['plans', 'set', '--file', 'bad.json'], server.url, dir);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /1 to 20 plans/);

  const request: PlanRequestRecord = { id: 'prq_cli', key_id: keyId, user_id: user.id, plan: 'business', status: 'pending', created_at: new Date().toISOString(), decided_at: null };
  await server.app.store.write([{ op: 'put', collection: PLAN_REQUESTS, id: request.id, data: request }, { op: 'put', collection: PLAN_REQUESTS, id: 'prq_cli2', data: { ...request, id: 'prq_cli2' } }]);
  assert.equal((await run(['plan-requests', 'list', '--status', 'pending'], server.url)).json().data.length, 2);
  assert.equal((await run(['plan-requests', 'list', '--status', 'maybe'], server.url)).code, 2);
  assert.equal((await run(['plan-requests', 'approve', 'prq_cli'], server.url)).json().status, 'approved');
  assert.equal((await run(['plan-requests', 'decline', 'prq_cli2'], server.url)).json().status, 'declined');

  const admin = new AdminClient({ baseUrl: server.url, token: ADMIN_TOKEN });
  assert.equal((await admin.keys.list({ user_id: user.id })).data[0]!.plan, 'business');
  assert.equal((await admin.planRequests.list({ status: 'approved' })).data.length, 1);
  await assert.rejects(admin.planRequests.approve('prq_cli'), (error: unknown) => error instanceof MarketplaceApiError && error.status === 409);
  const again = await admin.keys.roll(keyId, 0);
  assert.equal(again.id, keyId);
  assert.equal((await admin.plans.replace((await admin.plans.list()).map((plan) => ({ ...plan, name: plan.name.toUpperCase() }))))[0]!.name, 'FREE');
});

test('CLI and client: a plan with a quota set from a file, keys quota --used/--add, AdminClient keys.setQuota and the usage quota', async (t) => {
  const server = await startServer(t, { dataDir: null });
  const user = await server.createUser();
  const dir = temporaryDir(t);
  writeFileSync(join(dir, 'plans.json'), JSON.stringify([
    { id: 'free', name: 'Free', rate_limit: 100, self_service: true, quota: { requests: 50, period: 'month' } },
    { id: 'pro', name: 'Pro', rate_limit: 1_000, self_service: true },
  ]));
  const set = await run(['plans', 'set', '--file', 'plans.json'], server.url, dir);
  assert.equal(set.code, 0, set.stderr);
  assert.deepEqual(set.json().map((plan: { quota: unknown }) => plan.quota), [{ requests: 50, period: 'month' }, null]);
  const key = await server.createKey(user.id, { permissions: ['read:listings'] });
  for (let index = 0; index < 3; index += 1) await server.request('GET', '/v1/listings', { key: key.key });

  const used = await run(['keys', 'quota', key.id, '--used', '10'], server.url);
  assert.equal(used.code, 0, used.stderr);
  assert.equal(used.json().used, 10);
  const added = await run(['keys', 'quota', key.id, '--add', '4'], server.url);
  assert.deepEqual([added.json().used, added.json().remaining, added.json().period], [6, 44, 'month']);
  assert.equal((await run(['keys', 'quota', key.id], server.url)).code, 2, 'one of --used and --add');
  assert.equal((await run(['keys', 'quota', key.id, '--used', '1', '--add', '1'], server.url)).code, 2);

  const client = new AdminClient({ baseUrl: server.url, token: ADMIN_TOKEN });
  const topped = await client.keys.setQuota(key.id, { add: 6 });
  assert.equal(topped.used, 0);
  assert.deepEqual((await client.keys.usage(key.id)).quota, topped);
  await assert.rejects(client.keys.setQuota(key.id, { used: -1 }), (error: unknown) => error instanceof MarketplaceApiError && error.status === 400);
});
