// Read-your-writes while the instances are behind most of the time: three instances on one
// PostgreSQL and one Redis, 16 connections writing listings in the background spread over the
// three, and a client that makes a change on one instance and sends its very next request to
// another. A writer no longer waits for the others; each request catches up first when its
// instance has applied less than the commit watermark. Every answer must already show the
// change: a new user's key is made (never 400/404), a new key works (never 401), a new listing is
// read (never 404), a PUT is what the next GET shows, a narrowed key is refused (403) and a
// widened one allowed, a listing just made is archived (never 404), a limit lowered below what
// the key used refuses its next write (429), a revoked key is refused at both other instances
// (401). Listing writes are decided without waiting for a catch-up (their reads are checked at
// commit): these trials check that their answers are current all the same. Then faults under the
// same load: Redis restarted from an older state (its watermark went back), and an instance
// frozen for 3 s while the others write: none of their answers is older than the last
// acknowledged write.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { call, startInstances, type Instance } from '../helpers/cluster.ts';
import { skipUnlessServices, startPostgres, startRedis, type PostgresService, type RedisService } from '../helpers/services.ts';

const skip = skipUnlessServices('postgresBin', 'redisServer');
// 60 in the suite (a few minutes on a busy machine: the writers keep both cores busy); FRESHNESS_TRIALS=500 for the full count.
const TRIALS = Number(process.env.FRESHNESS_TRIALS ?? 60);
const BACKGROUND_WRITERS = 16;
let postgres: PostgresService;
let redis: RedisService;
let instances: Instance[] = [];
let writerKey = '';
let backgroundWrites = 0;
let stopBackground = false;
let background: Promise<void>[] = [];

before(async () => {
  if (skip) return;
  postgres = await startPostgres();
  redis = await startRedis();
  instances = await startInstances(postgres.createDatabase('fresh_under_load'), redis.url, { MARKETPLACE_ANALYTICS: '0' });
  const user = await call(instances[0]!.url, 'POST', '/admin/v1/users', 'admin', { name: 'Background writer', role: 'creator' });
  const key = await call(instances[0]!.url, 'POST', '/admin/v1/keys', 'admin', { user_id: user.body.data.id, permissions: ['write:listings'], rate_limit: 1_000_000 });
  writerKey = key.body.data.key;
  background = Array.from({ length: BACKGROUND_WRITERS }, (_unused, index) => writeInBackground(instances[index % instances.length]!));
});

after(async () => {
  stopBackground = true;
  await Promise.all(background);
  await Promise.all(instances.map((instance) => instance.stop()));
  await redis?.destroy();
  await postgres?.destroy();
});

/** One connection writing listings one after the other until the file ends (503s, while Redis restarts, are retried). */
async function writeInBackground(instance: Instance): Promise<void> {
  while (!stopBackground) {
    const answer = await call(instance.url, 'POST', '/v1/listings', writerKey, { title: `Load ${backgroundWrites}`, type: 'TOOL', price: 1 }).catch(() => null);
    if (answer?.status === 201) backgroundWrites += 1;
  }
}

/** 503s (with Retry-After) answered during the trials: an instance that cannot vouch for its state, never a stale answer. */
let unavailable = 0;

/**
 * One request of a trial, sent again after a 503 with Retry-After as a client would: a loaded
 * machine can stall Redis past the limiter's bound, and the server then refuses (fails closed)
 * rather than guess. A 503 is never an answer from the past, so it is counted, not judged.
 */
async function answered(base: string, method: string, path: string, key: string, body?: unknown): Promise<Awaited<ReturnType<typeof call>>> {
  for (let attempt = 1; ; attempt += 1) {
    const answer = await call(base, method, path, key, body);
    const retryAfter = answer.headers.get('retry-after');
    if (answer.status !== 503 || retryAfter === null || attempt === 30) return answer;
    unavailable += 1;
    await new Promise((resolve) => setTimeout(resolve, Math.min(Number(retryAfter), 2) * 1000));
  }
}

/** The three instances in the order trial `n` uses them: the change on the first, the next requests on the others. */
function rotation(trial: number): [Instance, Instance, Instance] {
  const [a, b, c] = instances as [Instance, Instance, Instance];
  return ([[a, b, c], [b, c, a], [c, a, b]] as const)[trial % 3] as [Instance, Instance, Instance];
}

