// The permission matcher as tables: which entries allow which requests, which entries are
// refused when a key is made, and what a 403 says is required.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkPermissionEntry, permissionSetOf, requiredEntries, type PermissionRoute } from '../../src/auth/permissions.ts';

// The routes the matcher is checked against: today's listings and users routes, plus webhook
// and analytics routes of the shape those issues will add.
const ROUTES: PermissionRoute[] = [
  { method: 'GET', pattern: '/v1/listings', resource: 'listings' },
  { method: 'POST', pattern: '/v1/listings', resource: 'listings' },
  { method: 'GET', pattern: '/v1/listings/:id', resource: 'listings' },
  { method: 'PUT', pattern: '/v1/listings/:id', resource: 'listings' },
  { method: 'DELETE', pattern: '/v1/listings/:id', resource: 'listings' },
  { method: 'GET', pattern: '/v1/users/me', resource: 'users' },
  { method: 'PUT', pattern: '/v1/users/me', resource: 'users' },
  { method: 'GET', pattern: '/v1/users/:id', resource: 'users' },
  { method: 'GET', pattern: '/v1/webhooks', resource: 'webhooks' },
  { method: 'POST', pattern: '/v1/webhooks', resource: 'webhooks' },
  { method: 'DELETE', pattern: '/v1/webhooks/:id', resource: 'webhooks' },
  { method: 'GET', pattern: '/v1/analytics/listings/:id', resource: 'analytics' },
];

function route(method: string, pattern: string): PermissionRoute {
  const found = ROUTES.find((candidate) => candidate.method === method && candidate.pattern === pattern);
  if (!found) throw new Error(`no route ${method} ${pattern} in the table`);
  return found;
}

