// Password work is bounded: at most 2 checks in flight per account and per client address
// (more: 429 with Retry-After at once), and a bounded queue for scrypt (full: 503 with
// Retry-After: 1 at once). Neither refusal runs scrypt: the server's count of scrypt runs in
// /metrics grows by exactly the number of attempts that were answered after a check.
// Not in test:unit (slow: bursts of sign-ins, each checked one a password hash at the product's
// full scrypt cost); npm test runs it.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sameOrigin, signedInUser } from '../helpers/portal.ts';
import { DEFAULT_PASSWORD_COST } from '../../src/config.ts';
import { startServer, type TestResponse, type TestServer } from '../helpers/server.ts';

/** Each attempt from its own address, as a trusted proxy (TRUST_PROXY=127.0.0.1) says. */
function signIn(server: TestServer, email: string, password: string, forwardedFor?: string) {
  const headers: Record<string, string> = { ...sameOrigin(server), ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}) };
  return server.request('POST', '/portal/v1/session', { headers, body: { email, password } });
}

async function scryptRuns(server: TestServer): Promise<number> {
  const metrics = await server.admin('GET', '/metrics');
  const line = /^marketplace_password_hashes_total (\d+)$/m.exec(metrics.text);
  assert.ok(line, 'the count of scrypt runs is in /metrics');
  return Number(line[1]);
}

function tally(responses: readonly TestResponse[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const response of responses) counts[response.status] = (counts[response.status] ?? 0) + 1;
  return counts;
}

const env = { TRUST_PROXY: '127.0.0.1, ::1' };
/** The product's own scrypt cost: these tests are about that work and how it is bounded. */
const config = { passwordCost: DEFAULT_PASSWORD_COST };

test('12 right sign-ins of one account at once, from 12 addresses: at most 2 checked at a time, the others 429 "in progress" at once, without scrypt', async (t) => {
  const server = await startServer(t, { env, config });
  const ada = await signedInUser(server);
  const before = await scryptRuns(server);
  const responses = await Promise.all(Array.from({ length: 12 }, (_, index) => signIn(server, ada.email, ada.password, `198.51.100.${index + 1}`)));
  const counts = tally(responses);
  const refused = responses.filter((response) => response.status === 429);
  assert.ok(refused.length >= 1, `more than 2 at once are refused: ${JSON.stringify(counts)}`);
  for (const response of refused) {
    assert.match(response.body.error, /in progress for this account/);
    assert.equal(response.headers.get('retry-after'), '1');
  }
  assert.equal((counts[201] ?? 0) + refused.length, 12, JSON.stringify(counts));
  assert.equal((await scryptRuns(server)) - before, counts[201], 'one scrypt per sign-in, none for a refusal');
  // Right passwords leave no failure behind: the account signs in as usual afterwards.
  assert.equal((await signIn(server, ada.email, ada.password, '198.51.100.99')).status, 201);
});

test('12 sign-ins to 12 accounts at once from one address: at most 2 checked at a time, the others 429 "from your address", without scrypt', async (t) => {
  const server = await startServer(t, { env, config });
  const before = await scryptRuns(server);
  const responses = await Promise.all(Array.from({ length: 12 }, (_, index) => signIn(server, `nobody-${index}@example.com`, `some guess ${index} here`, '203.0.113.7')));
  const counts = tally(responses);
  const refused = responses.filter((response) => response.status === 429);
  assert.ok(refused.length >= 1, JSON.stringify(counts));
  for (const response of refused) assert.match(response.body.error, /in progress from your address/);
  assert.equal((counts[401] ?? 0) + refused.length, 12, JSON.stringify(counts));
  assert.equal((await scryptRuns(server)) - before, counts[401]);
});

test('sign-ins from many addresses at once fill the scrypt queue: the rest 503 with Retry-After: 1 at once, without scrypt, and nothing counts as a failure', async (t) => {
  const server = await startServer(t, { env, config, expectedServerErrors: [503] });
  const ada = await signedInUser(server);
  const before = await scryptRuns(server);
  const responses = await Promise.all(Array.from({ length: 100 }, (_, index) => signIn(server, `nobody-${index}@example.com`, `some guess ${index} here`, `192.0.2.${index + 1}`)));
  const counts = tally(responses);
  const full = responses.filter((response) => response.status === 503);
  assert.ok(full.length >= 1, `the queue is bounded: ${JSON.stringify(counts)}`);
  for (const response of full) assert.equal(response.headers.get('retry-after'), '1');
  assert.equal((counts[401] ?? 0) + full.length, 100, JSON.stringify(counts));
  assert.equal((await scryptRuns(server)) - before, counts[401], 'no scrypt for a 503');
  // Once the burst is over the queue has room again: a real user signs in.
  assert.equal((await signIn(server, ada.email, ada.password, '192.0.2.200')).status, 201);
});
