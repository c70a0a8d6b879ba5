// The OpenAPI document describes exactly the routes the server serves: same paths, same
// methods, nothing missing and nothing invented. Routes added later are caught here too.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startServer } from '../helpers/server.ts';

const toOpenApiPath = (pattern: string) => pattern.replace(/:([A-Za-z_]+)/g, '{$1}');

test('/openapi.json paths and methods equal the router routes', async (t) => {
  const server = await startServer(t);
  const response = await server.request('GET', '/openapi.json');
  assert.equal(response.status, 200);
  const document = response.body;
  assert.equal(document.openapi, '3.1.0');
  const documented = new Set<string>();
  for (const [path, item] of Object.entries(document.paths as Record<string, Record<string, unknown>>)) {
    for (const method of Object.keys(item)) documented.add(`${method.toUpperCase()} ${path}`);
  }
  const served = new Set(
    [...server.app.apiRoutes, ...server.app.adminRoutes, ...server.app.openRoutes].map((route) => `${route.method} ${toOpenApiPath(route.pattern)}`),
  );
  assert.deepEqual([...documented].sort(), [...served].sort());
});

test('every documented operation has a summary, responses and (for /v1 and /admin) a curl example', async (t) => {
  const server = await startServer(t);
  const { body: document } = await server.request('GET', '/openapi.json');
  for (const [path, item] of Object.entries(document.paths as Record<string, Record<string, any>>)) {
    for (const [method, operation] of Object.entries(item)) {
      assert.ok(operation.summary, `${method} ${path} has a summary`);
      assert.ok(operation.responses && Object.keys(operation.responses).length > 0, `${method} ${path} has responses`);
      if (path.startsWith('/v1') || path.startsWith('/admin')) {
        assert.match(operation['x-codeSamples']?.[0]?.source ?? '', /^curl /, `${method} ${path} has a curl example`);
      }
    }
  }
  // Every $ref points at a schema that exists.
  const refs = JSON.stringify(document).match(/#\/components\/schemas\/[A-Za-z]+/g) ?? [];
  for (const ref of new Set(refs)) assert.ok(document.components.schemas[ref.split('/').pop()!], `${ref} exists`);
});