// [entries, method, pattern, concrete path, allowed]
const MATCHES: Array<[string[], string, string, string, boolean]> = [
  // Route entries: exactly that method on that pattern.
  [['GET /v1/listings'], 'GET', '/v1/listings', '/v1/listings', true],
  [['GET /v1/listings'], 'GET', '/v1/listings/:id', '/v1/listings/lst_1', false],
  [['GET /v1/listings'], 'POST', '/v1/listings', '/v1/listings', false],
  [['GET /v1/listings/:id'], 'GET', '/v1/listings/:id', '/v1/listings/lst_1', true],
  [['GET /v1/listings/:id'], 'GET', '/v1/listings', '/v1/listings', false],
  [['GET /v1/listings/:id'], 'PUT', '/v1/listings/:id', '/v1/listings/lst_1', false],
  [['PUT /v1/listings/:id'], 'PUT', '/v1/listings/:id', '/v1/listings/lst_1', true],
  [['PUT /v1/listings/:id'], 'DELETE', '/v1/listings/:id', '/v1/listings/lst_1', false],
  [['DELETE /v1/webhooks/:id'], 'DELETE', '/v1/webhooks/:id', '/v1/webhooks/wh_1', true],
  [['GET /v1/users/me'], 'GET', '/v1/users/me', '/v1/users/me', true],
  [['GET /v1/users/me'], 'GET', '/v1/users/:id', '/v1/users/usr_1', false],
  [['GET /v1/users/:id'], 'GET', '/v1/users/me', '/v1/users/me', false],
  // Concrete paths: that one resource only.
  [['GET /v1/listings/lst_1'], 'GET', '/v1/listings/:id', '/v1/listings/lst_1', true],
  [['GET /v1/listings/lst_1'], 'GET', '/v1/listings/:id', '/v1/listings/lst_2', false],
  [['GET /v1/listings/lst_1'], 'GET', '/v1/listings/:id', '/v1/listings/lst_10', false],
  [['GET /v1/listings/lst_1'], 'PUT', '/v1/listings/:id', '/v1/listings/lst_1', false],
  [['PUT /v1/listings/lst_1'], 'PUT', '/v1/listings/:id', '/v1/listings/lst_1', true],
  // Route prefixes: that method on every path under the prefix.
  [['GET /v1/listings/*'], 'GET', '/v1/listings/:id', '/v1/listings/lst_1', true],
  [['GET /v1/listings/*'], 'GET', '/v1/listings/:id', '/v1/listings/anything-at-all', true],
  [['GET /v1/listings/*'], 'GET', '/v1/listings', '/v1/listings', false],
  [['GET /v1/listings/*'], 'PUT', '/v1/listings/:id', '/v1/listings/lst_1', false],
  [['GET /v1/listings/*'], 'GET', '/v1/users/:id', '/v1/users/usr_1', false],
  [['GET /v1/users/*'], 'GET', '/v1/users/me', '/v1/users/me', true],
  [['GET /v1/users/*'], 'GET', '/v1/users/:id', '/v1/users/usr_1', true],
  [['GET /v1/*'], 'GET', '/v1/webhooks', '/v1/webhooks', true],
  [['GET /v1/*'], 'POST', '/v1/webhooks', '/v1/webhooks', false],
  [['DELETE /v1/listings/*'], 'DELETE', '/v1/listings/:id', '/v1/listings/lst_1', true],
  // Scopes: read = every GET on the resource, write = every POST, PUT and DELETE on it.
  [['read:listings'], 'GET', '/v1/listings', '/v1/listings', true],
  [['read:listings'], 'GET', '/v1/listings/:id', '/v1/listings/lst_1', true],
  [['read:listings'], 'POST', '/v1/listings', '/v1/listings', false],
  [['read:listings'], 'PUT', '/v1/listings/:id', '/v1/listings/lst_1', false],
  [['read:listings'], 'DELETE', '/v1/listings/:id', '/v1/listings/lst_1', false],
  [['read:listings'], 'GET', '/v1/users/me', '/v1/users/me', false],
  [['write:listings'], 'POST', '/v1/listings', '/v1/listings', true],
  [['write:listings'], 'PUT', '/v1/listings/:id', '/v1/listings/lst_1', true],
  [['write:listings'], 'DELETE', '/v1/listings/:id', '/v1/listings/lst_1', true],
  [['write:listings'], 'GET', '/v1/listings', '/v1/listings', false],
  [['write:listings'], 'GET', '/v1/listings/:id', '/v1/listings/lst_1', false],
  [['write:listings'], 'POST', '/v1/webhooks', '/v1/webhooks', false],
  [['read:users'], 'GET', '/v1/users/me', '/v1/users/me', true],
  [['read:users'], 'PUT', '/v1/users/me', '/v1/users/me', false],
  [['write:users'], 'PUT', '/v1/users/me', '/v1/users/me', true],
  [['read:webhooks'], 'GET', '/v1/webhooks', '/v1/webhooks', true],
  [['write:webhooks'], 'POST', '/v1/webhooks', '/v1/webhooks', true],
  [['write:webhooks'], 'DELETE', '/v1/webhooks/:id', '/v1/webhooks/wh_1', true],
  [['read:analytics'], 'GET', '/v1/analytics/listings/:id', '/v1/analytics/listings/lst_1', true],
  [['read:listings'], 'GET', '/v1/analytics/listings/:id', '/v1/analytics/listings/lst_1', false],
  [['GET /v1/listings/*'], 'GET', '/v1/analytics/listings/:id', '/v1/analytics/listings/lst_1', false],
  // Several entries: any one of them is enough; none is nothing.
  [['read:users', 'GET /v1/listings'], 'GET', '/v1/listings', '/v1/listings', true],
  [['read:users', 'GET /v1/listings'], 'GET', '/v1/listings/:id', '/v1/listings/lst_1', false],
  [['write:webhooks', 'GET /v1/listings/lst_1', 'read:users'], 'GET', '/v1/listings/:id', '/v1/listings/lst_1', true],
  [[], 'GET', '/v1/listings', '/v1/listings', false],
];

test('permission matcher: entries × requests', async (t) => {
  for (const [entries, method, pattern, path, allowed] of MATCHES) {
    await t.test(`${JSON.stringify(entries)} ${allowed ? 'allows' : 'refuses'} ${method} ${path}`, () => {
      assert.equal(permissionSetOf(entries).allows(route(method, pattern), path), allowed);
    });
  }
});

