// Failed sign-ins: one answer whatever was wrong (unknown email, wrong password, an account
// without a password), after the same work (one scrypt), so neither the body nor the time tells
// whether an email exists (the times are an `npm run bench:timings` figure); 10 failures per
// account in 15 minutes, then 429 with Retry-After even for the right password; and the
// per-address failed-authentication limit of section 3.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { prepareDummyHash, scryptLoad } from '../../src/modules/portal/passwords.ts';
import { sameOrigin, setPassword, signedInUser } from '../helpers/portal.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

function attempt(server: TestServer, email: string, password: string) {
  return server.request('POST', '/portal/v1/session', { headers: sameOrigin(server), body: { email, password } });
}

test('10 wrong passwords → 401 each; the 11th attempt → 429 with Retry-After, even with the right password', async (t) => {
  const server = await startServer(t);
  const ada = await signedInUser(server);
  for (let index = 1; index <= 10; index += 1) {
    const response = await attempt(server, ada.email, `wrong password number ${index}`);
    assert.equal(response.status, 401, `attempt ${index}`);
  }
  const eleventh = await attempt(server, ada.email, ada.password);
  assert.equal(eleventh.status, 429, eleventh.text);
  const retryAfter = Number(eleventh.headers.get('retry-after'));
  assert.ok(retryAfter >= 1 && retryAfter <= 15 * 60, `Retry-After ${retryAfter}`);
  // The limit is the account's, counted by the email asked for (case does not matter)...
  assert.equal((await attempt(server, ada.email.toUpperCase(), ada.password)).status, 429);
  // ...and another account is not affected; a signed-in session is not either.
  const bob = await signedInUser(server);
  assert.equal((await attempt(server, bob.email, bob.password)).status, 201);
  assert.equal((await server.request('GET', '/portal/v1/me', { headers: ada.headers })).status, 200);
});

test('the account limit counts one account whatever Unicode form its email is typed in: alternating NFC and NFD buys no extra guesses', async (t) => {
  const server = await startServer(t);
  const jose = await signedInUser(server, { email: 'jos\u00e9.limits@example.com' });
  for (let index = 1; index <= 10; index += 1) {
    const typed = index % 2 === 0 ? 'jos\u00e9.limits@example.com' : 'jose\u0301.limits@example.com';
    assert.equal((await attempt(server, typed, `wrong password number ${index}`)).status, 401, `attempt ${index}`);
  }
  assert.equal((await attempt(server, 'jose\u0301.limits@example.com', jose.password)).status, 429);
  assert.equal((await attempt(server, 'jos\u00e9.limits@example.com', jose.password)).status, 429);
});

test('the account limit lifts after 15 minutes', async (t) => {
  const clock = new ManualClock();
  const server = await startServer(t, { clock });
  const ada = await signedInUser(server);
  for (let index = 0; index < 10; index += 1) await attempt(server, ada.email, 'not the password at all');
  assert.equal((await attempt(server, ada.email, ada.password)).status, 429);
  clock.advance(15 * 60 * 1000 + 1);
  assert.equal((await attempt(server, ada.email, ada.password)).status, 201);
});

test('an unknown email gets the same limit: whether an account exists does not change the answers', async (t) => {
  const server = await startServer(t);
  for (let index = 0; index < 10; index += 1) assert.equal((await attempt(server, 'nobody@example.com', `guess ${index} guess`)).status, 401);
  assert.equal((await attempt(server, 'nobody@example.com', 'one more guess here')).status, 429);
});

test('failed sign-ins count against the address with failed API keys (section 3): past 100 → 429', async (t) => {
  const server = await startServer(t);
  const ada = await signedInUser(server);
  for (let index = 0; index < 100; index += 1) {
    const response = await server.request('GET', '/v1/listings', { key: 'market_live_not-a-real-key' });
    assert.equal(response.status, 401);
  }
  const signIn = await attempt(server, ada.email, ada.password);
  assert.equal(signIn.status, 429, signIn.text);
  assert.match(signIn.body.error, /address/);
});

test('unknown email, wrong password, account without a password: the same status and body, after the same work (one scrypt each)', async (t) => {
  const server = await startServer(t);
  const ada = await signedInUser(server);
  const invited = await server.createUser({ email: 'no-password-yet@example.com' });
  assert.ok(invited.id);
  // The dummy hash an unknown email is checked against is made once per process; made before
  // counting, so each attempt's count is its own check.
  await prepareDummyHash();
  const cases = {
    unknown: (index: number) => attempt(server, `nobody-${index}@example.com`, 'some password here'),
    wrong: (index: number) => attempt(server, ada.email, `wrong password ${index}`),
    noPassword: (index: number) => attempt(server, 'no-password-yet@example.com', `some password ${index}`),
  };
  const bodies = new Set<string>();
  // Equal work rather than equal milliseconds (a busy machine blurs those): without the dummy
  // scrypt an unknown email would run none. How similar the times are is measured by
  // `npm run bench:timings` (bench/timings-sign-in.ts). 3 rounds stay under the account limit.
  for (let round = 0; round < 3; round += 1) {
    for (const [name, send] of Object.entries(cases)) {
      const before = scryptLoad().started;
      const response = await send(round);
      assert.equal(response.status, 401, `${name}: ${response.text}`);
      assert.equal(scryptLoad().started - before, 1, `${name}: one scrypt`);
      const { request_id: _requestId, ...rest } = response.body;
      bodies.add(JSON.stringify(rest));
    }
  }
  assert.equal(bodies.size, 1, `one answer: ${[...bodies].join(' | ')}`);
});

test('a suspended account with the right password: 403; with a wrong one: the usual 401', async (t) => {
  const server = await startServer(t);
  const user = await server.createUser({ email: 'suspended@example.com' });
  await setPassword(server, user.id, 'right password here');
  await server.admin('POST', `/admin/v1/users/${user.id}/suspend`, { reason: 'spam' });
  assert.equal((await attempt(server, 'suspended@example.com', 'wrong password here')).status, 401);
  assert.equal((await attempt(server, 'suspended@example.com', 'right password here')).status, 403);
});
