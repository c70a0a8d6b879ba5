// A generated test over every /v1 route the app registers (so routes added later are covered
// without editing this file): a key lacking the route's permission gets 403 naming the route
// and its scope, whatever else it may do, and a key holding either entry gets past the check.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RESOURCES, type ApiRoute } from '../../src/http/route.ts';
import { startServer } from '../helpers/server.ts';

/** A concrete path for the pattern, with made-up ids for its parameters. */
function concretePath(route: ApiRoute): string {
  return route.pattern.replace(/:([A-Za-z_]+)/g, (_match, name: string) => `made_up_${name}_1`);
}

function scopeOf(route: ApiRoute): string {
  return `${route.method === 'GET' ? 'read' : 'write'}:${route.resource}`;
}

function otherVerb(scope: string): string {
  return scope.startsWith('read:') ? scope.replace('read:', 'write:') : scope.replace('write:', 'read:');
}

test('every /v1 route refuses keys without its permission, and admits keys with it', async (t) => {
  const server = await startServer(t, { dataDir: null });
  const routes = server.app.apiRoutes;
  assert.ok(routes.length >= 8, 'the walk has routes to walk');
  const user = await server.createUser({ role: 'creator' });
  const keyFor = async (permissions: string[]) => (await server.createKey(user.id, { permissions, rate_limit: 1_000_000 })).key;

  for (const route of routes) {
    const name = `${route.method} ${route.pattern}`;
    assert.ok(route.pattern.startsWith('/v1/'), `${name} lives under /v1`);
    assert.ok((RESOURCES as readonly string[]).includes(route.resource), `${name} declares a known resource`);
    const path = concretePath(route);
    const body = route.method === 'GET' || route.method === 'DELETE' ? undefined : {};
    const required = [name, scopeOf(route)];

    await t.test(`${name} (as ${route.method} ${path})`, async (routeTest) => {
      // Keys that may do other things, but not this.
      const unrelatedRoute = routes.find((other) => other.resource !== route.resource) ?? routes.find((other) => other !== route)!;
      const refusedKeys: Array<[string, string[]]> = [
        ['an unrelated route entry', [`${unrelatedRoute.method} ${unrelatedRoute.pattern}`]],
        ['every other resource’s scopes', RESOURCES.filter((resource) => resource !== route.resource).flatMap((resource) => [`read:${resource}`, `write:${resource}`])],
        ['the other verb’s scope on the same resource', [otherVerb(scopeOf(route))]],
        ['the same pattern with other methods', routes.filter((other) => other.pattern === route.pattern && other.method !== route.method).map((other) => `${other.method} ${other.pattern}`)],
      ];
      for (const [label, permissions] of refusedKeys) {
        if (permissions.length === 0) continue;
        await routeTest.test(`refused to ${label}`, async () => {
          const response = await server.request(route.method, path, { key: await keyFor(permissions), body });
          assert.equal(response.status, 403, `${label} ${JSON.stringify(permissions)}: ${response.text}`);
          assert.ok(Array.isArray(response.body.required), `${label}: 403 body has required`);
          assert.ok(response.body.required.includes(name), `${label}: required names ${name}: ${JSON.stringify(response.body.required)}`);
          assert.ok(response.body.required.includes(scopeOf(route)), `${label}: required names ${scopeOf(route)}`);
          assert.deepEqual(response.body.required, required);
          // The gate still counted the request against the key.
          assert.ok(response.headers.get('x-ratelimit-remaining') !== null);
        });
      }

      // Each entry in `required` really does let the request past the permission check (it
      // may then fail input, ownership or state checks, but not with a permission 403).
      for (const entry of required) {
        await routeTest.test(`admitted by ${entry}`, async () => {
          // An admitted event stream stays open: its HEAD passes the same checks and answers at once.
          const method = path === '/v1/events/stream' ? 'HEAD' : route.method;
          const response = await server.request(method, path, { key: await keyFor([entry]), body });
          assert.ok(!(response.status === 403 && response.body.required), `${entry} admits ${route.method} ${path}: ${response.status} ${response.text}`);
          assert.ok(response.status !== 401 && response.status !== 405, `${entry}: ${response.status}`);
        });
      }
    });
  }
});
