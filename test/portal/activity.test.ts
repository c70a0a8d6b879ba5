// The user's activity log against a real server: sign-ins (with the client address and user
// agent), failed sign-ins on the account, sign-outs, keys created, rolled, revoked and expired,
// plan requests, webhook changes and password changes, newest first and paged; never another
// user's entries; the address and agent go when the user is erased.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AUDIT } from '../../src/domain/records.ts';
import { eventually } from '../helpers/eventually.ts';
import { sameOrigin, signedInUser, signIn, type PortalUser } from '../helpers/portal.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

function portal(server: TestServer, user: PortalUser, method: string, path: string, body?: unknown) {
  return server.request(method, `/portal/v1${path}`, { headers: user.headers, body });
}

test("the activity log: the user's own security and account events, newest first, paged", async (t) => {
  const server = await startServer(t, { env: { WEBHOOK_ALLOW_PRIVATE: '1' } });
  const ada = await signedInUser(server);
  const bob = await signedInUser(server);

  // A failed sign-in on her account, from a browser that names itself.
  const failed = await server.request('POST', '/portal/v1/session', { headers: { ...sameOrigin(server), 'user-agent': 'Firefox/140 (test)' }, body: { email: ada.email, password: 'not her password at all' } });
  assert.equal(failed.status, 401);
  const signedIn = await server.request('POST', '/portal/v1/session', { headers: { ...sameOrigin(server), 'user-agent': 'Firefox/140 (test)' }, body: { email: ada.email, password: ada.password } });
  assert.equal(signedIn.status, 201);
  const session = { ...ada, headers: { ...ada.headers, cookie: signedIn.headers.get('set-cookie')!.split(';')[0]! } };

  const key = (await portal(server, session, 'POST', '/keys', { name: 'laptop' })).body.data;
  await portal(server, session, 'POST', `/keys/${key.id}/roll`, {});
  await portal(server, session, 'POST', '/plan-requests', { key_id: key.id, plan: 'business' });
  await portal(server, session, 'DELETE', `/keys/${key.id}`);
  const short = (await portal(server, session, 'POST', '/keys', { name: 'short', expires_at: new Date(Date.now() + 500).toISOString() })).body.data;
  const hook = (await portal(server, session, 'POST', '/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['listing.created'] })).body.data;
  await portal(server, session, 'DELETE', `/webhooks/${hook.id}`);
  // Bob's doings never show in hers, nor a sign-in attempt on his account.
  await portal(server, bob, 'POST', '/keys', { name: 'bobs' });
  await server.request('POST', '/portal/v1/session', { headers: sameOrigin(server), body: { email: bob.email, password: 'not his password either' } });

  await eventually(async () => Date.now() > Date.parse(short.expires_at), 5_000, 'the short key expires');
  const answer = await portal(server, session, 'GET', '/activity?limit=100');
  assert.equal(answer.status, 200, answer.text);
  const entries = answer.body.data as Array<{ at: string; action: string; client_address: string | null; user_agent: string | null; target: { type: string; id: string } }>;
  const actions = entries.map((entry) => entry.action);
  for (const expected of ['sign_in', 'sign_in_failed', 'key.created', 'key.rolled', 'key.revoked', 'key.expired', 'plan.requested', 'webhook.created', 'webhook.deleted', 'password.set']) {
    assert.ok(actions.includes(expected), `${expected} in ${actions.join(', ')}`);
  }
  assert.equal(actions[0], 'key.expired', 'newest first: the expiry came last');
  const times = entries.map((entry) => entry.at);
  assert.deepEqual(times, [...times].sort().reverse(), 'ordered newest first');
  for (const entry of entries) assert.deepEqual(Object.keys(entry).sort(), ['action', 'at', 'client_address', 'target', 'user_agent']);

  const signIns = entries.filter((entry) => entry.action === 'sign_in' && entry.user_agent === 'Firefox/140 (test)');
  assert.equal(signIns.length, 1);
  assert.equal(signIns[0]!.client_address, '127.0.0.1');
  const failures = entries.filter((entry) => entry.action === 'sign_in_failed');
  assert.equal(failures.length, 1, 'only the failure on her account');
  assert.equal(failures[0]!.user_agent, 'Firefox/140 (test)');
  assert.ok(!JSON.stringify(entries).includes(bob.userId), "nothing of bob's");
  assert.ok(!answer.text.includes('not her password'), 'never the password tried');

  // Paged: two at a time, the same order.
  const page2 = await portal(server, session, 'GET', '/activity?page=2&limit=2');
  assert.deepEqual(page2.body.data, entries.slice(2, 4));
  assert.equal(page2.body.pagination.total, entries.length);
  assert.equal((await portal(server, session, 'GET', '/activity?user_id=' + bob.userId)).status, 400, 'no way to ask for anyone else');
  assert.equal((await server.request('GET', '/portal/v1/activity')).status, 401);

  // Sign out, and it shows once signed in again.
  await server.request('DELETE', '/portal/v1/session', { headers: session.headers });
  const again = await signIn(server, ada.email, ada.password);
  const after = await server.request('GET', '/portal/v1/activity?limit=3', { headers: again.headers });
  assert.deepEqual(after.body.data.slice(0, 2).map((entry: any) => entry.action), ['sign_in', 'sign_out']);

  // Erasing her takes her addresses and user agents from the record.
  assert.equal((await server.admin('DELETE', `/admin/v1/users/${ada.userId}`)).status, 200);
  const kept = [...server.app.store.values(AUDIT)].filter((entry: any) => entry.target_id === ada.userId || entry.actor?.id === ada.userId);
  assert.ok(kept.length > 0);
  assert.ok(!JSON.stringify(kept).includes('Firefox/140'), 'no user agent of hers is kept');
});
