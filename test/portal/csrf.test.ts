// CSRF: a page on another origin cannot make any portal write with the user's cookie. Every
// write (POST, PUT, PATCH, DELETE) needs an Origin equal to the server's own (or
// Sec-Fetch-Site: same-origin) and, when it has a body, JSON; anything else is 403 and changes
// nothing. Sign-in itself is a write, so another site cannot sign a browser in either.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sameOrigin, signedInUser } from '../helpers/portal.ts';
import { startServer } from '../helpers/server.ts';

test('cross-origin writes with a valid cookie → 403 and nothing changes', async (t) => {
  const server = await startServer(t);
  const ada = await signedInUser(server, { name: 'Ada' });
  const cookie = { cookie: ada.cookie };
  const attempts: Array<{ what: string; method: string; path: string; headers: Record<string, string>; body?: unknown; rawBody?: string }> = [
    { what: 'another origin', method: 'PUT', path: '/portal/v1/me', headers: { ...cookie, origin: 'http://evil.example' }, body: { name: 'Mallory' } },
    { what: 'another port of the same host', method: 'PUT', path: '/portal/v1/me', headers: { ...cookie, origin: server.url.replace(/:\d+$/, ':1') }, body: { name: 'Mallory' } },
    { what: 'https instead of http', method: 'PUT', path: '/portal/v1/me', headers: { ...cookie, origin: server.url.replace('http:', 'https:') }, body: { name: 'Mallory' } },
    { what: 'Origin: null (a sandboxed frame)', method: 'PUT', path: '/portal/v1/me', headers: { ...cookie, origin: 'null' }, body: { name: 'Mallory' } },
    { what: 'no Origin, no Sec-Fetch-Site', method: 'PUT', path: '/portal/v1/me', headers: cookie, body: { name: 'Mallory' } },
    { what: 'Sec-Fetch-Site: cross-site', method: 'PUT', path: '/portal/v1/me', headers: { ...cookie, 'sec-fetch-site': 'cross-site' }, body: { name: 'Mallory' } },
    { what: 'Sec-Fetch-Site: same-site (a sibling subdomain)', method: 'PUT', path: '/portal/v1/me', headers: { ...cookie, 'sec-fetch-site': 'same-site' }, body: { name: 'Mallory' } },
    {
      what: 'a form post (text/plain) from the right origin',
      method: 'PUT',
      path: '/portal/v1/me',
      headers: { ...cookie, ...sameOrigin(server), 'content-type': 'text/plain' },
      rawBody: '{"name":"Mallory"}',
    },
    { what: 'sign-out from another origin', method: 'DELETE', path: '/portal/v1/session', headers: { ...cookie, origin: 'http://evil.example' } },
    { what: 'password change from another origin', method: 'POST', path: '/portal/v1/password', headers: { ...cookie, origin: 'http://evil.example' }, body: { current_password: ada.password, password: 'attacker chosen pass' } },
  ];
  for (const attempt of attempts) {
    const response = await server.request(attempt.method, attempt.path, { headers: attempt.headers, body: attempt.body, rawBody: attempt.rawBody });
    assert.equal(response.status, 403, `${attempt.what}: ${response.status} ${response.text}`);
    assert.equal(response.headers.get('access-control-allow-origin'), null);
  }
  const me = await server.request('GET', '/portal/v1/me', { headers: ada.headers });
  assert.equal(me.status, 200, 'the session survived the cross-origin sign-out');
  assert.equal(me.body.data.name, 'Ada', 'the profile is unchanged');
  await server.request('POST', '/portal/v1/session', { headers: sameOrigin(server), body: { email: ada.email, password: ada.password } }).then((response) => assert.equal(response.status, 201, 'the password is unchanged'));
});

test('sign-in from another origin → 403 (no login CSRF); from the own origin → 201', async (t) => {
  const server = await startServer(t);
  const ada = await signedInUser(server);
  const foreign = await server.request('POST', '/portal/v1/session', { headers: { origin: 'http://evil.example' }, body: { email: ada.email, password: ada.password } });
  assert.equal(foreign.status, 403);
  assert.equal(foreign.headers.get('set-cookie'), null);
});

test('same-origin writes pass with Origin or with Sec-Fetch-Site: same-origin alone', async (t) => {
  const server = await startServer(t);
  const ada = await signedInUser(server);
  assert.equal((await server.request('PUT', '/portal/v1/me', { headers: { cookie: ada.cookie, ...sameOrigin(server) }, body: { bio: 'by Origin' } })).status, 200);
  assert.equal((await server.request('PUT', '/portal/v1/me', { headers: { cookie: ada.cookie, 'sec-fetch-site': 'same-origin' }, body: { bio: 'by Sec-Fetch-Site' } })).status, 200);
  // Reads need neither (a browser on another origin cannot read them: no CORS headers are given).
  const read = await server.request('GET', '/portal/v1/me', { headers: { cookie: ada.cookie, origin: 'http://evil.example' } });
  assert.equal(read.status, 200);
  assert.equal(read.headers.get('access-control-allow-origin'), null);
});

test('with MARKETPLACE_URL set, that origin is the only one accepted, whatever Host says', async (t) => {
  const server = await startServer(t, { env: { MARKETPLACE_URL: 'http://market.example.com' } });
  const ada = await signedInUser(server, { password: 'a password for here' }).catch((error: Error) => error);
  assert.ok(ada instanceof Error, 'the helper signs in with the Host origin, which is now refused');
  const user = await server.createUser({ email: 'url@example.com' });
  const invitation = await server.admin('POST', `/admin/v1/users/${user.id}/invitations`);
  assert.match(invitation.body.data.url, /^http:\/\/market\.example\.com\/portal#invitation=[A-Za-z0-9_-]{43}$/);
  const body = { invitation: invitation.body.data.token, password: 'a password for here' };
  assert.equal((await server.request('POST', '/portal/v1/password', { headers: sameOrigin(server), body })).status, 403, 'the Host origin is not the public one');
  assert.equal((await server.request('POST', '/portal/v1/password', { headers: { origin: 'http://market.example.com' }, body })).status, 201);
});
