// Read-your-writes through the balancer: three instances on one PostgreSQL and one Redis behind
// nginx (round-robin), and a client that sends its next request the moment a write is answered,
// with no pause. Each acknowledged change must be what every instance answers from that next
// request on, whichever instance it reaches. Many trials each, because a lagging follower shows
// only now and then.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { call, startInstances, type Instance } from '../helpers/cluster.ts';
import { skipUnlessServices, startNginx, startPostgres, startRedis, type NginxService, type PostgresService, type RedisService } from '../helpers/services.ts';

const skip = skipUnlessServices('postgresBin', 'redisServer', 'nginx');
const TRIALS = 30;
let postgres: PostgresService;
let redis: RedisService;
let instances: Instance[] = [];
let nginx: NginxService;
let balancer: string;

before(async () => {
  if (skip) return;
  postgres = await startPostgres();
  redis = await startRedis();
  const databaseUrl = postgres.createDatabase('read_your_writes');
  // Analytics off: its periodic writes would otherwise wake a lagging follower now and then.
  const env = { MARKETPLACE_ANALYTICS: '0' };
  instances.push(...(await startInstances(databaseUrl, redis.url, env)));
  nginx = await startNginx(instances.map((instance) => instance.address));
  balancer = nginx.url;
});

after(async () => {
  await nginx?.destroy();
  await Promise.all(instances.map((instance) => instance.stop()));
  await redis?.destroy();
  await postgres?.destroy();
});

/** A user made through the balancer, and a key for it made through the balancer at once. */
async function freshUserAndKey(role: 'creator' | 'member', permissions: string[], rateLimit = 100_000): Promise<{ userId: string; key: string; keyId: string }> {
  const user = await call(balancer, 'POST', '/admin/v1/users', 'admin', { name: `${role} user`, role });
  assert.equal(user.status, 201, JSON.stringify(user.body));
  const key = await call(balancer, 'POST', '/admin/v1/keys', 'admin', { user_id: user.body.data.id, permissions, rate_limit: rateLimit });
  assert.equal(key.status, 201, `a key for the user made just before: ${JSON.stringify(key.body)}`);
  return { userId: user.body.data.id, key: key.body.data.key, keyId: key.body.data.id };
}

test(`create-then-use: a new user's new key works on the very next requests (${TRIALS} trials)`, { skip, timeout: 180_000 }, async () => {
  for (let trial = 0; trial < TRIALS; trial += 1) {
    const { key } = await freshUserAndKey('creator', ['read:listings', 'write:listings']);
    for (let request = 0; request < 3; request += 1) {
      const answer = await call(balancer, 'GET', '/v1/listings', key);
      assert.equal(answer.status, 200, `trial ${trial + 1}, request ${request + 1}: ${JSON.stringify(answer.body)}`);
    }
    const made = await call(balancer, 'POST', '/v1/listings', key, { title: `Fresh ${trial}`, type: 'TOOL', price: trial });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    for (let request = 0; request < 3; request += 1) {
      const read = await call(balancer, 'GET', `/v1/listings/${made.body.data.id}`, key);
      assert.equal(read.status, 200, `trial ${trial + 1}: the new listing, read ${request + 1}`);
    }
  }
});

test(`revoke-then-refuse: a revoked key is refused by every instance from the next request on (${TRIALS} trials)`, { skip, timeout: 180_000 }, async () => {
  const { userId } = await freshUserAndKey('member', ['read:listings']);
  for (let trial = 0; trial < TRIALS; trial += 1) {
    // A limit of its own: keys on a plan share the user's window (contract 23), and this test is not about limits.
    const made = await call(balancer, 'POST', '/admin/v1/keys', 'admin', { user_id: userId, permissions: ['read:listings'], rate_limit: 1000 });
    assert.equal(made.status, 201);
    const key = made.body.data.key as string;
    // Used (and so cached) by every instance first.
    for (let request = 0; request < 3; request += 1) assert.equal((await call(balancer, 'GET', '/v1/listings', key)).status, 200);
    assert.equal((await call(balancer, 'DELETE', `/admin/v1/keys/${made.body.data.id}`, 'admin')).status, 200);
    for (let request = 0; request < 3; request += 1) {
      const answer = await call(balancer, 'GET', '/v1/listings', key);
      assert.equal(answer.status, 401, `trial ${trial + 1}, request ${request + 1} after the revocation`);
    }
  }
});

test(`PATCH-then-effect: a permission taken away is refused from the next request on (${TRIALS} trials)`, { skip, timeout: 180_000 }, async () => {
  const { userId } = await freshUserAndKey('member', ['read:listings']);
  for (let trial = 0; trial < TRIALS; trial += 1) {
    // A limit of its own: keys on a plan share the user's window (contract 23), and this test is not about limits.
    const made = await call(balancer, 'POST', '/admin/v1/keys', 'admin', { user_id: userId, permissions: ['read:listings', 'read:users'], rate_limit: 1000 });
    const key = made.body.data.key as string;
    for (let request = 0; request < 3; request += 1) assert.equal((await call(balancer, 'GET', `/v1/users/${userId}`, key)).status, 200);
    const patched = await call(balancer, 'PATCH', `/admin/v1/keys/${made.body.data.id}`, 'admin', { permissions: ['read:listings'] });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    for (let request = 0; request < 3; request += 1) {
      const answer = await call(balancer, 'GET', `/v1/users/${userId}`, key);
      assert.equal(answer.status, 403, `trial ${trial + 1}, request ${request + 1} after the PATCH`);
    }
  }
});

test(`plan-change-then-limit: a lowered rate limit applies from the next request on (${TRIALS} trials)`, { skip, timeout: 180_000 }, async () => {
  const { userId } = await freshUserAndKey('member', ['read:listings']);
  for (let trial = 0; trial < TRIALS; trial += 1) {
    const made = await call(balancer, 'POST', '/admin/v1/keys', 'admin', { user_id: userId, permissions: ['read:listings'], rate_limit: 1000 });
    const key = made.body.data.key as string;
    for (let request = 0; request < 3; request += 1) assert.equal((await call(balancer, 'GET', '/v1/listings', key)).headers.get('x-ratelimit-limit'), '1000');
    const patched = await call(balancer, 'PATCH', `/admin/v1/keys/${made.body.data.id}`, 'admin', { rate_limit: 4 });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    // 3 requests were counted before the change: one more is admitted under the new limit of 4.
    const answers = [];
    for (let request = 0; request < 3; request += 1) answers.push(await call(balancer, 'GET', '/v1/listings', key));
    assert.deepEqual(
      answers.map((answer) => [answer.status, answer.headers.get('x-ratelimit-limit')]),
      [
        [200, '4'],
        [429, '4'],
        [429, '4'],
      ],
      `trial ${trial + 1}`,
    );
  }
});
