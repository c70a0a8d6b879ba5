// Permissions over real HTTP: every entry form, 403 bodies naming what is required, changes
// through the operator API counting on the next request, and bad entries refused with 400.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.ts';

async function listingOf(server: TestServer, ownerKey: string, title: string): Promise<string> {
  const created = await server.request('POST', '/v1/listings', { key: ownerKey, body: { title, type: 'TOOL', price: 5 } });
  assert.equal(created.status, 201, created.text);
  return created.body.data.id;
}

function assertForbidden(response: { status: number; body: any; text: string }, required: string[], label: string): void {
  assert.equal(response.status, 403, `${label}: ${response.text}`);
  assert.equal(typeof response.body.error, 'string', label);
  assert.deepEqual(response.body.required, required, label);
}

test('every permission form, over HTTP', async (t) => {
  const server = await startServer(t, { dataDir: null });
  const owner = await server.userWithKey('creator', ['read:listings', 'write:listings']);
  const first = await listingOf(server, owner.key, 'First');
  const second = await listingOf(server, owner.key, 'Second');
  const user = await server.createUser({ role: 'creator' });
  const keyWith = async (permissions: string[]) => (await server.createKey(user.id, { permissions, rate_limit: 1000 })).key;
  const listing = { title: 'Changed' };

  // [entries, method, path, body, expected status]; 'owner' = 403 from the ownership check,
  // i.e. past the permission check (which would have said `required`).
  const cases: Array<[string[], string, string, unknown, number | 'owner']> = [
    // Route entries.
    [['GET /v1/listings'], 'GET', '/v1/listings', undefined, 200],
    [['GET /v1/listings'], 'GET', `/v1/listings/${first}`, undefined, 403],
    [['GET /v1/listings/:id'], 'GET', `/v1/listings/${first}`, undefined, 200],
    [['GET /v1/listings/:id'], 'GET', '/v1/listings', undefined, 403],
    [['PUT /v1/listings/:id'], 'PUT', `/v1/listings/${first}`, listing, 'owner'],
    [['PUT /v1/listings/:id'], 'GET', `/v1/listings/${first}`, undefined, 403],
    [['GET /v1/users/me'], 'GET', '/v1/users/me', undefined, 200],
    [['GET /v1/users/me'], 'GET', `/v1/users/${owner.userId}`, undefined, 403],
    // Concrete paths.
    [[`GET /v1/listings/${first}`], 'GET', `/v1/listings/${first}`, undefined, 200],
    [[`GET /v1/listings/${first}`], 'GET', `/v1/listings/${second}`, undefined, 403],
    [[`GET /v1/listings/${first}`], 'DELETE', `/v1/listings/${first}`, undefined, 403],
    [[`GET /v1/users/${owner.userId}`], 'GET', `/v1/users/${owner.userId}`, undefined, 200],
    // Route prefixes.
    [['GET /v1/listings/*'], 'GET', `/v1/listings/${first}`, undefined, 200],
    [['GET /v1/listings/*'], 'GET', `/v1/listings/${second}`, undefined, 200],
    [['GET /v1/listings/*'], 'GET', '/v1/listings', undefined, 403],
    [['GET /v1/listings/*'], 'DELETE', `/v1/listings/${first}`, undefined, 403],
    [['GET /v1/users/*'], 'GET', '/v1/users/me', undefined, 200],
    [['GET /v1/*'], 'GET', '/v1/listings', undefined, 200],
    [['GET /v1/*'], 'GET', '/v1/users/me', undefined, 200],
    [['GET /v1/*'], 'PUT', '/v1/users/me', { bio: 'x' }, 403],
    // Scopes.
    [['read:listings'], 'GET', '/v1/listings', undefined, 200],
    [['read:listings'], 'GET', `/v1/listings/${first}`, undefined, 200],
    [['read:listings'], 'POST', '/v1/listings', { title: 'New', type: 'TOOL', price: 1 }, 403],
    [['read:listings'], 'GET', '/v1/users/me', undefined, 403],
    [['write:listings'], 'POST', '/v1/listings', { title: 'New', type: 'TOOL', price: 1 }, 201],
    [['write:listings'], 'GET', '/v1/listings', undefined, 403],
    [['read:users'], 'GET', '/v1/users/me', undefined, 200],
    [['read:users'], 'PUT', '/v1/users/me', { bio: 'x' }, 403],
    [['write:users'], 'PUT', '/v1/users/me', { bio: 'x' }, 200],
    [['write:users'], 'GET', '/v1/users/me', undefined, 403],
    [['read:analytics', 'read:webhooks', 'write:webhooks'], 'GET', '/v1/listings', undefined, 403],
  ];
  for (const [entries, method, path, body, expected] of cases) {
    await t.test(`${entries.join(', ')}: ${method} ${path} → ${expected === 'owner' ? "403 (another's)" : expected}`, async () => {
      const key = await keyWith(entries);
      const response = await server.request(method, path, { key, body });
      const label = `${JSON.stringify(entries)} ${method} ${path}: ${response.text}`;
      assert.equal(response.status, expected === 'owner' ? 403 : expected, label);
      if (expected === 403) assert.ok(Array.isArray(response.body.required), `a permission 403 says what is required; ${label}`);
      if (expected === 'owner') assert.equal(response.body.required, undefined, label);
    });
  }

  // The owner's own key with write:listings may change and archive; a PUT route entry is enough.
  const ownerRouteKey = (await server.createKey(owner.userId, { permissions: ['PUT /v1/listings/:id', `DELETE /v1/listings/${second}`] })).key;
  assert.equal((await server.request('PUT', `/v1/listings/${first}`, { key: ownerRouteKey, body: listing })).status, 200);
  assert.equal((await server.request('DELETE', `/v1/listings/${second}`, { key: ownerRouteKey })).status, 200);
  assert.equal((await server.request('DELETE', `/v1/listings/${first}`, { key: ownerRouteKey })).status, 403);
});

