// A password change, a suspension and an erasure end every portal session of the user at once,
// on the server: the old cookies are refused from the next request, and stay refused after an
// unsuspension (a suspension ends sessions, it does not pause them).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cookieFrom, sameOrigin, signedInUser, signIn } from '../helpers/portal.ts';
import { startServer } from '../helpers/server.ts';
import { SESSIONS } from '../../src/domain/account-records.ts';

test('suspension ends every session: 401 at once, and still 401 after unsuspension; a new sign-in works then', async (t) => {
  const server = await startServer(t);
  const ada = await signedInUser(server);
  const second = await signIn(server, ada.email, ada.password);
  assert.equal((await server.admin('POST', `/admin/v1/users/${ada.userId}/suspend`, { reason: 'spam' })).status, 200);
  for (const session of [ada, second]) assert.equal((await server.request('GET', '/portal/v1/me', { headers: session.headers })).status, 401);
  const refused = await server.request('POST', '/portal/v1/session', { headers: sameOrigin(server), body: { email: ada.email, password: ada.password } });
  assert.equal(refused.status, 403, 'a suspended user cannot sign in');
  assert.equal((await server.admin('POST', `/admin/v1/users/${ada.userId}/unsuspend`)).status, 200);
  for (const session of [ada, second]) assert.equal((await server.request('GET', '/portal/v1/me', { headers: session.headers })).status, 401, 'ended, not paused');
  assert.equal([...server.app.store.values(SESSIONS)].filter((session) => session.user_id === ada.userId).length, 0, 'no session record of the user is left');
  const again = await signIn(server, ada.email, ada.password);
  assert.equal((await server.request('GET', '/portal/v1/me', { headers: again.headers })).status, 200);
});

test('erasure ends every session and forgets the password', async (t) => {
  const server = await startServer(t);
  const ada = await signedInUser(server);
  assert.equal((await server.admin('DELETE', `/admin/v1/users/${ada.userId}`)).status, 200);
  assert.equal((await server.request('GET', '/portal/v1/me', { headers: ada.headers })).status, 401);
  assert.equal((await server.request('POST', '/portal/v1/session', { headers: sameOrigin(server), body: { email: ada.email, password: ada.password } })).status, 401);
  const left = ['sessions', 'credentials', 'invitations'].flatMap((collection) => [...server.app.store.values(collection as typeof SESSIONS)].filter((record) => record.id === ada.userId || record.user_id === ada.userId));
  assert.deepEqual(left, [], 'no session, password or invitation of the erased user is kept');
});

test('a password change keeps the session that made it (under a new cookie value) and ends every other; the old password stops working', async (t) => {
  const server = await startServer(t);
  const ada = await signedInUser(server);
  const other = await signIn(server, ada.email, ada.password);
  const changed = await server.request('POST', '/portal/v1/password', { headers: ada.headers, body: { current_password: ada.password, password: 'a brand new passphrase' } });
  assert.equal(changed.status, 200, changed.text);
  assert.equal((await server.request('GET', '/portal/v1/me', { headers: { cookie: cookieFrom(changed)! } })).status, 200, 'the session that changed it stays, rotated');
  assert.equal((await server.request('GET', '/portal/v1/me', { headers: other.headers })).status, 401, 'every other session ended');
  assert.equal((await server.request('POST', '/portal/v1/session', { headers: sameOrigin(server), body: { email: ada.email, password: ada.password } })).status, 401);
  await signIn(server, ada.email, 'a brand new passphrase');
});

test('a password reset from a new invitation ends every session, the resetting browser gets a new one', async (t) => {
  const server = await startServer(t);
  const ada = await signedInUser(server);
  const invitation = await server.admin('POST', `/admin/v1/users/${ada.userId}/invitations`);
  const reset = await server.request('POST', '/portal/v1/password', { headers: sameOrigin(server), body: { invitation: invitation.body.data.token, password: 'forgot it so reset it' } });
  assert.equal(reset.status, 201, reset.text);
  assert.equal((await server.request('GET', '/portal/v1/me', { headers: ada.headers })).status, 401);
});
