// Bursts against the failure limits over three instances on one PostgreSQL and one Redis:
// attempts spread over every instance at once take their places in the same Redis windows
// (one script), so at most the limits' remainder are ever checked across all of them; the
// rest are 429 with Retry-After, the right password included.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { call, startInstances, type Instance } from '../helpers/cluster.ts';
import { skipUnlessServices, startPostgres, startRedis, type PostgresService, type RedisService } from '../helpers/services.ts';

const skip = skipUnlessServices('postgresBin', 'redisServer');
let postgres: PostgresService;
let redis: RedisService;
let instances: Instance[] = [];
let made = 0;

before(async () => {
  if (skip) return;
  postgres = await startPostgres();
  redis = await startRedis();
  instances = await startInstances(postgres.createDatabase('sign_in_burst'), redis.url);
});

after(async () => {
  await Promise.all(instances.map((instance) => instance.stop()));
  await redis?.destroy();
  await postgres?.destroy();
});

interface Sent {
  status: number;
  retryAfter: string | null;
}

/** A portal request to `base` as its own page sends it (JSON, same Origin). */
async function portal(base: string, method: string, path: string, body: unknown, cookie?: string): Promise<Sent & { cookie: string | null }> {
  const response = await fetch(base + path, {
    method,
    headers: { origin: base, 'content-type': 'application/json', ...(cookie ? { cookie } : {}) },
    body: JSON.stringify(body),
  });
  await response.arrayBuffer();
  return { status: response.status, retryAfter: response.headers.get('retry-after'), cookie: response.headers.get('set-cookie')?.split(';', 1)[0] ?? null };
}

/** A user with a password set through an invitation on the first instance; the session that made. */
async function portalUser(): Promise<{ email: string; password: string; cookie: string }> {
  made += 1;
  const email = `burst-${process.pid}-${made}@example.com`;
  const password = `correct horse battery staple ${made}`;
  const user = await call(instances[0]!.url, 'POST', '/admin/v1/users', 'admin', { name: 'Burst user', email });
  const invitation = await call(instances[0]!.url, 'POST', `/admin/v1/users/${user.body.data.id}/invitations`, 'admin');
  const set = await portal(instances[0]!.url, 'POST', '/portal/v1/password', { invitation: invitation.body.data.token, password });
  assert.equal(set.status, 201);
  return { email, password, cookie: set.cookie! };
}

/** Request `index` goes to instance `index % 3`. */
const on = (index: number) => instances[index % instances.length]!.url;

function tally(answers: readonly Sent[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const answer of answers) {
    counts[answer.status] = (counts[answer.status] ?? 0) + 1;
    if (answer.status === 429) assert.ok(Number(answer.retryAfter) >= 1, `Retry-After ${answer.retryAfter}`);
  }
  return counts;
}

test('30 wrong passwords and the right one at once over three instances: at most 10 checked; the rest 429', { skip, timeout: 120_000 }, async () => {
  const ada = await portalUser();
  const passwords = Array.from({ length: 30 }, (_, index) => `wrong password number ${index}`);
  passwords.splice(20, 0, ada.password);
  const counts = tally(await Promise.all(passwords.map((password, index) => portal(on(index), 'POST', '/portal/v1/session', { email: ada.email, password }))));
  assert.ok((counts[401] ?? 0) + (counts[201] ?? 0) <= 10, JSON.stringify(counts));
  assert.equal((counts[401] ?? 0) + (counts[201] ?? 0) + (counts[429] ?? 0), 31, JSON.stringify(counts));
});

test('9 failures, then 31 attempts at once over three instances: only the one place left is checked', { skip, timeout: 120_000 }, async () => {
  const ada = await portalUser();
  for (let index = 0; index < 9; index += 1) assert.equal((await portal(on(index), 'POST', '/portal/v1/session', { email: ada.email, password: `wrong password number ${index}` })).status, 401);
  const passwords = Array.from({ length: 30 }, (_, index) => `another wrong password ${index}`);
  passwords.push(ada.password);
  const counts = tally(await Promise.all(passwords.map((password, index) => portal(on(index), 'POST', '/portal/v1/session', { email: ada.email, password }))));
  assert.ok((counts[401] ?? 0) + (counts[201] ?? 0) <= 1, JSON.stringify(counts));
});

test('15 current_password guesses at once over three instances, after 9 failures: at most one checked', { skip, timeout: 120_000 }, async () => {
  const ada = await portalUser();
  for (let index = 0; index < 9; index += 1) assert.equal((await portal(on(index), 'POST', '/portal/v1/session', { email: ada.email, password: `wrong password number ${index}` })).status, 401);
  const guesses = Array.from({ length: 15 }, (_, index) => portal(on(index), 'POST', '/portal/v1/password', { current_password: `a wrong guess ${index}`, password: `a brand new password ${index}` }, ada.cookie));
  const counts = tally(await Promise.all(guesses));
  assert.ok((counts[400] ?? 0) <= 1, JSON.stringify(counts));
  assert.equal((counts[400] ?? 0) + (counts[429] ?? 0), 15, JSON.stringify(counts));
});

test('120 failed sign-ins at once from one address over three instances: at most the address limit checked', { skip, timeout: 120_000 }, async () => {
  const answers = await Promise.all(Array.from({ length: 120 }, (_, index) => portal(on(index), 'POST', '/portal/v1/session', { email: `nobody-${index}@example.com`, password: `some guess number ${index}` })));
  const counts = tally(answers);
  assert.ok((counts[401] ?? 0) <= 100, JSON.stringify(counts));
  assert.equal((counts[401] ?? 0) + (counts[429] ?? 0), 120, JSON.stringify(counts));
});