test(`each change is what the very next request to another instance sees, under 16 background writers (${TRIALS} trials)`, { skip, timeout: Math.max(900_000, TRIALS * 8_000) }, async (t) => {
  const startedWith = backgroundWrites;
  for (let trial = 0; trial < TRIALS; trial += 1) {
    const [first, second, third] = rotation(trial);
    const where = `trial ${trial + 1}`;
    // New user on one instance → a key for it made on another.
    const user = await answered(first.url, 'POST', '/admin/v1/users', 'admin', { name: `Fresh ${trial}`, role: 'creator' });
    assert.equal(user.status, 201, `${where}: ${JSON.stringify(user.body)}`);
    const made = await answered(second.url, 'POST', '/admin/v1/keys', 'admin', { user_id: user.body.data.id, permissions: ['read:listings', 'write:listings'], rate_limit: 100_000 });
    assert.equal(made.status, 201, `${where}, the key for the new user: ${JSON.stringify(made.body)}`);
    const key = made.body.data.key as string;
    // New key → used on the third.
    const used = await answered(third.url, 'GET', '/v1/listings?limit=1', key);
    assert.equal(used.status, 200, `${where}, the new key: ${JSON.stringify(used.body)}`);
    // New listing → read on another.
    const listing = await answered(first.url, 'POST', '/v1/listings', key, { title: `Mine ${trial}`, type: 'TOOL', price: 1 });
    assert.equal(listing.status, 201, `${where}: ${JSON.stringify(listing.body)}`);
    const id = listing.body.data.id as string;
    const read = await answered(second.url, 'GET', `/v1/listings/${id}`, key);
    assert.equal(read.status, 200, `${where}, the new listing: ${JSON.stringify(read.body)}`);
    // PUT → the next GET elsewhere shows it.
    const put = await answered(third.url, 'PUT', `/v1/listings/${id}`, key, { price: 1000 + trial });
    assert.equal(put.status, 200, `${where}: ${JSON.stringify(put.body)}`);
    const after = await answered(first.url, 'GET', `/v1/listings/${id}`, key);
    assert.equal(after.body?.data?.price, 1000 + trial, `${where}, the GET after the PUT: ${JSON.stringify(after.body)}`);
    // Permission narrowed → refused on another.
    const narrowed = await answered(second.url, 'PATCH', `/admin/v1/keys/${made.body.data.id}`, 'admin', { permissions: ['read:listings'] });
    assert.equal(narrowed.status, 200, `${where}: ${JSON.stringify(narrowed.body)}`);
    const refused = await answered(third.url, 'POST', '/v1/listings', key, { title: 'Not any more', type: 'TOOL', price: 1 });
    assert.equal(refused.status, 403, `${where}, a write after the permission was taken away: ${JSON.stringify(refused.body)}`);
    // Permission given back → a write on another is allowed at once.
    assert.equal((await answered(first.url, 'PATCH', `/admin/v1/keys/${made.body.data.id}`, 'admin', { permissions: ['read:listings', 'write:listings'] })).status, 200);
    const allowed = await answered(second.url, 'POST', '/v1/listings', key, { title: `Again ${trial}`, type: 'TOOL', price: 1 });
    assert.equal(allowed.status, 201, `${where}, a write after the permission was given back: ${JSON.stringify(allowed.body)}`);
    // A listing made on one instance → archived at once on another.
    const archived = await answered(third.url, 'DELETE', `/v1/listings/${allowed.body.data.id}`, key);
    assert.equal(archived.status, 200, `${where}, archiving the listing just made: ${JSON.stringify(archived.body)}`);
    // Limit lowered below what the key used this minute → a write on another instance is refused (429).
    assert.equal((await answered(first.url, 'PATCH', `/admin/v1/keys/${made.body.data.id}`, 'admin', { rate_limit: 2 })).status, 200);
    const overLimit = await answered(second.url, 'POST', '/v1/listings', key, { title: 'Over the new limit', type: 'TOOL', price: 1 });
    assert.equal(overLimit.status, 429, `${where}, a write after the limit was lowered: ${JSON.stringify(overLimit.body)}`);
    // Revoked → 401 at both other instances.
    assert.equal((await answered(first.url, 'DELETE', `/admin/v1/keys/${made.body.data.id}`, 'admin')).status, 200);
    for (const other of [second, third]) {
      const answer = await answered(other.url, 'GET', '/v1/listings?limit=1', key);
      assert.equal(answer.status, 401, `${where}, the revoked key at ${other.url}: ${JSON.stringify(answer.body)}`);
    }
  }
  const written = backgroundWrites - startedWith;
  t.diagnostic(`${written} background writes committed during the trials; ${unavailable} answers were 503 with Retry-After and sent again`);
  assert.ok(written > TRIALS, 'the background writers kept writing throughout');
});

