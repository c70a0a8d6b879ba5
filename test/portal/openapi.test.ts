// The portal in the OpenAPI document: a cookie security scheme, used by every route that needs a
// session; the open routes (sign-in, sign-out, password, sign-up) ask for none; every portal
// write documents the 403 of the same-origin rule.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startServer } from '../helpers/server.ts';

test('/openapi.json: sessionCookie (apiKey in cookie) on the session routes, 403 on every portal write', async (t) => {
  const server = await startServer(t);
  const document = (await server.request('GET', '/openapi.json')).body;
  assert.deepEqual(
    { type: document.components.securitySchemes.sessionCookie.type, in: document.components.securitySchemes.sessionCookie.in, name: document.components.securitySchemes.sessionCookie.name },
    { type: 'apiKey', in: 'cookie', name: 'marketplace_session' },
  );
  const portalRoutes = server.app.portalRoutes;
  assert.ok(portalRoutes.length >= 6);
  for (const route of portalRoutes) {
    const operation = document.paths[route.pattern.replace(/:([A-Za-z_]+)/g, '{$1}')][route.method.toLowerCase()];
    assert.deepEqual(operation.tags, ['portal'], route.pattern);
    if (route.open === true) assert.ok(!JSON.stringify(operation.security ?? []).includes('bearerKey'), `${route.method} ${route.pattern} needs no API key`);
    else {
      assert.deepEqual(operation.security, [{ sessionCookie: [] }], `${route.method} ${route.pattern}`);
      assert.ok(operation.responses['401'], `${route.method} ${route.pattern} documents 401`);
    }
    if (route.method !== 'GET') assert.ok(operation.responses['403'], `${route.method} ${route.pattern} documents 403`);
  }
});
