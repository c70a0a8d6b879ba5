// Portal sessions against a real server: signing in sets an HttpOnly, SameSite=Strict cookie
// that opens /portal/v1; without it every route but sign-in, password and sign-up is 401;
// signing out ends it on the server, not only in the browser.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cookieFrom, sameOrigin, signedInUser, signIn } from '../helpers/portal.ts';
import { startServer } from '../helpers/server.ts';

test('sign in → GET /portal/v1/me with the cookie → sign out → 401 with the same cookie', async (t) => {
  const server = await startServer(t);
  const ada = await signedInUser(server, { role: 'creator', name: 'Ada' });
  const me = await server.request('GET', '/portal/v1/me', { headers: ada.headers });
  assert.equal(me.status, 200, me.text);
  assert.equal(me.body.data.email, ada.email);
  assert.equal(me.body.data.role, 'creator');
  assert.equal(me.headers.get('cache-control'), 'no-store');

  const out = await server.request('DELETE', '/portal/v1/session', { headers: ada.headers });
  assert.equal(out.status, 204);
  assert.match(out.headers.get('set-cookie') ?? '', /^marketplace_session=; .*Max-Age=0/);
  assert.equal((await server.request('GET', '/portal/v1/me', { headers: ada.headers })).status, 401, 'the old cookie is dead on the server');
  // Signing in again works and makes a different session.
  const again = await signIn(server, ada.email, ada.password);
  assert.notEqual(again.cookie, ada.cookie);
  assert.equal((await server.request('GET', '/portal/v1/me', { headers: again.headers })).status, 200);
});

test('without a session: /portal/v1/me → 401; sign-in, password and sign-up are reachable', async (t) => {
  const server = await startServer(t);
  const anonymous = await server.request('GET', '/portal/v1/me');
  assert.equal(anonymous.status, 401);
  assert.match(anonymous.body.error, /Sign in/);
  assert.equal((await server.request('GET', '/portal/v1/me', { headers: { cookie: 'marketplace_session=not-a-session' } })).status, 401);
  assert.equal((await server.request('PUT', '/portal/v1/me', { headers: sameOrigin(server), body: { bio: 'x' } })).status, 401);
  assert.equal((await server.request('POST', '/portal/v1/session', { headers: sameOrigin(server), body: { email: 'nobody@example.com', password: 'whatever it is here' } })).status, 401);
  assert.equal((await server.request('POST', '/portal/v1/password', { headers: sameOrigin(server), body: { invitation: 'x', password: 'a long enough password' } })).status, 400);
  assert.equal((await server.request('POST', '/portal/v1/signup', { headers: sameOrigin(server), body: { name: 'X', email: 'x@example.com', password: 'a long enough password' } })).status, 404, 'invite-only by default');
  assert.equal((await server.request('GET', '/portal/v1/nothing-here')).status, 404);
});

test('the cookie over plain HTTP: HttpOnly, SameSite=Strict, Path=/, no Secure, no __Host- prefix, Max-Age 7 days', async (t) => {
  const server = await startServer(t);
  const user = await server.createUser({ email: 'flags@example.com' });
  const { setPassword } = await import('../helpers/portal.ts');
  await setPassword(server, user.id, 'flags and more flags');
  const response = await server.request('POST', '/portal/v1/session', { headers: sameOrigin(server), body: { email: 'flags@example.com', password: 'flags and more flags' } });
  assert.equal(response.status, 201);
  const header = response.headers.get('set-cookie')!;
  const attributes = header.split(';').map((part) => part.trim());
  assert.match(attributes[0]!, /^marketplace_session=[A-Za-z0-9_-]{43}$/);
  assert.ok(attributes.includes('HttpOnly'), header);
  assert.ok(attributes.includes('SameSite=Strict'), header);
  assert.ok(attributes.includes('Path=/'), header);
  assert.ok(attributes.includes(`Max-Age=${7 * 24 * 3600}`), header);
  assert.ok(!attributes.includes('Secure'), header);
  assert.equal(cookieFrom(response)!.startsWith('__Host-'), false);
});

test('signing in again from a signed-in browser ends the session its cookie replaces', async (t) => {
  const server = await startServer(t);
  const ada = await signedInUser(server);
  const again = await server.request('POST', '/portal/v1/session', { headers: ada.headers, body: { email: ada.email, password: ada.password } });
  assert.equal(again.status, 201);
  assert.equal((await server.request('GET', '/portal/v1/me', { headers: ada.headers })).status, 401, 'the replaced session is gone');
  assert.equal((await server.request('GET', '/portal/v1/me', { headers: { cookie: cookieFrom(again)! } })).status, 200);
  // A password reset from a browser signed in as this user: one session left, the new one.
  const invitation = await server.admin('POST', `/admin/v1/users/${ada.userId}/invitations`);
  const reset = await server.request('POST', '/portal/v1/password', { headers: { cookie: cookieFrom(again)!, ...sameOrigin(server) }, body: { invitation: invitation.body.data.token, password: 'reset while signed in' } });
  assert.equal(reset.status, 201, reset.text);
  const { SESSIONS } = await import('../../src/domain/account-records.ts');
  assert.equal([...server.app.store.values(SESSIONS)].filter((session) => session.user_id === ada.userId).length, 1);
});

test('sign-in finds the account whatever Unicode form or case the email is typed in (NFD, capitals), as the user records compare them', async (t) => {
  const server = await startServer(t);
  const jose = await signedInUser(server, { email: 'jos\u00e9@example.com' });
  for (const typed of ['jose\u0301@example.com', 'JOS\u00c9@Example.COM']) {
    const answer = await server.request('POST', '/portal/v1/session', { headers: sameOrigin(server), body: { email: typed, password: jose.password } });
    assert.equal(answer.status, 201, `${JSON.stringify(typed)}: ${answer.text}`);
  }
});