test('Redis restarted from an older state under write load: a key revoked after that state is never served again', { skip, timeout: 300_000 }, async () => {
  for (let trial = 0; trial < 5; trial += 1) {
    const [first, second, third] = rotation(trial);
    const user = await call(first.url, 'POST', '/admin/v1/users', 'admin', { name: `Snapshot ${trial}`, role: 'member' });
    const made = await call(first.url, 'POST', '/admin/v1/keys', 'admin', { user_id: user.body.data.id, permissions: ['read:listings'], rate_limit: 100_000 });
    const key = made.body.data.key as string;
    for (const instance of [second, third]) assert.equal((await call(instance.url, 'GET', '/v1/listings?limit=1', key)).status, 200);
    // Redis's state now, with the key alive; then the revocation raises the watermark past it.
    await redisCommand(redis.url, ['SAVE']);
    assert.equal((await call(first.url, 'DELETE', `/admin/v1/keys/${made.body.data.id}`, 'admin')).status, 200);
    // A restart loads the saved state: the watermark goes back to before the revocation.
    await redis.stop();
    await redis.start();
    // Until each instance has repaired the watermark it answers 503; never 200.
    let refused = 0;
    while (refused < 6) {
      for (const instance of [second, third]) {
        const answer = await call(instance.url, 'GET', '/v1/listings?limit=1', key);
        assert.ok([401, 503].includes(answer.status), `trial ${trial + 1}: the revoked key after Redis went back answered ${answer.status} at ${instance.url}`);
        if (answer.status === 401) refused += 1;
      }
    }
  }
});

test('an instance frozen for 3 s while the others write answers nothing older than the last acknowledged write when it wakes', { skip, timeout: 300_000 }, async () => {
  for (let trial = 0; trial < 5; trial += 1) {
    const [frozen, writer] = rotation(trial);
    const user = await call(writer.url, 'POST', '/admin/v1/users', 'admin', { name: `Frozen ${trial}`, role: 'creator' });
    const made = await call(writer.url, 'POST', '/admin/v1/keys', 'admin', { user_id: user.body.data.id, permissions: ['read:listings', 'write:listings'], rate_limit: 100_000 });
    const key = made.body.data.key as string;
    assert.equal((await call(frozen.url, 'GET', '/v1/listings?limit=1', key)).status, 200);
    frozen.process.kill('SIGSTOP');
    let listingId: string;
    try {
      const listing = await call(writer.url, 'POST', '/v1/listings', key, { title: `While frozen ${trial}`, type: 'TOOL', price: 1 });
      assert.equal(listing.status, 201);
      listingId = listing.body.data.id;
      assert.equal((await call(writer.url, 'PATCH', `/admin/v1/keys/${made.body.data.id}`, 'admin', { permissions: ['read:listings'] })).status, 200);
      await new Promise((resolve) => setTimeout(resolve, 3_000)); // the freeze itself, not a wait for a condition
    } finally {
      frozen.process.kill('SIGCONT');
    }
    // Sent after every change above was acknowledged: fresh, or 503 — never the old state.
    const read = await call(frozen.url, 'GET', `/v1/listings/${listingId}`, key);
    assert.ok(read.status === 200 || read.status === 503, `trial ${trial + 1}: the listing made during the freeze answered ${read.status}`);
    const write = await call(frozen.url, 'POST', '/v1/listings', key, { title: 'Narrowed', type: 'TOOL', price: 1 });
    assert.ok(write.status === 403 || write.status === 503, `trial ${trial + 1}: a write with the narrowed key answered ${write.status}`);
  }
});

/** One command to Redis over a raw socket (RESP), for SAVE. */
async function redisCommand(url: string, args: string[]): Promise<string> {
  const { createConnection } = await import('node:net');
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host: hostname, port: Number(port) }, () => {
      socket.write(`*${args.length}\r\n${args.map((arg) => `$${Buffer.byteLength(arg)}\r\n${arg}\r\n`).join('')}`);
    });
    let reply = '';
    socket.on('data', (chunk) => {
      reply += chunk.toString();
      if (reply.endsWith('\r\n')) {
        socket.end();
        resolve(reply.trim());
      }
    });
    socket.on('error', reject);
  });
}
