// Rate limits over real HTTP on an injected clock: the X-RateLimit headers on every answer to a
// valid key, 429 with Retry-After, admission at Reset, 429s not counted, limit changes and
// wall-clock jumps, and the separate limit on failed authentications per address.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { generateApiKey } from '../../src/auth/keys.ts';
import { ManualClock } from '../../src/clock.ts';
import { startServer, type TestResponse } from '../helpers/server.ts';

/** The three rate-limit headers as numbers (NaN when one is missing). */
function quota(response: TestResponse): { limit: number; remaining: number; reset: number } {
  return {
    limit: Number(response.headers.get('x-ratelimit-limit') ?? NaN),
    remaining: Number(response.headers.get('x-ratelimit-remaining') ?? NaN),
    reset: Number(response.headers.get('x-ratelimit-reset') ?? NaN),
  };
}

function assertQuotaHeaders(response: TestResponse, nowMs: number, label: string): void {
  const { limit, remaining, reset } = quota(response);
  assert.ok(Number.isInteger(limit) && limit > 0, `${label}: X-RateLimit-Limit ${limit}`);
  assert.ok(Number.isInteger(remaining) && remaining >= 0 && remaining <= limit, `${label}: X-RateLimit-Remaining ${remaining}`);
  assert.ok(Number.isInteger(reset), `${label}: X-RateLimit-Reset is whole Unix seconds`);
  assert.ok(reset * 1000 > nowMs, `${label}: Reset is in the future`);
  assert.ok(reset <= Math.ceil(nowMs / 1000) + 60, `${label}: Reset ${reset} is at most 60 s ahead of ${nowMs / 1000}`);
}

test('rate-limit headers on 2xx, 403, 404, 405, 400 and 429, with the real clock', async (t) => {
  const server = await startServer(t, { dataDir: null });
  const { key } = await server.userWithKey('member', ['read:listings', 'write:users'], 6);
  const responses: Array<[string, TestResponse, number]> = [
    ['200', await server.request('GET', '/v1/listings', { key }), 200],
    ['403', await server.request('GET', '/v1/users/me', { key }), 403],
    ['404', await server.request('GET', '/v1/nowhere', { key }), 404],
    ['405', await server.request('PATCH', '/v1/listings', { key }), 405],
    ['400', await server.request('PUT', '/v1/users/me', { key, body: { website: 42 } }), 400],
    ['404 listing', await server.request('GET', '/v1/listings/lst_missing', { key }), 404],
    ['429', await server.request('GET', '/v1/listings', { key }), 429],
  ];
  for (const [index, [label, response, status]] of responses.entries()) {
    await t.test(`${label}: quota headers, remaining ${Math.max(0, 5 - index)}`, () => {
      assert.equal(response.status, status, `${label}: ${response.text}`);
      assertQuotaHeaders(response, Date.now(), label);
      assert.equal(quota(response).limit, 6, label);
      assert.equal(quota(response).remaining, Math.max(0, 5 - index), `${label}: every status counts`);
    });
  }
  const limited = responses.at(-1)![1];
  assert.match(limited.body.error, /rate limit/i);
  assert.equal(limited.body.request_id, limited.headers.get('x-request-id'));
  const retryAfter = Number(limited.headers.get('retry-after'));
  assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
});

test('a client blocked with 429 that waits until X-RateLimit-Reset is admitted; 429s use no quota', async (t) => {
  // Not on a whole second, so Reset has to be rounded (up) to whole seconds.
  const clock = new ManualClock(Date.UTC(2026, 0, 1) + 300);
  const start = clock.now();
  const server = await startServer(t, { clock, dataDir: null });
  const { key } = await server.userWithKey('member', ['read:listings'], 3);

  for (let index = 0; index < 3; index += 1) {
    const response = await server.request('GET', '/v1/listings', { key });
    assert.equal(response.status, 200);
    assert.equal(quota(response).remaining, 2 - index);
    assertQuotaHeaders(response, clock.now(), `request ${index + 1}`);
    clock.advance(10_000); // requests at 0 s, 10 s, 20 s
  }
  // t = 30 s: blocked until the first request (t = 0) leaves the window at t = 60 s.
  const limited = await server.request('GET', '/v1/listings', { key });
  assert.equal(limited.status, 429);
  assert.equal(limited.headers.get('retry-after'), '30');
  const { reset, remaining, limit } = quota(limited);
  assert.equal(limit, 3);
  assert.equal(remaining, 0);
  assert.equal(reset, Math.ceil((start + 60_000) / 1000));
  assertQuotaHeaders(limited, clock.now(), '429');

  // Hammering while blocked neither extends the block nor counts.
  for (let second = 0; second < 29; second += 1) {
    clock.advance(1_000);
    const again = await server.request('GET', '/v1/listings', { key });
    assert.equal(again.status, 429);
    assert.equal(quota(again).reset, reset, 'Reset does not move while blocked');
    assert.equal(Number(again.headers.get('retry-after')), 29 - second);
  }
  // t = 59.999 s: still blocked, Retry-After never below 1.
  clock.advance(999);
  const almost = await server.request('GET', '/v1/listings', { key });
  assert.equal(almost.status, 429);
  assert.equal(almost.headers.get('retry-after'), '1');

  // Wait until Reset (wall time, whole seconds, rounded up): admitted.
  clock.advance(reset * 1000 - clock.now());
  const admitted = await server.request('GET', '/v1/listings', { key });
  assert.equal(admitted.status, 200);
  assert.equal(quota(admitted).remaining, 0, 'the requests at 10 s and 20 s and this one: the 429s left no trace');
  assert.equal(quota(admitted).reset, Math.ceil((start + 70_000) / 1000), 'next room when the 10 s request leaves');
  assert.equal((await server.request('GET', '/v1/listings', { key })).status, 429);
});

