// Account changes that must re-authenticate or stay bounded (contract section 22): changing the
// sign-in email needs the current password (and a code with two-factor sign-in on) and ends every
// other session; a password change gives the current session a new cookie value; at most 20 live
// sessions per user; per user per day at most 50 keys created and 10 plan requests (then 429).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { cookieFrom, signedInUser, signIn } from '../helpers/portal.ts';
import { startServer } from '../helpers/server.ts';
import { codeAt, enrolTwoFactor } from '../helpers/two-factor.ts';

const DAY_MS = 24 * 60 * 60 * 1000;

test('changing the email needs current_password, and ends every other session', async (t) => {
  const server = await startServer(t);
  const ada = await signedInUser(server);
  const other = await signIn(server, ada.email, ada.password);
  const put = (body: Record<string, unknown>) => server.request('PUT', '/portal/v1/me', { headers: ada.headers, body });

  const bare = await put({ email: 'ada-new@example.com' });
  assert.equal(bare.status, 400, `no current_password: ${bare.text}`);
  assert.equal(bare.body.details.current_password, 'is required');
  assert.equal((await put({ email: 'ada-new@example.com', current_password: 'a wrong password here' })).status, 400);
  assert.equal((await server.request('GET', '/portal/v1/me', { headers: ada.headers })).body.data.email, ada.email, 'nothing changed');
  assert.equal((await put({ bio: 'no password needed for the rest' })).status, 200);
  assert.equal((await server.request('GET', '/portal/v1/me', { headers: other.headers })).status, 200, 'a bio change ends no session');

  const changed = await put({ email: 'ada-new@example.com', current_password: ada.password });
  assert.equal(changed.status, 200, changed.text);
  assert.equal(changed.body.data.email, 'ada-new@example.com');
  assert.equal((await server.request('GET', '/portal/v1/me', { headers: other.headers })).status, 401, 'the other session ended');
  assert.equal((await server.request('GET', '/portal/v1/me', { headers: ada.headers })).status, 200, 'this one lives on');
});

test('with two-factor sign-in on, changing the email also needs a code, accepted once', async (t) => {
  const clock = new ManualClock();
  const server = await startServer(t, { clock });
  const ada = await signedInUser(server);
  const { secret } = await enrolTwoFactor(server, ada, clock.now());
  clock.advance(30_000);
  const put = (body: Record<string, unknown>) => server.request('PUT', '/portal/v1/me', { headers: ada.headers, body });
  const noCode = await put({ email: 'ada-2fa@example.com', current_password: ada.password });
  assert.equal(noCode.status, 400);
  assert.equal(noCode.body.details.code, 'is required');
  const code = codeAt(secret, clock.now());
  assert.equal((await put({ email: 'ada-2fa@example.com', current_password: ada.password, code })).status, 200);
  assert.equal((await put({ email: 'ada-2fa-again@example.com', current_password: ada.password, code })).status, 400, 'the same code again');
});

test('a password change gives the current session a new cookie value; the old value is refused', async (t) => {
  const server = await startServer(t);
  const ada = await signedInUser(server);
  const changed = await server.request('POST', '/portal/v1/password', { headers: ada.headers, body: { current_password: ada.password, password: 'a rotated passphrase' } });
  assert.equal(changed.status, 200, changed.text);
  const rotated = cookieFrom(changed);
  assert.ok(rotated !== null, 'a new cookie is set');
  assert.notEqual(rotated, ada.cookie);
  assert.equal((await server.request('GET', '/portal/v1/me', { headers: { cookie: ada.cookie } })).status, 401, 'the old value no longer works');
  assert.equal((await server.request('GET', '/portal/v1/me', { headers: { cookie: rotated! } })).status, 200, 'the new one does');
});

test('at most 20 live sessions per user: the 21st sign-in ends the oldest', async (t) => {
  const clock = new ManualClock();
  const server = await startServer(t, { clock });
  const ada = await signedInUser(server);
  const cookies = [ada.cookie];
  for (let index = 1; index < 21; index += 1) {
    clock.advance(1_000);
    cookies.push((await signIn(server, ada.email, ada.password)).cookie);
  }
  const live = await Promise.all(cookies.map(async (cookie) => (await server.request('GET', '/portal/v1/me', { headers: { cookie } })).status));
  assert.equal(live[0], 401, 'the oldest ended');
  assert.deepEqual(live.slice(1), Array(20).fill(200), 'the 20 newest live');
});

test('at most 50 keys created per user per day (revoking does not give one back), then 429 with Retry-After', async (t) => {
  const clock = new ManualClock();
  const server = await startServer(t, { clock });
  const ada = await signedInUser(server);
  for (let index = 0; index < 50; index += 1) {
    const created = await server.request('POST', '/portal/v1/keys', { headers: ada.headers, body: { name: `key ${index}` } });
    assert.equal(created.status, 201, `key ${index}: ${created.text}`);
    assert.equal((await server.request('DELETE', `/portal/v1/keys/${created.body.data.id}`, { headers: ada.headers })).status, 200);
  }
  const refused = await server.request('POST', '/portal/v1/keys', { headers: ada.headers, body: { name: 'one too many' } });
  assert.equal(refused.status, 429, refused.text);
  assert.ok(Number(refused.headers.get('retry-after')) > 0);
  clock.advance(DAY_MS);
  // A day without use ended the session too (idle timeout): sign in again.
  const again = await signIn(server, ada.email, ada.password);
  assert.equal((await server.request('POST', '/portal/v1/keys', { headers: again.headers, body: { name: 'a day later' } })).status, 201);
});

test('at most 10 plan requests per user per day, then 429 with Retry-After', async (t) => {
  const clock = new ManualClock();
  const server = await startServer(t, { clock });
  const ada = await signedInUser(server);
  const keyIds: string[] = [];
  for (let index = 0; index < 12; index += 1) keyIds.push((await server.request('POST', '/portal/v1/keys', { headers: ada.headers, body: { name: `key ${index}` } })).body.data.id);
  let headers = ada.headers;
  const ask = (keyId: string) => server.request('POST', '/portal/v1/plan-requests', { headers, body: { key_id: keyId, plan: 'business' } });
  for (let index = 0; index < 10; index += 1) assert.equal((await ask(keyIds[index]!)).status, 201);
  const refused = await ask(keyIds[10]!);
  assert.equal(refused.status, 429, refused.text);
  assert.ok(Number(refused.headers.get('retry-after')) > 0);
  clock.advance(DAY_MS);
  headers = (await signIn(server, ada.email, ada.password)).headers;
  assert.equal((await ask(keyIds[11]!)).status, 201);
});
