// The first-request lines beside a new key call a route that key may use (contract section 23,
// "the page, third pass"): for every portal preset alone, every pair of them, and entries an
// operator may give by hand, the path src/dashboard/public/first-request.js picks is answered
// 200 for a real key with exactly those permissions; a key that may only write gets no line.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startServer } from '../helpers/server.ts';

interface FirstRequestModule {
  firstReadablePath(permissions: readonly string[], userId?: string | null): string | null;
  firstRequestLines(baseUrl: string, secret: string, path?: string): { curl: string; fetch: string };
}
interface PortalCatalogModule {
  PORTAL_PRESETS: ReadonlyArray<{ id: string; roles: readonly string[]; permissions: readonly string[] }>;
}

// Plain-JavaScript browser modules; loading them by URL keeps the type checker out of them.
const firstRequest = (await import(new URL('../../src/dashboard/public/first-request.js', import.meta.url).href)) as FirstRequestModule;
const { PORTAL_PRESETS } = (await import(new URL('../../src/dashboard/public/portal-catalog.js', import.meta.url).href)) as PortalCatalogModule;

test('the path picked for a key is its first readable route, in the order its entries are listed', () => {
  const cases: Array<[string[], string | null]> = [
    [['read:listings'], '/v1/listings'],
    [['GET /v1/users/me', 'PUT /v1/users/me'], '/v1/users/me'],
    [['GET /v1/analytics/usage'], '/v1/analytics/usage'],
    [['read:webhooks', 'write:webhooks'], '/v1/webhooks'],
    [['write:listings', 'GET /v1/users/me'], '/v1/users/me'],
    [['PUT /v1/users/me', 'read:analytics'], '/v1/analytics/usage'],
    [['GET /v1/users/*'], '/v1/users/me'],
    [['GET /v1/listings/:id', 'GET /v1/users/:id'], '/v1/users/usr_1'],
    [['write:listings', 'write:webhooks', 'PUT /v1/users/me'], null],
  ];
  for (const [permissions, path] of cases) assert.equal(firstRequest.firstReadablePath(permissions, 'usr_1'), path, permissions.join(', '));
  assert.equal(firstRequest.firstRequestLines('http://api.example', 'mk_secret', '/v1/users/me').curl, "curl -H 'Authorization: Bearer mk_secret' http://api.example/v1/users/me");
});

test('every portal preset, alone and in pairs, and hand-made entries: the picked route answers 200 for a key with exactly those permissions', async (t) => {
  const server = await startServer(t);
  const creator = await server.createUser({ role: 'creator', name: 'Ada' });
  const sets: string[][] = [];
  for (const preset of PORTAL_PRESETS) {
    sets.push([...preset.permissions]);
    for (const other of PORTAL_PRESETS) if (other.id !== preset.id) sets.push([...preset.permissions, ...other.permissions]);
  }
  sets.push(['write:listings', 'GET /v1/users/*'], ['GET /v1/users/:id'], ['read:users'], ['read:analytics'], ['write:webhooks', 'GET /v1/analytics/*']);
  for (const permissions of sets) {
    const path = firstRequest.firstReadablePath(permissions, creator.id);
    assert.notEqual(path, null, permissions.join(', '));
    const key = await server.createKey(creator.id, { permissions });
    const answer = await server.request('GET', path!, { key: key.key });
    assert.equal(answer.status, 200, `${permissions.join(', ')} → GET ${path}: ${answer.text}`);
  }
});