test('after a full quiet minute, a key blocked for a long time has its whole quota back', async (t) => {
  const clock = new ManualClock();
  const server = await startServer(t, { clock, dataDir: null });
  const { key } = await server.userWithKey('member', ['read:listings'], 2);
  await server.request('GET', '/v1/listings', { key });
  await server.request('GET', '/v1/listings', { key });
  for (let index = 0; index < 40; index += 1) assert.equal((await server.request('GET', '/v1/listings', { key })).status, 429);
  clock.advance(60_000);
  const response = await server.request('GET', '/v1/listings', { key });
  assert.equal(response.status, 200);
  assert.equal(quota(response).remaining, 1);
});

test('keys have separate quotas', async (t) => {
  const clock = new ManualClock();
  const server = await startServer(t, { clock, dataDir: null });
  const first = await server.userWithKey('member', ['read:listings'], 1);
  const second = await server.userWithKey('member', ['read:listings'], 1);
  assert.equal((await server.request('GET', '/v1/listings', { key: first.key })).status, 200);
  assert.equal((await server.request('GET', '/v1/listings', { key: first.key })).status, 429);
  assert.equal((await server.request('GET', '/v1/listings', { key: second.key })).status, 200);
});

test('the default rate_limit is 100 a minute', async (t) => {
  const clock = new ManualClock();
  const server = await startServer(t, { clock, dataDir: null });
  const user = await server.createUser();
  const made = await server.createKey(user.id, { permissions: ['read:listings'] });
  assert.equal(made.rate_limit, 100);
  const first = await server.request('GET', '/v1/listings', { key: made.key });
  assert.equal(quota(first).limit, 100);
  assert.equal(quota(first).remaining, 99);
});

test('a rate_limit change through PATCH counts on the very next request', async (t) => {
  const clock = new ManualClock();
  const server = await startServer(t, { clock, dataDir: null });
  const { key, keyId } = await server.userWithKey('member', ['read:listings'], 2);
  await server.request('GET', '/v1/listings', { key });
  await server.request('GET', '/v1/listings', { key });
  assert.equal((await server.request('GET', '/v1/listings', { key })).status, 429);

  assert.equal((await server.admin('PATCH', `/admin/v1/keys/${keyId}`, { rate_limit: 5 })).status, 200);
  const raised = await server.request('GET', '/v1/listings', { key });
  assert.equal(raised.status, 200);
  assert.deepEqual([quota(raised).limit, quota(raised).remaining], [5, 2]);

  assert.equal((await server.admin('PATCH', `/admin/v1/keys/${keyId}`, { rate_limit: 1 })).status, 200);
  const lowered = await server.request('GET', '/v1/listings', { key });
  assert.equal(lowered.status, 429);
  assert.deepEqual([quota(lowered).limit, quota(lowered).remaining], [1, 0]);
  // Under a limit of 1 with 3 requests in the window, room comes when the last of them leaves.
  assert.equal(lowered.headers.get('retry-after'), '60');

  for (const bad of [0, -1, 1.5, '10', null, 1_000_001]) {
    await t.test(`rate_limit ${JSON.stringify(bad)} → 400`, async () => {
      const refused = await server.admin('PATCH', `/admin/v1/keys/${keyId}`, { rate_limit: bad });
      assert.equal(refused.status, 400, `rate_limit ${JSON.stringify(bad)}`);
    });
  }
});

