// Bursts against the failure limits, on one instance: every password check takes its place in
// the account's and the address's failure limits before scrypt runs, so of N attempts sent at
// once at most the limits' remainder are ever checked (answered 401, 400 "is wrong" or 201);
// every other one is 429 with Retry-After, the right password included.
// Not in test:unit (slow: bursts of sign-ins, each a password hash at the product's full scrypt
// cost); npm test runs it.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sameOrigin, signedInUser } from '../helpers/portal.ts';
import { DEFAULT_PASSWORD_COST } from '../../src/config.ts';
import { startServer, type TestResponse, type TestServer } from '../helpers/server.ts';

/** The product's own scrypt cost: a burst must be refused before that work, not after it. */
const fullCost = { config: { passwordCost: DEFAULT_PASSWORD_COST } };

function signIn(server: TestServer, email: string, password: string, headers: Record<string, string> = {}) {
  return server.request('POST', '/portal/v1/session', { headers: { ...sameOrigin(server), ...headers }, body: { email, password } });
}

/** Statuses counted: {"401": 10, "429": 21}. */
function tally(responses: readonly TestResponse[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const response of responses) counts[response.status] = (counts[response.status] ?? 0) + 1;
  return counts;
}

function assertRefusalsSayWhen(responses: readonly TestResponse[]): void {
  for (const response of responses.filter((each) => each.status === 429)) {
    const retryAfter = Number(response.headers.get('retry-after'));
    assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1, `Retry-After ${response.headers.get('retry-after')}`);
  }
}

test('30 wrong passwords and the right one sent at once: at most 10 are checked, the rest 429; the right one signs in only if checked before the limit filled', async (t) => {
  const server = await startServer(t, fullCost);
  const ada = await signedInUser(server);
  const passwords = Array.from({ length: 30 }, (_, index) => `wrong password number ${index}`);
  passwords.splice(15, 0, ada.password);
  const responses = await Promise.all(passwords.map((password) => signIn(server, ada.email, password)));
  const counts = tally(responses);
  const checked = (counts[401] ?? 0) + (counts[201] ?? 0);
  assert.ok(checked <= 10, `at most the limit checked: ${JSON.stringify(counts)}`);
  assert.equal(checked + (counts[429] ?? 0), 31, JSON.stringify(counts));
  assertRefusalsSayWhen(responses);
  // Whatever the burst did, the limit is not past: the right password now is refused while 10 failures stand.
  if ((counts[401] ?? 0) >= 10) assert.equal((await signIn(server, ada.email, ada.password)).status, 429);
});

test('9 failures, then 31 attempts at once: only the one place left is ever checked', async (t) => {
  const server = await startServer(t, fullCost);
  const ada = await signedInUser(server);
  for (let index = 0; index < 9; index += 1) assert.equal((await signIn(server, ada.email, `wrong password number ${index}`)).status, 401);
  const passwords = Array.from({ length: 30 }, (_, index) => `another wrong password ${index}`);
  passwords.push(ada.password);
  const responses = await Promise.all(passwords.map((password) => signIn(server, ada.email, password)));
  const counts = tally(responses);
  assert.ok((counts[401] ?? 0) + (counts[201] ?? 0) <= 1, `one place left: ${JSON.stringify(counts)}`);
  assertRefusalsSayWhen(responses);
});

test('15 simultaneous current_password guesses in a password change: at most 10 checked, the rest 429', async (t) => {
  const server = await startServer(t, fullCost);
  const ada = await signedInUser(server);
  const guesses = Array.from({ length: 15 }, (_, index) =>
    server.request('POST', '/portal/v1/password', { headers: ada.headers, body: { current_password: `a wrong guess number ${index}`, password: `a brand new password ${index}` } }),
  );
  const responses = await Promise.all(guesses);
  const counts = tally(responses);
  assert.ok((counts[400] ?? 0) <= 10, `at most the limit checked: ${JSON.stringify(counts)}`);
  assert.equal((counts[400] ?? 0) + (counts[429] ?? 0), 15, JSON.stringify(counts));
  assertRefusalsSayWhen(responses);
  // The password did not change, and the session still works.
  assert.equal((await server.request('GET', '/portal/v1/me', { headers: ada.headers })).status, 200);
});

test('9 failures, then 15 current_password guesses at once: at most one checked', async (t) => {
  const server = await startServer(t, fullCost);
  const ada = await signedInUser(server);
  for (let index = 0; index < 9; index += 1) assert.equal((await signIn(server, ada.email, `wrong password number ${index}`)).status, 401);
  const guesses = Array.from({ length: 15 }, (_, index) =>
    server.request('POST', '/portal/v1/password', { headers: ada.headers, body: { current_password: `a wrong guess number ${index}`, password: `a brand new password ${index}` } }),
  );
  const counts = tally(await Promise.all(guesses));
  assert.ok((counts[400] ?? 0) <= 1, `one place left: ${JSON.stringify(counts)}`);
});

test('120 failed sign-ins sent at once from one address: at most the address limit (100) checked, the rest 429', async (t) => {
  const server = await startServer(t, fullCost);
  const responses = await Promise.all(Array.from({ length: 120 }, (_, index) => signIn(server, `nobody-${index}@example.com`, `some guess number ${index}`)));
  const counts = tally(responses);
  assert.ok((counts[401] ?? 0) <= 100, `at most the address limit checked: ${JSON.stringify(counts)}`);
  assert.equal((counts[401] ?? 0) + (counts[429] ?? 0), 120, JSON.stringify(counts));
  assertRefusalsSayWhen(responses);
});

test('99 failed API keys from an address, then 20 sign-ins at once from it: at most one checked', async (t) => {
  const server = await startServer(t, fullCost);
  const ada = await signedInUser(server);
  for (let index = 0; index < 99; index += 1) assert.equal((await server.request('GET', '/v1/listings', { key: 'market_live_not-a-real-key' })).status, 401);
  const responses = await Promise.all(Array.from({ length: 20 }, (_, index) => signIn(server, index === 10 ? ada.email : `nobody-${index}@example.com`, index === 10 ? ada.password : `guess ${index} guess`)));
  const counts = tally(responses);
  assert.ok((counts[401] ?? 0) + (counts[201] ?? 0) <= 1, `one place left: ${JSON.stringify(counts)}`);
});

test('wrong invitation tokens sent at once count against the address: at most its remainder checked', async (t) => {
  const server = await startServer(t, fullCost);
  for (let index = 0; index < 99; index += 1) assert.equal((await server.request('GET', '/v1/listings', { key: 'market_live_not-a-real-key' })).status, 401);
  const responses = await Promise.all(
    Array.from({ length: 10 }, (_, index) =>
      server.request('POST', '/portal/v1/password', { headers: sameOrigin(server), body: { invitation: `${'A'.repeat(41)}${String(index).padStart(2, '0')}`, password: 'a good long password here' } }),
    ),
  );
  const counts = tally(responses);
  assert.ok((counts[400] ?? 0) <= 1, `one place left: ${JSON.stringify(counts)}`);
  assert.equal((counts[400] ?? 0) + (counts[429] ?? 0), 10, JSON.stringify(counts));
});
