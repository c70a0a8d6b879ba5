// Bodies no client should be able to turn into a 5xx or into altered data, against a real
// server: JSON nested 10,000 levels deep, bytes that are not UTF-8, and strings holding U+0000
// or an unpaired surrogate (in a value, a field name, nested or at the top) are each a 400 JSON
// error on every JSON route, nothing is stored, and nothing is logged as a crash (the test
// server fails any test whose server answered 5xx or logged an error). The same strings in the
// URL (a percent-decoded path parameter or query value) are refused too.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startServer, ADMIN_TOKEN, type TestServer } from '../helpers/server.ts';

interface JsonRoute {
  method: string;
  path: string;
  authorization: string;
  /** A body this route would accept, with HOLE where a string's text goes. */
  template: string;
}

/** Every route that reads a JSON body, with the key or token that reaches its body check. */
async function jsonRoutes(server: TestServer): Promise<JsonRoute[]> {
  const creator = await server.userWithKey('creator', ['read:listings', 'write:listings', 'read:users', 'write:users', 'read:webhooks', 'write:webhooks']);
  const listing = await server.request('POST', '/v1/listings', { key: creator.key, body: { title: 'Mine', type: 'TOOL', price: 1 } });
  assert.equal(listing.status, 201, listing.text);
  const key = `Bearer ${creator.key}`;
  const operator = `Bearer ${ADMIN_TOKEN}`;
  return [
    { method: 'POST', path: '/v1/listings', authorization: key, template: '{"title":"HOLE","type":"TOOL","price":1}' },
    { method: 'PUT', path: `/v1/listings/${listing.body.data.id}`, authorization: key, template: '{"description":"HOLE"}' },
    { method: 'PUT', path: '/v1/users/me', authorization: key, template: '{"bio":"HOLE"}' },
    { method: 'POST', path: '/v1/webhooks', authorization: key, template: '{"url":"https://example.com/hook","description":"HOLE"}' },
    { method: 'POST', path: '/admin/v1/users', authorization: operator, template: '{"name":"HOLE"}' },
    { method: 'PATCH', path: `/admin/v1/users/${creator.userId}`, authorization: operator, template: '{"bio":"HOLE"}' },
    { method: 'POST', path: '/admin/v1/keys', authorization: operator, template: `{"user_id":"${creator.userId}","name":"HOLE"}` },
    { method: 'PATCH', path: `/admin/v1/keys/${creator.keyId}`, authorization: operator, template: '{"name":"HOLE"}' },
    { method: 'POST', path: `/admin/v1/listings/${listing.body.data.id}/remove`, authorization: operator, template: '{"reason":"HOLE"}' },
  ];
}

/** The route's body with `text` (bytes as they are) where its string goes. */
function filled(route: JsonRoute, text: string | Buffer): Buffer {
  const [before, after] = route.template.split('HOLE') as [string, string];
  return Buffer.concat([Buffer.from(before), Buffer.isBuffer(text) ? text : Buffer.from(text), Buffer.from(after)]);
}

async function send(server: TestServer, route: JsonRoute, body: string | Buffer) {
  return server.request(route.method, route.path, { rawBody: body, headers: { authorization: route.authorization, 'content-type': 'application/json' } });
}

/** The whole store as JSON, to show a refused body changed nothing. */
function storeText(server: TestServer): string {
  const collections = ['users', 'keys', 'listings', 'webhooks', 'audit'] as const;
  return JSON.stringify(collections.map((name) => [...server.app.store.values(name as never)]));
}

test('JSON nested 10,000 levels deep (objects or arrays, under 64 KiB) is a 400 on every JSON route, not a crash', { timeout: 60_000 }, async (t) => {
  const server = await startServer(t, { dataDir: null });
  const routes = await jsonRoutes(server);
  const depth = 10_000;
  const bodies = {
    arrays: `{"title":"t","extra":${'['.repeat(depth)}${']'.repeat(depth)}}`,
    objects: `{"title":"t","extra":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}`,
  };
  for (const text of Object.values(bodies)) assert.ok(Buffer.byteLength(text) < 64 * 1024);
  const before = storeText(server);
  for (const route of routes) {
    for (const [shape, text] of Object.entries(bodies)) {
      const answer = await send(server, route, text);
      assert.equal(answer.status, 400, `${route.method} ${route.path} with nested ${shape}: ${answer.status} ${answer.text.slice(0, 200)}`);
      assert.match(answer.body.error, /nest/i);
    }
  }
  assert.equal(storeText(server), before);
  // A body nested a little (as real ones are) is still fine.
  const ok = await send(server, routes[0]!, JSON.stringify({ title: 'Nested tags', type: 'TOOL', price: 1, tags: ['a', 'b'] }));
  assert.equal(ok.status, 201);
});

