// A plan meters the account, not the credential (contract section 23): all of one user's keys on
// one plan share its per-minute window, reported by X-RateLimit-* on each of them; a key with a
// limit of its own keeps its own window; another user's keys are not touched.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { vocabularyListingOps } from '../listings/vocabulary-listings.ts';

async function planKey(server: TestServer, userId: string, plan: string): Promise<string> {
  const made = await server.admin('POST', '/admin/v1/keys', { user_id: userId, plan, permissions: ['read:listings'] });
  assert.equal(made.status, 201, made.text);
  return made.body.data.key;
}

test("one user's two Free keys share 100 a minute: the 101st on either is 429; another user and a key of its own are not touched", async (t) => {
  const clock = new ManualClock();
  const server = await startServer(t, { clock, dataDir: null });
  const user = await server.createUser();
  const [first, second] = [await planKey(server, user.id, 'free'), await planKey(server, user.id, 'free')];
  for (let index = 0; index < 60; index += 1) assert.equal((await server.request('GET', '/v1/listings', { key: first })).status, 200);
  const onSecond = await server.request('GET', '/v1/listings', { key: second });
  assert.equal(onSecond.status, 200);
  assert.equal(onSecond.headers.get('x-ratelimit-limit'), '100');
  assert.equal(onSecond.headers.get('x-ratelimit-remaining'), '39', 'the second key reports the shared window');
  for (let index = 0; index < 39; index += 1) assert.equal((await server.request('GET', '/v1/listings', { key: index % 2 === 0 ? first : second })).status, 200);
  for (const key of [first, second]) {
    const refused = await server.request('GET', '/v1/listings', { key });
    assert.equal(refused.status, 429, 'the 101st on either key');
    assert.equal(refused.headers.get('x-ratelimit-remaining'), '0');
  }

  const other = await server.createUser();
  const theirs = await planKey(server, other.id, 'free');
  const answer = await server.request('GET', '/v1/listings', { key: theirs });
  assert.equal(answer.status, 200, 'another user is unaffected');
  assert.equal(answer.headers.get('x-ratelimit-remaining'), '99');
  const own = await server.createKey(user.id, { rate_limit: 5, permissions: ['read:listings'] });
  const ownAnswer = await server.request('GET', '/v1/listings', { key: own.key });
  assert.equal(ownAnswer.status, 200, 'a key with a limit of its own keeps its own window');
  assert.equal(ownAnswer.headers.get('x-ratelimit-remaining'), '4');

  // The usage read reports the same shared window.
  const firstId = (await server.admin('GET', `/admin/v1/keys?user_id=${user.id}`)).body.data.find((key: any) => key.plan === 'free').id;
  const usage = await server.admin('GET', `/admin/v1/keys/${firstId}/usage`);
  assert.equal(usage.body.data.window.remaining, 0);

  clock.advance(60_000);
  assert.equal((await server.request('GET', '/v1/listings', { key: second })).status, 200, 'the window moves on');
});

test('20 Pro keys of one user make at most 1,000 requests a minute in all', async (t) => {
  const clock = new ManualClock();
  const server = await startServer(t, { clock, dataDir: null });
  const user = await server.createUser();
  const keys: string[] = [];
  for (let index = 0; index < 20; index += 1) keys.push(await planKey(server, user.id, 'pro'));
  let answered = 0;
  let refused = 0;
  for (let round = 0; round < 21; round += 1) {
    const statuses = await Promise.all(keys.flatMap((key) => [0, 1, 2].map(() => server.request('GET', '/v1/listings', { key }).then((answer) => answer.status))));
    for (const status of statuses) {
      if (status === 200) answered += 1;
      else if (status === 429) refused += 1;
      else assert.fail(`unexpected ${status}`);
    }
  }
  assert.equal(answered, 1_000, '1,000 in all, not 20,000');
  assert.equal(refused, 21 * 60 - 1_000);
});

test("the CPU budget is shared the same way: once one Free key has used it, the user's other Free key waits too; another user is served", async (t) => {
  const clock = new ManualClock();
  const server = await startServer(t, { clock, config: { keyCpuBudgetMs: 5 } });
  const user = await server.createUser({ role: 'creator' });
  const [first, second] = [await planKey(server, user.id, 'free'), await planKey(server, user.id, 'free')];
  const other = await server.createUser();
  const theirs = await planKey(server, other.id, 'free');
  await server.app.store.write(vocabularyListingOps(3_000, user.id, new Date(clock.now()).toISOString()));
  let refused = false;
  for (let number = 1; number <= 90 && !refused; number += 1) {
    const response = await server.request('GET', `/v1/listings?sort=title&limit=${1 + (number % 100)}&max_price=${1000 - number}`, { key: first });
    refused = response.status === 429;
  }
  assert.ok(refused, 'the first key used the budget');
  const onSecond = await server.request('GET', '/v1/listings', { key: second });
  assert.equal(onSecond.status, 429, 'the second key shares it');
  assert.match(onSecond.body.error, /CPU/);
  assert.equal((await server.request('GET', '/v1/listings', { key: theirs })).status, 200, 'another user is served');
});