test('403 bodies name the route entry and the scope that would have allowed the request', async (t) => {
  const server = await startServer(t, { dataDir: null });
  const { key } = await server.userWithKey('member', ['read:users']);
  const cases: Array<[string, string, string[]]> = [
    ['GET', '/v1/listings', ['GET /v1/listings', 'read:listings']],
    ['POST', '/v1/listings', ['POST /v1/listings', 'write:listings']],
    ['GET', '/v1/listings/lst_made_up', ['GET /v1/listings/:id', 'read:listings']],
    ['PUT', '/v1/listings/lst_made_up', ['PUT /v1/listings/:id', 'write:listings']],
    ['DELETE', '/v1/listings/lst_made_up', ['DELETE /v1/listings/:id', 'write:listings']],
    ['PUT', '/v1/users/me', ['PUT /v1/users/me', 'write:users']],
  ];
  for (const [method, path, required] of cases) {
    await t.test(`${method} ${path}`, async () => {
      const response = await server.request(method, path, { key });
      assertForbidden(response, required, `${method} ${path}`);
      assert.ok(response.body.error.includes(required[0]!), `the message names ${required[0]}: ${response.body.error}`);
      assert.equal(response.body.request_id, response.headers.get('x-request-id'));
    });
  }
  // The routes that exist now for other resources answer the same way.
  const { key: listingsOnly } = await server.userWithKey('member', ['read:listings']);
  const otherRoutes = server.app.apiRoutes.filter((candidate) => candidate.resource === 'webhooks' || candidate.resource === 'analytics');
  assert.ok(otherRoutes.some((route) => route.method === 'GET' && route.pattern === '/v1/webhooks'), 'GET /v1/webhooks is registered');
  for (const route of otherRoutes) {
    await t.test(`${route.method} ${route.pattern}`, async () => {
      const path = route.pattern.replace(/:[A-Za-z_]+/g, 'made_up_1');
      const scope = `${route.method === 'GET' ? 'read' : 'write'}:${route.resource}`;
      assertForbidden(await server.request(route.method, path, { key: listingsOnly }), [`${route.method} ${route.pattern}`, scope], `${route.method} ${path}`);
    });
  }
});

test('a permission downgrade through PATCH /admin/v1/keys/:id counts on the very next request', async (t) => {
  const server = await startServer(t, { dataDir: null });
  const { key, keyId } = await server.userWithKey('member', ['read:listings', 'read:users']);
  assert.equal((await server.request('GET', '/v1/listings', { key })).status, 200);
  assert.equal((await server.request('GET', '/v1/users/me', { key })).status, 200);

  const downgraded = await server.admin('PATCH', `/admin/v1/keys/${keyId}`, { permissions: ['read:users'] });
  assert.equal(downgraded.status, 200);
  assert.deepEqual(downgraded.body.data.permissions, ['read:users']);
  assertForbidden(await server.request('GET', '/v1/listings', { key }), ['GET /v1/listings', 'read:listings'], 'after the downgrade');
  assert.equal((await server.request('GET', '/v1/users/me', { key })).status, 200);

  // And an upgrade counts at once too.
  assert.equal((await server.admin('PATCH', `/admin/v1/keys/${keyId}`, { permissions: ['GET /v1/listings'] })).status, 200);
  assert.equal((await server.request('GET', '/v1/listings', { key })).status, 200);
  assert.equal((await server.request('GET', '/v1/users/me', { key })).status, 403);
});

test('a key without permissions given gets the default read:listings', async (t) => {
  const server = await startServer(t, { dataDir: null });
  const user = await server.createUser();
  const made = await server.createKey(user.id);
  assert.deepEqual(made.permissions, ['read:listings']);
  assert.equal((await server.request('GET', '/v1/listings', { key: made.key })).status, 200);
  assert.equal((await server.request('GET', '/v1/users/me', { key: made.key })).status, 403);
});

test('POST and PATCH of keys refuse malformed permission entries with 400 and make nothing', async (t) => {
  const server = await startServer(t, { dataDir: null });
  const user = await server.createUser();
  const made = await server.createKey(user.id, { permissions: ['read:users'] });
  const bad: unknown[] = [
    ['read:orders'],
    ['delete:listings'],
    ['GET /v1/nothing'],
    ['get /v1/listings'],
    ['GET /v1/listings/'],
    ['POST /v1/listings/*'],
    ['PATCH /v1/listings/:id'],
    ['read:listings', 42],
    'read:listings',
    [''],
  ];
  for (const permissions of bad) {
    await t.test(`permissions: ${JSON.stringify(permissions)} → 400`, async () => {
      const created = await server.admin('POST', '/admin/v1/keys', { user_id: user.id, permissions });
      assert.equal(created.status, 400, `POST ${JSON.stringify(permissions)}: ${created.text}`);
      assert.ok(created.body.details?.permissions, `POST ${JSON.stringify(permissions)} names the field`);
      const patched = await server.admin('PATCH', `/admin/v1/keys/${made.id}`, { permissions });
      assert.equal(patched.status, 400, `PATCH ${JSON.stringify(permissions)}: ${patched.text}`);
    });
  }
  const keys = await server.admin('GET', `/admin/v1/keys?user_id=${user.id}`);
  assert.equal(keys.body.data.length, 1, 'no key was made by a refused request');
  assert.deepEqual(keys.body.data[0].permissions, ['read:users'], 'no refused PATCH changed the key');
  assert.equal((await server.request('GET', '/v1/users/me', { key: made.key })).status, 200);
});
