// Self-service keys across instances: two server processes on one PostgreSQL and one Redis.
// A roll, a plan change, an expiry and a revocation decided on one instance count on the other
// from its next request once it has pulled the change, though each instance caches key checks
// by hash; and a portal session made on one instance manages keys on the other.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { call, startInstance, userWithKey, type Instance } from '../helpers/cluster.ts';
import { eventually } from '../helpers/eventually.ts';
import { skipUnlessServices, startPostgres, startRedis, type PostgresService, type RedisService } from '../helpers/services.ts';

const skip = skipUnlessServices('postgresBin', 'redisServer');
let postgres: PostgresService;
let redis: RedisService;
let instances: Instance[] = [];

before(async () => {
  if (skip) return;
  postgres = await startPostgres();
  redis = await startRedis();
  const databaseUrl = postgres.createDatabase('portal_keys');
  instances.push(await startInstance(databaseUrl, redis.url));
  instances.push(await startInstance(databaseUrl, redis.url));
});

after(async () => {
  await Promise.all(instances.map((instance) => instance.stop()));
  await redis?.destroy();
  await postgres?.destroy();
});

const status = async (base: string, key: string) => (await call(base, 'GET', '/v1/listings?limit=1', key)).status;

test('a roll on one instance: the other accepts both secrets during the grace, then only the new one', { skip, timeout: 60_000 }, async () => {
  const [first, second] = [instances[0]!.url, instances[1]!.url];
  const { key, keyId } = await userWithKey(instances, 'member', ['read:listings']);
  // Checked (and cached by hash) on both instances first.
  assert.equal(await status(first, key), 200);
  assert.equal(await status(second, key), 200);
  const rolled = await call(first, 'POST', `/admin/v1/keys/${keyId}/roll`, 'admin', { grace_seconds: 2 });
  assert.equal(rolled.status, 201);
  const fresh = rolled.body.data.key;
  const graceEnds = Date.parse(rolled.body.data.previous_secret_expires_at);
  await eventually(async () => (await status(second, fresh)) === 200, 2_000, 'the new secret on the other instance');
  if (Date.now() < graceEnds - 200) assert.equal(await status(second, key), 200, 'the old secret during the grace, on the other instance');
  await eventually(async () => (await status(second, key)) === 401, 5_000, 'the old secret refused after the grace', 50);
  assert.ok(Date.now() >= graceEnds, 'not before the grace ended');
  const refused = await call(second, 'GET', '/v1/listings', key);
  assert.match(refused.body.error, /roll/);
  assert.equal(await status(second, fresh), 200);
  assert.equal(await status(first, fresh), 200);
});

test('a plan change and an expiry set on one instance count on the other from its next request', { skip, timeout: 60_000 }, async () => {
  const [first, second] = [instances[0]!.url, instances[1]!.url];
  const { key, keyId } = await userWithKey(instances, 'member', ['read:listings']);
  assert.equal(await status(second, key), 200);
  assert.equal((await call(first, 'PATCH', `/admin/v1/keys/${keyId}`, 'admin', { plan: 'pro' })).status, 200);
  await eventually(async () => (await call(second, 'GET', '/v1/listings?limit=1', key)).headers.get('x-ratelimit-limit') === '1000', 2_000, 'the new limit on the other instance');
  const expiresAt = new Date(Date.now() + 1_500).toISOString();
  assert.equal((await call(first, 'PATCH', `/admin/v1/keys/${keyId}`, 'admin', { expires_at: expiresAt })).status, 200);
  await eventually(async () => (await status(second, key)) === 401, 5_000, 'expired on the other instance', 50);
  assert.ok(Date.now() >= Date.parse(expiresAt));
  assert.match((await call(second, 'GET', '/v1/listings', key)).body.error, /expired/);
});

test('a portal session made on one instance creates, rolls and revokes a key on the other', { skip, timeout: 60_000 }, async () => {
  const [first, second] = [instances[0]!.url, instances[1]!.url];
  const email = `cluster-${process.pid}@example.com`;
  const password = 'correct horse battery staple';
  const user = await call(first, 'POST', '/admin/v1/users', 'admin', { name: 'Cluster user', email });
  const invitation = await call(first, 'POST', `/admin/v1/users/${user.body.data.id}/invitations`, 'admin');
  const set = await fetch(`${first}/portal/v1/password`, {
    method: 'POST',
    headers: { origin: first, 'content-type': 'application/json' },
    body: JSON.stringify({ invitation: invitation.body.data.token, password }),
  });
  assert.equal(set.status, 201);
  const cookie = set.headers.get('set-cookie')!.split(';', 1)[0]!;
  const portal = async (base: string, method: string, path: string, body?: unknown) => {
    const response = await fetch(`${base}/portal/v1${path}`, {
      method,
      headers: { cookie, origin: base, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    // Test code reads fields of many shapes from answers.
    return { status: response.status, body: (await response.json()) as any };
  };
  await eventually(async () => (await portal(second, 'GET', '/keys')).status === 200, 2_000, 'the session on the other instance');
  const made = await portal(second, 'POST', '/keys', { name: 'from the other instance' });
  assert.equal(made.status, 201);
  await eventually(async () => (await status(first, made.body.data.key)) === 200, 2_000, 'the key on the first instance');
  const rolled = await portal(first, 'POST', `/keys/${made.body.data.id}/roll`, { grace_seconds: 0 });
  assert.equal(rolled.status, 201);
  await eventually(async () => (await status(second, made.body.data.key)) === 401, 2_000, 'the replaced secret refused on the other instance');
  assert.equal((await portal(second, 'DELETE', `/keys/${made.body.data.id}`)).status, 200);
  await eventually(async () => (await status(first, rolled.body.data.key)) === 401, 2_000, 'revoked on the first instance');
});
