// The limits in a Redis as it is deployed on managed services: over TLS (rediss://, a private
// authority given as REDIS_TLS_CA) with an ACL user; a wrong password leaves no connection
// behind; a stalled Redis (paused, connections open) does not hold requests: each is answered
// 503 while Redis is still stalled, and the requests so refused do not count against the key's
// window. How quickly is a benchmark figure (npm run bench:timings, docs/performance.md).

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { createClient } from 'redis';
import { eventually } from '../helpers/eventually.ts';
import { startServer } from '../helpers/server.ts';
import { skipUnlessServices, startRedis, type RedisService } from '../helpers/services.ts';
import { hasOpenssl, makeTestCertificates, type TestCertificates } from '../helpers/tls-certificates.ts';

const skip = skipUnlessServices('redisServer') || (hasOpenssl() ? false : 'openssl is not installed');
const ADMIN = ['admin', 'on', '>admin-secret', '~*', '&*', '+@all'];
const LIMITER = ['limiter', 'on', '>limiter-secret', '~marketplace:*', '+@scripting', '+@sortedset', '+pexpire', '+time', '+ping', '+hello', '+auth'];
let certificates: TestCertificates;
let tlsRedis: RedisService;
let plainRedis: RedisService;

before(async () => {
  if (skip) return;
  certificates = makeTestCertificates();
  const users = [ADMIN, LIMITER, ['default', 'off']];
  tlsRedis = await startRedis({ tls: { certFile: certificates.certFile, keyFile: certificates.keyFile, caFile: certificates.caFile }, users });
  plainRedis = await startRedis({ users });
});
after(async () => {
  await tlsRedis?.destroy();
  await plainRedis?.destroy();
  certificates?.remove();
});

/** `redis[s]://user:password@127.0.0.1:port` for one of the test's Redis servers. */
function urlWith(redis: RedisService, user: string, password: string): string {
  const url = new URL(redis.url);
  url.username = user;
  url.password = password;
  return url.toString();
}

/** The number of connections Redis holds, seen from an administrator's own connection (itself included). */
async function connectionsOn(redis: RedisService): Promise<number> {
  const admin = createClient({ url: urlWith(redis, 'admin', 'admin-secret') });
  admin.on('error', () => {});
  await admin.connect();
  try {
    const list = (await admin.sendCommand(['CLIENT', 'LIST'])) as string;
    return list.trim().split('\n').length;
  } finally {
    admin.destroy();
  }
}

test('rediss:// with an ACL user and a private authority (REDIS_TLS_CA): limits are kept in Redis over TLS', { skip, timeout: 60_000 }, async (t) => {
  const server = await startServer(t, {
    dataDir: null,
    config: { redisUrl: urlWith(tlsRedis, 'limiter', 'limiter-secret'), redisTlsCaFile: certificates.caFile },
  });
  const { key, keyId } = await server.userWithKey('member', ['read:listings'], 3);
  const statuses = [];
  for (let index = 0; index < 4; index += 1) statuses.push((await server.request('GET', '/v1/listings', { key })).status);
  assert.deepEqual(statuses, [200, 200, 200, 429]);
  const admin = createClient({ url: urlWith(tlsRedis, 'admin', 'admin-secret'), socket: { tls: true, ca: [readFileSync(certificates.caFile)] } });
  await admin.connect();
  try {
    assert.equal(await admin.zCard(`marketplace:limit:key:${keyId}`), 3, 'the window is in Redis');
  } finally {
    admin.destroy();
  }
  const stats = await server.admin('GET', '/admin/v1/stats');
  assert.equal(stats.body.data.backends.limits, `Redis at 127.0.0.1:${tlsRedis.port} (TLS)`);
});