test('a wall-clock jump neither grants a burst nor locks a key out; Reset follows the wall clock', async (t) => {
  const clock = new ManualClock();
  const server = await startServer(t, { clock, dataDir: null });
  const { key } = await server.userWithKey('member', ['read:listings'], 1);
  assert.equal((await server.request('GET', '/v1/listings', { key })).status, 200);

  clock.jumpWall(3_600_000); // NTP steps an hour forward
  const forward = await server.request('GET', '/v1/listings', { key });
  assert.equal(forward.status, 429, 'an hour of wall clock is not a minute of real time');
  assert.equal(forward.headers.get('retry-after'), '60');
  assertQuotaHeaders(forward, clock.now(), 'after jumping forward');
  assert.equal(quota(forward).reset, clock.now() / 1000 + 60);

  clock.jumpWall(-2 * 3_600_000); // and then an hour back from where it began
  clock.advance(60_000);
  const back = await server.request('GET', '/v1/listings', { key });
  assert.equal(back.status, 200, 'a minute of real time later the key is admitted, whatever the wall clock says');
  assertQuotaHeaders(back, clock.now(), 'after jumping back');
});

test('failed authentications: past 100 within a minute from one address → 429; real keys are untouched', async (t) => {
  const clock = new ManualClock();
  const server = await startServer(t, { clock, dataDir: null });
  const { key } = await server.userWithKey('member', ['read:listings'], 10);
  const guesses = () => generateApiKey('live', 'market').key;

  // 100 failures, of every kind, spread over the first 30 s.
  for (let index = 0; index < 100; index += 1) {
    const headers: Record<string, string> = index % 4 === 0 ? {} : index % 4 === 1 ? { authorization: 'Bearer nope' } : { authorization: `Bearer ${guesses()}` };
    const response = await server.request('GET', index % 2 === 0 ? '/v1/listings' : '/v1/nowhere', { headers });
    assert.equal(response.status, 401, `failure ${index + 1}`);
    if (index === 49) clock.advance(30_000);
  }
  // The 101st within the minute, and every unauthenticated request after it, gets 429.
  const blocked = await server.request('GET', '/v1/listings', { key: guesses() });
  assert.equal(blocked.status, 429);
  assert.match(blocked.body.error, /failed authentications/);
  assert.equal(blocked.headers.get('retry-after'), '30', 'until the first 50 failures (at 0 s) leave the window');
  assert.equal((await server.request('GET', '/v1/listings')).status, 429, 'no key at all');
  assert.equal((await server.request('GET', '/v1/nowhere', { key: 'mk_x' })).status, 429, 'malformed, unknown path');

  // A valid key from the same address still works, and its quota is its own.
  const valid = await server.request('GET', '/v1/listings', { key });
  assert.equal(valid.status, 200);
  assert.deepEqual([quota(valid).limit, quota(valid).remaining], [10, 9]);
  assert.equal((await server.request('GET', '/v1/users/me', { headers: { 'x-api-key': key } })).status, 403, 'a valid key gets its usual answers');

  // Hammering while blocked does not extend the block.
  for (let index = 0; index < 20; index += 1) await server.request('GET', '/v1/listings');
  clock.advance(29_999);
  assert.equal((await server.request('GET', '/v1/listings')).status, 429);
  clock.advance(1); // t = 60 s: the first 50 failures have left the window
  const again = await server.request('GET', '/v1/listings');
  assert.equal(again.status, 401, 'after the minute, 401 again');
  assert.match(again.body.hint, /X-API-Key/);
  // Room for 49 more before the limit bites again (50 left, plus this one).
  for (let index = 0; index < 49; index += 1) assert.equal((await server.request('GET', '/v1/listings')).status, 401);
  assert.equal((await server.request('GET', '/v1/listings')).status, 429);

  // The operator API and open routes are not affected by the /v1 failure count.
  assert.equal((await server.request('GET', '/healthz')).status, 200);
  assert.equal((await server.admin('GET', '/admin/v1/users')).status, 200);
});

test('429s refused to a valid key are not counted as failed authentications', async (t) => {
  const clock = new ManualClock();
  const server = await startServer(t, { clock, dataDir: null });
  const { key } = await server.userWithKey('member', ['read:listings'], 1);
  await server.request('GET', '/v1/listings', { key });
  for (let index = 0; index < 150; index += 1) assert.equal((await server.request('GET', '/v1/listings', { key })).status, 429);
  // 150 refusals of a valid key are not failed authentications.
  assert.equal((await server.request('GET', '/v1/listings')).status, 401);
});
