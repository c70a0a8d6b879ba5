// HEAD on every GET route, walked from the routers themselves (so a route added later is
// covered too): the same status and headers as the GET, and no body. Asked plain and with
// Accept-Encoding, since compression changes the headers.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RESOURCES } from '../../src/http/route.ts';
import { rawRequest, type RawResponse } from '../helpers/raw-http.ts';
import { ADMIN_TOKEN, startServer } from '../helpers/server.ts';

/** Headers that differ between any two answers (time, request id, the rate-limit window). */
const PER_REQUEST = new Set(['date', 'x-request-id', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'connection', 'keep-alive']);

test('HEAD on every GET route answers the GET status and headers with no body', async (t) => {
  const server = await startServer(t, { dataDir: null });
  const { key, userId, keyId } = await server.userWithKey('creator', [...RESOURCES.map((resource) => `read:${resource}`), 'write:listings', 'write:webhooks'], 100_000);
  const listing = await server.request('POST', '/v1/listings', { key, body: { title: 'Walked', type: 'TOOL', price: 3 } });
  const ids: Record<string, string> = { listings: listing.body.data.id, users: userId, keys: keyId };

  const { apiRoutes, adminRoutes, publicRoutes } = server.app;
  const getRoutes = [
    ...apiRoutes.map((route) => ({ route, auth: { authorization: `Bearer ${key}` } })),
    ...adminRoutes.map((route) => ({ route, auth: { authorization: `Bearer ${ADMIN_TOKEN}` } })),
    ...publicRoutes.map((route) => ({ route, auth: {} })),
    // The event stream's GET never ends, so it cannot be read whole: its HEAD is tried in test/webhooks/events.test.ts.
  ].filter(({ route }) => route.method === 'GET' && route.pattern !== '/v1/events/stream');
  assert.ok(getRoutes.length >= 10, `walked ${getRoutes.length} GET routes`);
  for (const path of ['/healthz', '/openapi.json']) assert.ok(getRoutes.some(({ route }) => route.pattern === path), `${path} is walked`);

  for (const { route, auth } of getRoutes) {
    // ":id" after "/listings" is a listing's id, and so on; an unknown kind gets some id (a 404 must match too).
    const path = route.pattern.replace(/\/([a-z_]+)\/:[a-z_]+/g, (_, collection: string) => `/${collection}/${ids[collection] ?? 'unknown_id'}`);
    for (const encoding of ['identity', 'gzip']) {
      await t.test(`HEAD ${path} (${encoding})`, async () => {
        const headers = { ...auth, 'accept-encoding': encoding };
        const before = await rawRequest(server.url, 'GET', path, headers);
        const head = await rawRequest(server.url, 'HEAD', path, headers);
        const after = await rawRequest(server.url, 'GET', path, headers);
        const where = `HEAD ${path} (${encoding})`;
        assert.equal(head.status, before.status, `${where}: status`);
        assert.equal(head.body.length, 0, `${where}: no body`);
        assert.ok(before.body.length > 0, `${where}: the GET has a body`);
        assert.deepEqual(comparable(head, before, after), comparable(before, before, after), `${where}: headers`);
      });
    }
  }
});

test('HEAD answers 304 to a matching If-None-Match, and HEAD is listed in Allow', async (t) => {
  const server = await startServer(t, { dataDir: null });
  const got = await rawRequest(server.url, 'GET', '/openapi.json');
  const revalidated = await rawRequest(server.url, 'HEAD', '/openapi.json', { 'if-none-match': String(got.headers.etag) });
  assert.equal(revalidated.status, 304);
  const wrongMethod = await rawRequest(server.url, 'DELETE', '/healthz');
  assert.equal(wrongMethod.status, 405);
  assert.equal(wrongMethod.headers.allow, 'GET, HEAD');
});

/**
 * The headers to compare: all but the per-request ones, and but those whose value changed
 * between the two GETs around the HEAD (an answer that counts requests, or shows uptime,
 * legitimately differs in length and tag from one request to the next).
 */
function comparable(answer: RawResponse, before: RawResponse, after: RawResponse): Record<string, unknown> {
  // A body that changed between the two GETs (a compressed one can keep its length by chance)
  // says the HEAD's own length and tag may differ too.
  const bodyChanged = !before.body.equals(after.body);
  const kept: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(answer.headers)) {
    if (PER_REQUEST.has(name) || String(before.headers[name]) !== String(after.headers[name])) continue;
    if (bodyChanged && (name === 'content-length' || name === 'etag')) continue;
    kept[name] = value;
  }
  return kept;
}
