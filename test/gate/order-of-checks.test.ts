// The order of checks on a /v1 request (contract section 5): key 401 → limit 429 → route
// 404/405 → permission 403 → input 400/413/415 → ownership and role 403 → state 404/409.
// Each test sends a request that fails two checks at once and expects the earlier one.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { startServer } from '../helpers/server.ts';

test('401 comes before everything: a bad key on an unknown path, a wrong method or a bad body', async (t) => {
  const server = await startServer(t, { dataDir: null });
  const cases: Array<[string, string, unknown]> = [
    ['GET', '/v1/no/such/path', undefined],
    ['PATCH', '/v1/listings', undefined],
    ['POST', '/v1/listings', { title: '' }],
    ['DELETE', '/v1/listings/lst_missing', undefined],
  ];
  for (const [method, path, body] of cases) {
    await t.test(`${method} ${path}${body === undefined ? '' : ' with a bad body'}`, async () => {
      const response = await server.request(method, path, { key: 'mk_wrong', body });
      assert.equal(response.status, 401, `${method} ${path}`);
      assert.equal(response.headers.get('allow'), null);
    });
  }
});

test('429 comes before 404, 405, 403 and 400', async (t) => {
  const clock = new ManualClock();
  const server = await startServer(t, { clock, dataDir: null });
  const { key } = await server.userWithKey('member', ['read:users'], 1);
  assert.equal((await server.request('GET', '/v1/users/me', { key })).status, 200);
  const cases: Array<[string, string, unknown, string]> = [
    ['GET', '/v1/no/such/path', undefined, '404'],
    ['PATCH', '/v1/listings', undefined, '405'],
    ['GET', '/v1/listings', undefined, '403'],
    ['PUT', '/v1/users/me', { website: 42 }, '403 (no write:users), then 400'],
  ];
  for (const [method, path, body, otherwise] of cases) {
    await t.test(`${method} ${path} (would be ${otherwise}) → 429`, async () => {
      const response = await server.request(method, path, { key, body });
      assert.equal(response.status, 429, `${method} ${path}: ${response.text}`);
      assert.equal(response.headers.get('allow'), null);
    });
  }
  // But a missing key is still 401, not 429: the limit belongs to a key.
  assert.equal((await server.request('GET', '/v1/users/me')).status, 401);
});

test('404 and 405 come before 403: a key without permission learns the route is unknown or has other methods', async (t) => {
  const server = await startServer(t, { dataDir: null });
  const { key } = await server.userWithKey('member', ['read:users']);
  const unknown = await server.request('GET', '/v1/no/such/path', { key });
  assert.equal(unknown.status, 404);
  assert.equal(unknown.body.required, undefined);
  const wrongMethod = await server.request('PATCH', '/v1/listings', { key });
  assert.equal(wrongMethod.status, 405);
  assert.equal(wrongMethod.headers.get('allow'), 'GET, HEAD, POST');
  const wrongMethodById = await server.request('POST', '/v1/listings/lst_1', { key });
  assert.equal(wrongMethodById.status, 405);
  assert.deepEqual(wrongMethodById.headers.get('allow')!.split(', ').sort(), ['DELETE', 'GET', 'HEAD', 'PUT']);
  // A key that has permission on an unknown path gets 404 too.
  const { key: everything } = await server.userWithKey('creator', ['read:listings', 'write:listings', 'read:users', 'write:users']);
  assert.equal((await server.request('GET', '/v1/listings/lst_1/extra', { key: everything })).status, 404);
  assert.equal((await server.request('POST', '/v1/users', { key: everything })).status, 404);
});

test('403 (permission) comes before 400, 413 and 415: a key without permission posting a bad body', async (t) => {
  const server = await startServer(t, { dataDir: null });
  const { key } = await server.userWithKey('creator', ['read:listings']);
  const cases: Array<[string, string, string, { body?: unknown; rawBody?: string; headers?: Record<string, string> }]> = [
    ['POST', '/v1/listings', 'invalid fields (400)', { body: { title: '', price: -1 } }],
    ['POST', '/v1/listings', 'unfinished JSON (400)', { rawBody: '{"title": ', headers: { 'content-type': 'application/json' } }],
    ['POST', '/v1/listings', 'text/plain (415)', { rawBody: 'title=x', headers: { 'content-type': 'text/plain' } }],
    ['POST', '/v1/listings', '70 KiB (413)', { rawBody: JSON.stringify({ title: 'x'.repeat(70 * 1024) }), headers: { 'content-type': 'application/json' } }],
    ['PUT', '/v1/listings/lst_missing', 'a bad price for a missing listing (400, 404)', { body: { price: 'free' } }],
    ['PUT', '/v1/users/me', 'a bad website (400)', { body: { website: 42 } }],
  ];
  for (const [method, path, badBody, options] of cases) {
    await t.test(`${method} ${path}, ${badBody} → 403`, async () => {
      const response = await server.request(method, path, { key, ...options });
      assert.equal(response.status, 403, `${method} ${path}: ${response.text}`);
      assert.ok(Array.isArray(response.body.required));
    });
  }
});

test('400 comes before ownership and role 403, which come before 404 and 409', async (t) => {
  const server = await startServer(t, { dataDir: null });
  const owner = await server.userWithKey('creator', ['read:listings', 'write:listings']);
  const member = await server.userWithKey('member', ['read:listings', 'write:listings']);
  const stranger = await server.userWithKey('creator', ['write:listings']);
  const created = await server.request('POST', '/v1/listings', { key: owner.key, body: { title: 'Mine', type: 'TOOL', price: 3 } });
  assert.equal(created.status, 201);
  const id = created.body.data.id;

  // Input before role: a member's bad listing is 400, a good one is 403.
  assert.equal((await server.request('POST', '/v1/listings', { key: member.key, body: { title: '' } })).status, 400);
  const role = await server.request('POST', '/v1/listings', { key: member.key, body: { title: 'Not allowed', type: 'TOOL', price: 1 } });
  assert.equal(role.status, 403);
  assert.equal(role.body.required, undefined, 'a role 403, not a permission 403');

  // Input before existence: a bad body on a missing listing is 400, a good one 404.
  assert.equal((await server.request('PUT', '/v1/listings/lst_missing', { key: owner.key, body: { price: 'free' } })).status, 400);
  assert.equal((await server.request('PUT', '/v1/listings/lst_missing', { key: owner.key, body: { price: 4 } })).status, 404);

  // Input before ownership: a stranger's bad body is 400; a good one is 403.
  assert.equal((await server.request('PUT', `/v1/listings/${id}`, { key: stranger.key, body: { price: 'free' } })).status, 400);
  assert.equal((await server.request('PUT', `/v1/listings/${id}`, { key: stranger.key, body: { price: 4 } })).status, 403);

  // Ownership before state: once archived, the owner gets 409 but a stranger still 403.
  assert.equal((await server.request('DELETE', `/v1/listings/${id}`, { key: owner.key })).status, 200);
  assert.equal((await server.request('PUT', `/v1/listings/${id}`, { key: owner.key, body: { price: 4 } })).status, 409);
  assert.equal((await server.request('PUT', `/v1/listings/${id}`, { key: stranger.key, body: { price: 4 } })).status, 403);
});
