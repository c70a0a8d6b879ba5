// The rate limits kept in a real Redis: the same decisions and headers as the in-process
// limiter, exact when many instances count at once, and closed (503) while Redis is away.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { RedisConnection } from '../../src/backends/redis/redis-connection.ts';
import { RedisSlidingWindowLimiter } from '../../src/backends/redis/redis-limiter.ts';
import { eventually } from '../helpers/eventually.ts';
import { LimiterUnavailableError } from '../../src/limits/rate-limiter.ts';
import { SlidingWindowLimiter } from '../../src/limits/sliding-window.ts';
import { startServer } from '../helpers/server.ts';
import { skipUnlessServices, sleep, startRedis, type RedisService } from '../helpers/services.ts';

const skip = skipUnlessServices('redisServer');
let redis: RedisService;
let prefixCounter = 0;

before(async () => {
  if (!skip) redis = await startRedis();
});
after(async () => {
  await redis?.destroy();
});

/** A limiter on its own connection (as another instance would have) and its own keys. */
async function redisLimiter(prefix: string, windowMs = 60_000) {
  const client = await RedisConnection.open({ url: redis.url });
  const limiter = new RedisSlidingWindowLimiter({ connection: client, prefix, windowMs, monotonicNow: () => performance.now() });
  return { limiter, client };
}

function freshPrefix(): string {
  prefixCounter += 1;
  return `test:${process.pid}:${prefixCounter}:`;
}

test('Redis limiter decides as the in-process one: admitted, remaining, then refused with the same reset', { skip, timeout: 30_000 }, async () => {
  const { limiter, client } = await redisLimiter(freshPrefix(), 10_000);
  const local = new SlidingWindowLimiter({ windowMs: 10_000, monotonicNow: () => performance.now() });
  try {
    for (let index = 0; index < 5; index += 1) {
      const shared = await limiter.hit('key_a', 3);
      const own = local.hit('key_a', 3);
      assert.equal(shared.allowed, own.allowed, `request ${index + 1}`);
      assert.equal(shared.remaining, own.remaining, `request ${index + 1}`);
      // Both reset when the first admission leaves the 10 s window: within a second of each other.
      assert.ok(Math.abs(shared.resetAt - shared.decidedAt - (own.resetAt - own.decidedAt)) < 1_000);
    }
    const peeked = await limiter.peek('key_a', 3);
    assert.equal(peeked.allowed, false);
    const untouched = await limiter.peek('key_b', 3);
    assert.deepEqual([untouched.allowed, untouched.remaining], [true, 3]);
    assert.ok(Math.abs(untouched.resetAt - untouched.decidedAt - 10_000) < 1);
  } finally {
    client.close();
  }
});

test('Redis limiter: a window slides, and refused requests do not extend the block', { skip, timeout: 30_000 }, async () => {
  const { limiter, client } = await redisLimiter(freshPrefix(), 1_000);
  try {
    for (let index = 0; index < 3; index += 1) assert.equal((await limiter.hit('key', 3)).allowed, true);
    for (let index = 0; index < 10; index += 1) assert.equal((await limiter.hit('key', 3)).allowed, false);
    const blocked = await limiter.hit('key', 3);
    await sleep(blocked.resetAt - blocked.decidedAt + 50);
    const admitted = await limiter.hit('key', 3);
    assert.equal(admitted.allowed, true, 'admitted once the reset time has passed');
  } finally {
    client.close();
  }
});

test('Redis limiter is exact across instances: 90 concurrent requests on three connections, limit 30 → 30 admitted (5 trials)', { skip, timeout: 60_000 }, async () => {
  const instances = await Promise.all([redisLimiter(''), redisLimiter(''), redisLimiter('')]);
  try {
    for (let trial = 0; trial < 5; trial += 1) {
      const prefix = freshPrefix();
      const limiters = instances.map(({ client }) => new RedisSlidingWindowLimiter({ connection: client, prefix, monotonicNow: () => performance.now() }));
      const decisions = await Promise.all(Array.from({ length: 90 }, (_, index) => limiters[index % 3]!.hit('key', 30)));
      assert.equal(decisions.filter((decision) => decision.allowed).length, 30, `trial ${trial + 1}`);
      const remainings = decisions.filter((decision) => decision.allowed).map((decision) => decision.remaining).sort((a, b) => a - b);
      assert.deepEqual(remainings, Array.from({ length: 30 }, (_, index) => index), 'each admission saw its own place in the window');
    }
  } finally {
    for (const { client } of instances) client.close();
  }
});

test('Redis away → LimiterUnavailableError; back → decisions again on the same client', { skip, timeout: 60_000 }, async () => {
  const { limiter, client } = await redisLimiter(freshPrefix());
  try {
    assert.equal((await limiter.hit('key', 5)).allowed, true);
    await redis.stop();
    await assert.rejects(limiter.hit('key', 5), LimiterUnavailableError);
    await redis.start();
    // The client reconnects by itself (within 2 s); the restarted Redis has lost the script and
    // its windows: the limiter sends the script again, and the window starts afresh.
    await eventually(async () => (await limiter.hit('key', 5).catch(() => null))?.remaining === 4, 10_000, 'decisions again after the restart');
  } finally {
    client.close();
  }
});

test('HTTP with limits in Redis: X-RateLimit-* headers, 429 with Retry-After, 503 while Redis is away, then served again', { skip, timeout: 60_000 }, async (t) => {
  const first = await startServer(t, { dataDir: null, config: { redisUrl: redis.url }, expectedServerErrors: [503] });
  const { key } = await first.userWithKey('member', ['read:listings'], 4);
  const answers = [];
  for (let index = 0; index < 5; index += 1) answers.push(await first.request('GET', '/v1/listings', { key }));
  assert.deepEqual(answers.map((answer) => answer.status), [200, 200, 200, 200, 429]);
  assert.deepEqual(answers.map((answer) => answer.headers.get('x-ratelimit-remaining')), ['3', '2', '1', '0', '0']);
  const reset = Number(answers[4]!.headers.get('x-ratelimit-reset'));
  assert.ok(reset > Date.now() / 1000 && reset <= Math.ceil(Date.now() / 1000) + 60);
  assert.ok(Number(answers[4]!.headers.get('retry-after')) >= 1);
  const usage = await first.request('GET', '/v1/analytics/usage', { key });
  assert.equal(usage.status, 429, 'the analytics route counts against the same window');

  await redis.stop();
  const closed = await first.request('GET', '/v1/listings', { key });
  assert.equal(closed.status, 503);
  assert.match(closed.body.error, /rate limits/);
  assert.equal(closed.headers.get('retry-after'), '5');
  const unknownKey = await first.request('GET', '/v1/listings', { key: 'mk_nope' });
  assert.equal(unknownKey.status, 503, 'failed authentications cannot be counted either: closed');
  await redis.start();
  const { key: second } = await first.userWithKey('member', ['read:listings'], 4);
  await eventually(async () => (await first.request('GET', '/v1/listings', { key: second })).status === 200, 10_000, 'served again after Redis returned');
});