test('a body that is not valid UTF-8 is a 400 and nothing is stored (never U+FFFD)', { timeout: 60_000 }, async (t) => {
  const server = await startServer(t, { dataDir: null });
  const routes = await jsonRoutes(server);
  const before = storeText(server);
  const invalid = [
    Buffer.from([0x63, 0x61, 0x66, 0xe9]), // "caf" and a latin-1 é
    Buffer.from([0xed, 0xa0, 0x80]), // a surrogate encoded as UTF-8 (CESU)
    Buffer.from([0x78, 0xc0, 0xaf]), // an overlong "/"
    Buffer.from([0x78, 0xe2, 0x82]), // a character cut short
    Buffer.from([0xff, 0xfe]),
  ];
  for (const route of routes) {
    for (const body of invalid) {
      const answer = await send(server, route, filled(route, body));
      assert.equal(answer.status, 400, `${route.method} ${route.path}: ${answer.status} ${answer.text}`);
      assert.match(answer.body.error, /UTF-8/, answer.text);
    }
  }
  assert.equal(storeText(server), before);
  assert.ok(!before.includes('\ufffd'));
  // Valid multi-byte text still goes through unchanged.
  const ok = await send(server, routes[0]!, filled(routes[0]!, 'café ☕ 𝄞'));
  assert.equal(ok.status, 201);
  assert.equal(ok.body.data.title, 'café ☕ 𝄞');
});

test('U+0000 or an unpaired surrogate anywhere in a body (value, field name, nested) is a 400 and nothing is stored', { timeout: 60_000 }, async (t) => {
  const server = await startServer(t, { dataDir: null });
  const routes = await jsonRoutes(server);
  const before = storeText(server);
  const strings = ['x\\u0000', '\\u0000', '\\ud800', 'a\\udc00b', 'end\\ud83d', '\\ude00\\ud83d'];
  for (const route of routes) {
    for (const text of strings) {
      const answer = await send(server, route, filled(route, text));
      assert.equal(answer.status, 400, `${route.method} ${route.path} "${text}": ${answer.status} ${answer.text}`);
      assert.match(answer.body.error, /U\+0000|surrogate/, answer.text);
    }
    // Nested in an array, in an object, or as a field name.
    for (const body of ['{"tags":["ok","\\u0000"]}', '{"a":{"b":"\\ud800"}}', '{"x\\u0000":1}', '{"\\udfff":1}']) {
      const answer = await send(server, route, body);
      assert.equal(answer.status, 400, `${route.method} ${route.path} ${body}: ${answer.status} ${answer.text}`);
      assert.match(answer.body.error, /U\+0000|surrogate/, answer.text);
    }
  }
  assert.equal(storeText(server), before);
  // A surrogate pair (an emoji written as escapes) is a whole character and is fine.
  const ok = await send(server, routes[0]!, filled(routes[0]!, 'pair \\ud83d\\ude00'));
  assert.equal(ok.status, 201, ok.text);
  assert.equal(ok.body.data.title, 'pair 😀');
});

test('U+0000 in a path parameter or a query value is a 400 before any handler sees it', { timeout: 60_000 }, async (t) => {
  const server = await startServer(t, { dataDir: null });
  const creator = await server.userWithKey('creator', ['read:listings', 'write:listings', 'read:users', 'read:webhooks', 'write:webhooks']);
  const cases: Array<[string, string]> = [
    ['GET', '/v1/listings/lst_%00'],
    ['PUT', '/v1/listings/%00'],
    ['DELETE', '/v1/webhooks/%00'],
    ['GET', '/v1/users/%00'],
    ['GET', '/v1/listings?q=%00'],
    ['GET', '/v1/listings?q=a%00b'],
    ['GET', '/v1/listings?tag=%00'],
  ];
  for (const [method, path] of cases) {
    const answer = await server.request(method, path, { key: creator.key, body: method === 'PUT' ? { price: 2 } : undefined });
    assert.equal(answer.status, 400, `${method} ${path}: ${answer.status} ${answer.text}`);
  }
  for (const path of ['/admin/v1/users/%00', '/admin/v1/audit?target_id=%00', '/admin/v1/keys?user_id=%00']) {
    const answer = await server.admin('GET', path);
    assert.equal(answer.status, 400, `GET ${path}: ${answer.status} ${answer.text}`);
  }
});
