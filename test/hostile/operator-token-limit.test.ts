// Guessing the operator token is limited per client address like guessing keys: past 100
// failures within a minute from one address, further requests without the right token get 429
// (with Retry-After) until the minute has passed; the failures /v1 and /admin see add up, and
// the right token still works.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startServer } from '../helpers/server.ts';

test('101 wrong operator tokens from one address → the 101st is 429; the right token still passes', async (t) => {
  const server = await startServer(t, { dataDir: null });
  const statuses: number[] = [];
  for (let index = 0; index < 101; index += 1) {
    const response = await server.request('GET', '/admin/v1/users', { headers: { authorization: `Bearer wrong-${index}` } });
    statuses.push(response.status);
  }
  assert.deepEqual(statuses.slice(0, 100), new Array(100).fill(401));
  assert.equal(statuses[100], 429);
  const blocked = await server.request('GET', '/admin/v1/users', { headers: { authorization: 'Bearer another-guess' } });
  assert.equal(blocked.status, 429);
  assert.ok(Number(blocked.headers.get('retry-after')) > 0);
  assert.match(blocked.body.error, /Too many failed/);
  const missing = await server.request('GET', '/admin/v1/users');
  assert.equal(missing.status, 429, 'no token at all is refused too');
  assert.equal((await server.admin('GET', '/admin/v1/users')).status, 200, 'the right token passes');
});

test('failed /v1 keys and failed operator tokens count together per address', async (t) => {
  const server = await startServer(t, { dataDir: null });
  for (let index = 0; index < 100; index += 1) {
    const response = await server.request('GET', '/v1/listings', { headers: { authorization: 'Bearer mk_notakey' } });
    assert.equal(response.status, 401);
  }
  const operator = await server.request('GET', '/admin/v1/users', { headers: { authorization: 'Bearer guess' } });
  assert.equal(operator.status, 429, 'an address /v1 has blocked is blocked on /admin too');
});
