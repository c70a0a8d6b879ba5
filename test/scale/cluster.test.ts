// Many instances end to end: a real PostgreSQL and Redis, three server processes, and nginx
// round-robin in front, as a deployment runs them. Each test is a promise of the server to a
// client whose requests are spread over the instances.

import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, test } from 'node:test';
import { call, percentile, startInstance, startInstances, userWithKey, type Instance } from '../helpers/cluster.ts';
import { eventually } from '../helpers/eventually.ts';
import { revocationLags } from '../helpers/revocation.ts';
import { skipUnlessServices, startNginx, startPostgres, startRedis, type NginxService, type PostgresService, type RedisService } from '../helpers/services.ts';

const skip = skipUnlessServices('postgresBin', 'redisServer', 'nginx');
let postgres: PostgresService;
let redis: RedisService;
let databaseUrl: string;
let instances: Instance[] = [];
let nginx: NginxService;
let balancer: string;

before(async () => {
  if (skip) return;
  postgres = await startPostgres();
  redis = await startRedis();
  databaseUrl = postgres.createDatabase('cluster');
  const env = { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_DELAYS_MS: '200,400' };
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

test('a listing created through one instance is read through each of the others', { skip, timeout: 60_000 }, async (t) => {
  const creator = await userWithKey(instances, 'creator', ['read:listings', 'write:listings']);
  for (let index = 0; index < 3; index += 1) {
    const made = await call(instances[index]!.url, 'POST', '/v1/listings', creator.key, { title: `From ${index}`, type: 'TOOL', price: index });
    assert.equal(made.status, 201);
    for (const other of instances) {
      // How long the other instances took to serve it, for the report.
      const took = await eventually(async () => (await call(other.url, 'GET', `/v1/listings/${made.body.data.id}`, creator.key)).status === 200, 30_000, `listing on ${other.url}`);
      t.diagnostic(`listing from instance ${index} served by ${other.url} after ${took.toFixed(1)} ms`);
    }
  }
});

test('a revoked key is refused by every other instance, 20 revocations through each instance in turn', { skip, timeout: 120_000 }, async (t) => {
  const lags = await revocationLags(instances, 20);
  // Each revocation was waited on as a condition at every other instance; how long that took is
  // a benchmark figure (npm run bench:timings, docs/performance.md), reported here only.
  assert.equal(lags.length, 40, 'every revocation was seen by both other instances');
  t.diagnostic(`revocation lag over ${lags.length} samples: p50 ${percentile(lags, 0.5).toFixed(1)} ms, p99 ${percentile(lags, 0.99).toFixed(1)} ms, max ${Math.max(...lags).toFixed(1)} ms`);
});

test('a limit of 30 per minute admits exactly 30 of 90 requests spread over the instances by nginx (3 trials)', { skip, timeout: 60_000 }, async () => {
  for (let trial = 0; trial < 3; trial += 1) {
    const { key } = await userWithKey(instances, 'member', ['read:listings'], 30);
    const answers = await Promise.all(Array.from({ length: 90 }, () => call(balancer, 'GET', '/v1/listings', key)));
    const statuses = answers.map((answer) => answer.status);
    assert.equal(statuses.filter((status) => status === 200).length, 30, `trial ${trial + 1}`);
    assert.equal(statuses.filter((status) => status === 429).length, 60);
    const remaining = answers.filter((answer) => answer.status === 200).map((answer) => Number(answer.headers.get('x-ratelimit-remaining')));
    assert.deepEqual(remaining.sort((a, b) => a - b), Array.from({ length: 30 }, (_unused, index) => index));
  }
});

test('every webhook event is delivered once, whichever instance wrote it', { skip, timeout: 120_000 }, async (t) => {
  const received: string[] = [];
  const receiver: Server = createServer((req, res) => {
    received.push(String(req.headers['webhook-id']));
    req.resume();
    req.on('end', () => res.end('ok'));
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  t.after(() => receiver.close());
  const creator = await userWithKey(instances, 'creator', ['read:listings', 'write:listings', 'read:webhooks', 'write:webhooks']);
  const hook = await call(balancer, 'POST', '/v1/webhooks', creator.key, { url: `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`, events: ['ping', 'listing.created', 'listing.updated'] });
  assert.equal(hook.status, 201, JSON.stringify(hook.body));
  const writes = await Promise.all(
    Array.from({ length: 30 }, async (_unused, index) => {
      const made = await call(balancer, 'POST', '/v1/listings', creator.key, { title: `Hooked ${index}`, type: 'TOOL', price: index });
      assert.equal(made.status, 201);
      return made.body.data.id as string;
    }),
  );
  for (const [index, id] of writes.slice(0, 10).entries()) {
    assert.equal((await call(balancer, 'PUT', `/v1/listings/${id}`, creator.key, { price: 100 + index })).status, 200);
  }
  // 30 created + 10 updated + the ping.
  await eventually(async () => new Set(received).size === 41, 30_000, 'every event received', 50).catch((error: Error) => {
    throw new Error(`${error.message}: ${new Set(received).size} distinct of ${received.length}; ${instances.map((instance) => instance.errors()).join('\n')}`);
  });
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  const counts = new Map<string, number>();
  for (const id of received) counts.set(id, (counts.get(id) ?? 0) + 1);
  const repeated = [...counts].filter(([, count]) => count > 1);
  assert.deepEqual(repeated, [], 'no event sent twice');
  assert.equal(received.length, 41);
});

test('SIGKILL of an instance under write load loses no acknowledged write', { skip, timeout: 120_000 }, async () => {
  const victim = await startInstance(databaseUrl, redis.url);
  const creator = await userWithKey([...instances, victim], 'creator', ['read:listings', 'write:listings']);
  const acknowledged: string[] = [];
  let writing = true;
  const writers = Array.from({ length: 12 }, async (_unused, index) => {
    const target = index % 2 === 0 ? victim : instances[index % 3]!;
    let sequence = 0;
    while (writing) {
      sequence += 1;
      try {
        const made = await call(target.url, 'POST', '/v1/listings', creator.key, { title: `Load ${index}-${sequence}`, type: 'TOOL', price: 1 });
        if (made.status === 201) acknowledged.push(made.body.data.id);
      } catch {
        // The victim's connections break when it dies: those writes were never acknowledged.
        if (target === victim) return;
      }
    }
  });
  // Killed once writes are flowing (however busy the machine), and the others go on a little after.
  await eventually(async () => acknowledged.length > 20, 60_000, 'writes acknowledged before the kill');
  await victim.stop('SIGKILL');
  const atKill = acknowledged.length;
  await eventually(async () => acknowledged.length >= atKill + 10, 60_000, 'writes acknowledged after the kill');
  writing = false;
  await Promise.all(writers);
  const reader = instances[1]!;
  await eventually(
    async () => {
      const missing = await Promise.all(acknowledged.slice(-20).map(async (id) => (await call(reader.url, 'GET', `/v1/listings/${id}`, creator.key)).status));
      return missing.every((status) => status === 200);
    },
    30_000,
    'the latest acknowledged writes visible',
  );
  for (const id of acknowledged) assert.equal((await call(reader.url, 'GET', `/v1/listings/${id}`, creator.key)).status, 200, id);
});

test('PostgreSQL stopped: writes 503 and reads 200 through nginx; after its restart writes succeed without restarting the instances', { skip, timeout: 180_000 }, async () => {
  const creator = await userWithKey(instances, 'creator', ['read:listings', 'write:listings']);
  const id = (await call(balancer, 'POST', '/v1/listings', creator.key, { title: 'Outage', type: 'TOOL', price: 1 })).body.data.id;
  for (const instance of instances) await eventually(async () => (await call(instance.url, 'GET', `/v1/listings/${id}`, creator.key)).status === 200, 30_000, 'seen');
  await postgres.stop();
  try {
    for (let index = 0; index < 6; index += 1) {
      assert.equal((await call(balancer, 'PUT', `/v1/listings/${id}`, creator.key, { price: 2 })).status, 503);
      const read = await call(balancer, 'GET', `/v1/listings/${id}`, creator.key);
      assert.equal(read.status, 200);
      assert.equal(read.body.data.price, 1);
    }
  } finally {
    await postgres.start();
  }
  await eventually(async () => (await call(balancer, 'PUT', `/v1/listings/${id}`, creator.key, { price: 3 })).status === 200, 20_000, 'writes back', 200);
  for (let index = 0; index < 6; index += 1) {
    assert.equal((await call(balancer, 'PUT', `/v1/listings/${id}`, creator.key, { price: 10 + index })).status, 200);
  }
  for (const instance of instances) {
    await eventually(async () => (await call(instance.url, 'GET', `/v1/listings/${id}`, creator.key)).body.data.price === 15, 30_000, 'latest price everywhere');
  }
});
