// Instances that cannot lie about being current or ready, on a real PostgreSQL and Redis: an
// instance frozen while a key is revoked elsewhere refuses it when it wakes; a failed webhook delivery is retried after its delay whichever instance takes it; /readyz says 503
// while the database or Redis is away and 200 again by itself. The outage tests come last.

import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, test } from 'node:test';
import { call, startInstance, userWithKey, type Instance } from '../helpers/cluster.ts';
import { eventually } from '../helpers/eventually.ts';
import { skipUnlessServices, startPostgres, startRedis, type PostgresService, type RedisService } from '../helpers/services.ts';

const skip = skipUnlessServices('postgresBin', 'redisServer');
const RETRY_DELAY_MS = 400;
let postgres: PostgresService;
let redis: RedisService;
let databaseUrl: string;
let instances: Instance[] = [];

before(async () => {
  if (skip) return;
  postgres = await startPostgres();
  redis = await startRedis();
  databaseUrl = postgres.createDatabase('followers');
  // Analytics off: its periodic writes would otherwise wake a silent follower now and then.
  const env = { MARKETPLACE_ANALYTICS: '0', WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_DELAYS_MS: `${RETRY_DELAY_MS},${RETRY_DELAY_MS}` };
  instances.push(await startInstance(databaseUrl, redis.url, env));
  instances.push(await startInstance(databaseUrl, redis.url, env));
});

after(async () => {
  await Promise.all(instances.map((instance) => instance.stop()));
  await redis?.destroy();
  await postgres?.destroy();
});

test('a failed delivery is never retried before its delay, whichever instance takes the retry', { skip, timeout: 120_000 }, async (t) => {
  const arrivals = new Map<string, number[]>();
  const receiver: Server = createServer((req, res) => {
    const id = String(req.headers['webhook-id']);
    arrivals.set(id, [...(arrivals.get(id) ?? []), performance.now()]);
    req.resume();
    req.on('end', () => {
      res.statusCode = 500;
      res.end('failing on purpose');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  t.after(() => receiver.close());
  const creator = await userWithKey(instances, 'creator', ['read:listings', 'write:listings', 'read:webhooks', 'write:webhooks']);
  const port = (receiver.address() as { port: number }).port;
  const hook = await call(instances[0]!.url, 'POST', '/v1/webhooks', creator.key, { url: `http://127.0.0.1:${port}/hook`, events: ['listing.created'] });
  assert.equal(hook.status, 201, JSON.stringify(hook.body));
  const events = 40;
  await Promise.all(
    Array.from({ length: events }, async (_unused, index) => {
      const made = await call(instances[index % 2]!.url, 'POST', '/v1/listings', creator.key, { title: `Failing ${index}`, type: 'TOOL', price: index });
      assert.equal(made.status, 201);
    }),
  );
  // Every event tried three times (two retries).
  await eventually(async () => arrivals.size >= events && [...arrivals.values()].every((times) => times.length >= 3), 30_000, 'every attempt made', 50).catch((error: Error) => {
    throw new Error(`${error.message}: ${arrivals.size} events, attempts ${[...arrivals.values()].map((times) => times.length).join(',')}`);
  });
  const early: string[] = [];
  for (const [id, times] of arrivals) {
    for (let attempt = 1; attempt < times.length; attempt += 1) {
      const gap = times[attempt]! - times[attempt - 1]!;
      // A few ms of slack: the delay is counted from the failure's answer, the gap here from its request.
      if (gap < RETRY_DELAY_MS - 5) early.push(`${id} attempt ${attempt + 1} after ${gap.toFixed(0)} ms`);
    }
  }
  assert.deepEqual(early, [], 'retries sent before their delay');
});

test('an instance frozen while a key is revoked elsewhere never serves the key when it wakes, and the revocation does not wait for it: it refuses until caught up, then says 401', { skip, timeout: 120_000 }, async (t) => {
  const [writer, frozen] = instances as [Instance, Instance];
  const owner = await userWithKey(instances, 'member', ['read:listings']);
  for (let trial = 0; trial < 3; trial += 1) {
    const key = await call(writer.url, 'POST', '/admin/v1/keys', 'admin', { user_id: owner.userId, permissions: ['read:listings'] });
    assert.equal((await call(frozen.url, 'GET', '/v1/listings', key.body.data.key)).status, 200);
    frozen.process.kill('SIGSTOP');
    let revoked;
    try {
      const started = performance.now();
      revoked = await call(writer.url, 'DELETE', `/admin/v1/keys/${key.body.data.id}`, 'admin');
      t.diagnostic(`revocation with an instance frozen acknowledged after ${(performance.now() - started).toFixed(0)} ms`);
      // Answered while the frozen instance still slept: the writer does not wait for it.
    } finally {
      frozen.process.kill('SIGCONT');
    }
    assert.equal(revoked.status, 200);
    const statuses: number[] = [];
    await eventually(
      async () => {
        const answer = await call(frozen.url, 'GET', '/v1/listings', key.body.data.key);
        statuses.push(answer.status);
        return answer.status === 401;
      },
      10_000,
      'the revoked key refused as unknown once caught up',
    );
    assert.ok(statuses.every((status) => status === 401 || status === 503), `trial ${trial + 1}: ${statuses.join(', ')}`);
    t.diagnostic(`trial ${trial + 1} after waking: ${statuses.join(', ')}`);
    await eventually(async () => (await call(frozen.url, 'GET', '/readyz', 'none')).status === 200, 10_000, 'ready again');
  }
});

test('/readyz turns 503 once PostgreSQL stops, with the reason, and 200 again once it is back', { skip, timeout: 120_000 }, async () => {
  const instance = instances[1]!;
  assert.equal((await call(instance.url, 'GET', '/readyz', 'none')).status, 200);
  await postgres.stop();
  try {
    await eventually(async () => (await call(instance.url, 'GET', '/readyz', 'none')).status === 503, 30_000, '/readyz 503 with PostgreSQL stopped', 50);
    const answer = await call(instance.url, 'GET', '/readyz', 'none');
    assert.equal(answer.body.status, 'not_ready');
    assert.ok(answer.body.reasons.some((reason: string) => /database/.test(reason)), JSON.stringify(answer.body));
  } finally {
    await postgres.start();
  }
  await eventually(async () => (await call(instance.url, 'GET', '/readyz', 'none')).status === 200, 20_000, '/readyz 200 again', 100);
});

test('/readyz turns 503 once Redis stops, with the reason, and 200 again once it is back', { skip, timeout: 120_000 }, async () => {
  const instance = instances[0]!;
  await eventually(async () => (await call(instance.url, 'GET', '/readyz', 'none')).status === 200, 20_000, '/readyz 200 first', 100);
  await redis.stop();
  try {
    await eventually(async () => (await call(instance.url, 'GET', '/readyz', 'none')).status === 503, 30_000, '/readyz 503 with Redis stopped', 50);
    const answer = await call(instance.url, 'GET', '/readyz', 'none');
    assert.ok(answer.body.reasons.some((reason: string) => /rate limiter/.test(reason)), JSON.stringify(answer.body));
  } finally {
    await redis.start();
  }
  await eventually(async () => (await call(instance.url, 'GET', '/readyz', 'none')).status === 200, 20_000, '/readyz 200 again', 100);
});