test('rediss:// without the authority refuses the self-signed certificate: limits fail closed (503)', { skip, timeout: 60_000 }, async (t) => {
  const server = await startServer(t, { dataDir: null, config: { redisUrl: urlWith(tlsRedis, 'limiter', 'limiter-secret') }, expectedServerErrors: [503] });
  const { key } = await server.userWithKey('member', ['read:listings'], 3);
  assert.equal((await server.request('GET', '/v1/listings', { key })).status, 503);
});

test('a wrong Redis password: 503 on every request, and no connection left open on Redis', { skip, timeout: 60_000 }, async (t) => {
  const before = await connectionsOn(plainRedis);
  const server = await startServer(t, { dataDir: null, config: { redisUrl: urlWith(plainRedis, 'limiter', 'wrong-password') }, expectedServerErrors: [503] });
  const { key } = await server.userWithKey('member', ['read:listings'], 100);
  for (let index = 0; index < 5; index += 1) {
    const answer = await server.request('GET', '/v1/listings', { key });
    assert.equal(answer.status, 503);
    assert.match(answer.body.error, /rate limits/);
  }
  await eventually(async () => (await connectionsOn(plainRedis)) === before, 5_000, 'Redis holds no connection of the refused logins');
});

test('a stalled Redis: each request is answered 503 while Redis is still stalled, and the refused requests do not count against the window', { skip, timeout: 60_000 }, async (t) => {
  const server = await startServer(t, { dataDir: null, config: { redisUrl: urlWith(plainRedis, 'limiter', 'limiter-secret') }, expectedServerErrors: [503] });
  const { key } = await server.userWithKey('member', ['read:listings'], 5);
  assert.equal((await server.request('GET', '/v1/listings', { key })).status, 200);
  assert.equal((await server.request('GET', '/v1/listings', { key })).status, 200);
  plainRedis.pause();
  try {
    // Four requests one after another, all answered before Redis is resumed (below): none is
    // held until Redis answers.
    for (let index = 0; index < 4; index += 1) {
      const started = performance.now();
      const answer = await server.request('GET', '/v1/listings', { key });
      t.diagnostic(`answered ${answer.status} after ${(performance.now() - started).toFixed(0)} ms`);
      assert.equal(answer.status, 503);
    }
  } finally {
    plainRedis.resume();
  }
  // Redis has now run (or dropped) whatever waited on its connections; the window holds the 2 admitted requests only.
  const statuses: number[] = [];
  await eventually(async () => (await server.request('GET', '/v1/listings', { key })).status !== 503, 10_000, 'served again after Redis resumed');
  for (let index = 0; index < 3; index += 1) statuses.push((await server.request('GET', '/v1/listings', { key })).status);
  assert.deepEqual(statuses, [200, 200, 429], '2 before the stall + 1 when served again + 2 = 5 admitted; the 503s counted nothing');
});

test('a Redis silent for longer than 5 s: its connection is replaced, one connection remains, and requests are served once it answers', { skip, timeout: 60_000 }, async (t) => {
  const baseline = await connectionsOn(plainRedis);
  const output: string[] = [];
  const server = await startServer(t, { dataDir: null, config: { redisUrl: urlWith(plainRedis, 'limiter', 'limiter-secret') }, expectedServerErrors: [503], output });
  const { key } = await server.userWithKey('member', ['read:listings'], 1_000);
  assert.equal((await server.request('GET', '/v1/listings', { key })).status, 200);
  plainRedis.pause();
  try {
    // Requests keep failing closed until the connection has been silent long enough to be replaced.
    await eventually(async () => {
      assert.equal((await server.request('GET', '/v1/listings', { key })).status, 503);
      return output.join('').includes('connecting again');
    }, 20_000, 'the silent connection replaced', 200);
  } finally {
    plainRedis.resume();
  }
  await eventually(async () => (await server.request('GET', '/v1/listings', { key })).status === 200, 10_000, 'served again');
  await eventually(async () => (await connectionsOn(plainRedis)) === baseline + 1, 5_000, 'only the new connection is left on Redis');
});
