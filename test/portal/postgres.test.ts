// Portal sessions on many instances sharing one PostgreSQL and one Redis: a session made on
// one instance is honoured by another, signing out or a suspension on one ends it on all, and
// the per-account limit on failed sign-ins counts across instances.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { eventually } from '../helpers/eventually.ts';
import { cookieFrom } from '../helpers/portal.ts';
import { ADMIN_TOKEN, startServer, type TestServer } from '../helpers/server.ts';
import { postgresAndRedisForFile, skipUnlessServices } from '../helpers/services.ts';

const skip = skipUnlessServices('postgresBin', 'redisServer');
const services = postgresAndRedisForFile(skip);
let databases = 0;

async function instances(t: import('node:test').TestContext, count: number): Promise<TestServer[]> {
  databases += 1;
  const databaseUrl = services.postgres.createDatabase(`portal_test_${process.pid}_${databases}`);
  const servers: TestServer[] = [];
  for (let index = 0; index < count; index += 1) {
    servers.push(await startServer(t, { dataDir: null, config: { databaseUrl, redisUrl: services.redis.url } }));
  }
  return servers;
}

/** A request from the portal's page on `server` (its own origin). */
function portal(server: TestServer, method: string, path: string, cookie: string | null, body?: unknown) {
  return server.request(method, path, { headers: { origin: server.url, ...(cookie ? { cookie } : {}) }, body });
}

test('a session made on one instance is honoured on another; sign-out and suspension on one end it on all', { skip, timeout: 120_000 }, async (t) => {
  const [first, second] = (await instances(t, 2)) as [TestServer, TestServer];
  const user = await first.createUser({ email: 'shared@example.com' });
  const invitation = await first.admin('POST', `/admin/v1/users/${user.id}/invitations`);
  // The invitation made on the first instance is redeemed on the second.
  await eventually(async () => (await second.admin('GET', `/admin/v1/users/${user.id}`)).status === 200, 2_000, 'the user reached the second instance');
  let set: Awaited<ReturnType<typeof portal>> | undefined;
  await eventually(async () => {
    set = await portal(second, 'POST', '/portal/v1/password', null, { invitation: invitation.body.data.token, password: 'shared across instances' });
    return set.status === 201;
  }, 2_000, 'the invitation reached the second instance');

  const signIn = await portal(first, 'POST', '/portal/v1/session', null, { email: 'shared@example.com', password: 'shared across instances' });
  assert.equal(signIn.status, 201, signIn.text);
  const cookie = cookieFrom(signIn)!;
  await eventually(async () => (await portal(second, 'GET', '/portal/v1/me', cookie)).status === 200, 2_000, 'the session is honoured on the second instance');
  // A write on the second instance, decided on the session and user as they are there.
  const changed = await portal(second, 'PUT', '/portal/v1/me', cookie, { bio: 'written on the second' });
  assert.equal(changed.status, 200, changed.text);

  assert.equal((await portal(second, 'DELETE', '/portal/v1/session', cookie)).status, 204);
  await eventually(async () => (await portal(first, 'GET', '/portal/v1/me', cookie)).status === 401, 2_000, 'signed out everywhere');

  const again = cookieFrom(await portal(first, 'POST', '/portal/v1/session', null, { email: 'shared@example.com', password: 'shared across instances' }))!;
  await eventually(async () => (await portal(second, 'GET', '/portal/v1/me', again)).status === 200, 2_000);
  assert.equal((await second.request('POST', `/admin/v1/users/${user.id}/suspend`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, body: { reason: 'spam' } })).status, 200);
  await eventually(async () => (await portal(first, 'GET', '/portal/v1/me', again)).status === 401, 2_000, 'the suspension ended it on the first instance');
});

test('failed sign-ins count per account across instances: 5 on one, 5 on another, the 11th → 429 on either', { skip, timeout: 120_000 }, async (t) => {
  const [first, second] = (await instances(t, 2)) as [TestServer, TestServer];
  for (let index = 0; index < 10; index += 1) {
    const server = index % 2 === 0 ? first : second;
    assert.equal((await portal(server, 'POST', '/portal/v1/session', null, { email: 'target@example.com', password: `guess number ${index}` })).status, 401);
  }
  for (const server of [first, second]) {
    assert.equal((await portal(server, 'POST', '/portal/v1/session', null, { email: 'target@example.com', password: 'one more guess' })).status, 429);
  }
});