test('every entry the table allows with is itself accepted when a key is made', async (t) => {
  for (const [entries] of MATCHES) {
    await t.test(entries.join(", "), async () => {
      for (const entry of entries) assert.equal(checkPermissionEntry(entry, ROUTES), null, entry);
    });
  }
});

test('permissionSetOf compiles each key record’s entries once', () => {
  const entries = ['read:listings'];
  assert.equal(permissionSetOf(entries), permissionSetOf(entries));
});

const WELL_FORMED = [
  'read:listings',
  'write:listings',
  'read:users',
  'write:webhooks',
  'read:analytics',
  'GET /v1/listings',
  'POST /v1/listings',
  'PUT /v1/listings/:id',
  'DELETE /v1/webhooks/:id',
  'GET /v1/listings/lst_abc123',
  'GET /v1/users/me',
  'GET /v1/listings/*',
  'DELETE /v1/listings/*',
  'GET /v1/*',
];

const MALFORMED: Array<[unknown, RegExp]> = [
  [42, /string/],
  [null, /string/],
  [['read:listings'], /string/],
  ['', /must look like/],
  ['read:orders', /unknown resource "orders"/],
  ['read:', /must look like/],
  ['READ:listings', /must look like/],
  ['delete:listings', /must look like/],
  ['read:listings ', /must look like/],
  [' read:listings', /must look like/],
  ['read:listings,write:listings', /must look like/],
  ['get /v1/listings', /must look like/],
  ['GET  /v1/listings', /must look like/],
  ['GET /v1/listings/', /must look like/],
  ['GET v1/listings', /must look like/],
  ['GET /v2/listings', /must look like/],
  ['GET /v1/listings?limit=5', /must look like/],
  ['GET /v1/listings/*/x', /must look like/],
  ['GET /v1/listings*', /must look like/],
  ['GET *', /must look like/],
  ['FETCH /v1/listings', /unknown method FETCH/],
  ['GET /v1/nothing', /no route GET \/v1\/nothing/],
  ['POST /v1/listings/:id', /no route POST/],
  ['PATCH /v1/listings/:id', /no route PATCH/],
  ['GET /v1/listings/lst_1/extra', /no route/],
  ['GET /v1/nothing/*', /no GET route lies under/],
  // Prefixes that no request could ever match would grant nothing; they are refused too.
  ['POST /v1/listings/*', /no POST route lies under/],
  ['PUT /v1/users/me/*', /no PUT route lies under/],
  ['GET /v1/listings/lst_1/*', /no GET route lies under/],
];

test('checkPermissionEntry accepts every documented form', async (t) => {
  for (const entry of WELL_FORMED) {
    await t.test(entry, async () => {
      assert.equal(checkPermissionEntry(entry, ROUTES), null, entry);
    });
  }
});

test('checkPermissionEntry refuses malformed entries, saying why', async (t) => {
  for (const [entry, reason] of MALFORMED) {
    await t.test(`${JSON.stringify(entry)} is refused`, () => {
      const problem = checkPermissionEntry(entry, ROUTES);
      assert.notEqual(problem, null);
      assert.match(problem!, reason);
    });
  }
});

test('requiredEntries names the route and the scope that would have allowed it', async (t) => {
  assert.deepEqual(requiredEntries(route('GET', '/v1/webhooks')), ['GET /v1/webhooks', 'read:webhooks']);
  assert.deepEqual(requiredEntries(route('DELETE', '/v1/listings/:id')), ['DELETE /v1/listings/:id', 'write:listings']);
  assert.deepEqual(requiredEntries(route('PUT', '/v1/users/me')), ['PUT /v1/users/me', 'write:users']);
  // Each required entry really does allow the route, and is accepted when a key is made.
  for (const candidate of ROUTES) {
    await t.test(`${candidate.method} ${candidate.pattern}`, async () => {
      const example = candidate.pattern.replace(/:[a-z_]+/g, 'made_up_1');
      for (const entry of requiredEntries(candidate)) {
        assert.equal(checkPermissionEntry(entry, ROUTES), null, entry);
        assert.equal(permissionSetOf([entry]).allows(candidate, example), true, `${entry} allows ${candidate.method} ${example}`);
      }
    });
  }
});
