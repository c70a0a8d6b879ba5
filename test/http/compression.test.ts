// Compression (br, gzip) seen on the wire: bodies decompress to the plain bytes, each encoding
// has its own ETag and its own 304, q-values are honoured (q=0 refuses), small answers stay
// plain, and a kept answer is compressed once; without the compression module nothing is.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { compressed, MAX_SYNC_COMPRESSED_BYTES } from '../../src/modules/compression/compression.ts';
import { preferredEncoding } from '../../src/modules/compression/negotiation.ts';
import { rawRequest } from '../helpers/raw-http.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

/** A server with 30 listings, so a page of them is well over 1 KiB; and a key that reads them. */
async function serverWithPage(t: Parameters<typeof startServer>[0]): Promise<{ server: TestServer; key: string }> {
  const server = await startServer(t, { dataDir: null });
  const { key } = await server.userWithKey('creator', ['read:listings', 'write:listings']);
  for (let index = 0; index < 30; index += 1) {
    const created = await server.request('POST', '/v1/listings', { key, body: { title: `Listing number ${index}`, type: 'SKILL', price: index, description: 'A description long enough to make a page of listings weigh several KiB.' } });
    assert.equal(created.status, 201);
  }
  return { server, key };
}

test('gzip and br bodies of a list page and /openapi.json decompress to the identity bytes', async (t) => {
  const { server, key } = await serverWithPage(t);
  for (const path of ['/v1/listings?limit=30', '/openapi.json']) {
    const auth = { authorization: `Bearer ${key}` };
    const plain = await rawRequest(server.url, 'GET', path, auth);
    assert.equal(plain.status, 200);
    assert.equal(plain.headers['content-encoding'], undefined, `${path}: no encoding asked, none given`);
    assert.ok(plain.body.length >= 1024, `${path} is at least 1 KiB (${plain.body.length})`);
    assert.match(String(plain.headers.vary), /Accept-Encoding/);
    for (const [encoding, decompress] of [['gzip', gunzipSync], ['br', brotliDecompressSync]] as const) {
      await t.test(`${path} ${encoding}`, async () => {
        const encoded = await rawRequest(server.url, 'GET', path, { ...auth, 'accept-encoding': encoding });
        assert.equal(encoded.status, 200);
        assert.equal(encoded.headers['content-encoding'], encoding, `${path} ${encoding}`);
        assert.match(String(encoded.headers.vary), /Accept-Encoding/);
        assert.equal(Number(encoded.headers['content-length']), encoded.body.length);
        assert.ok(encoded.body.length < plain.body.length / 2, `${path} ${encoding}: ${encoded.body.length} bytes vs ${plain.body.length}`);
        assert.deepEqual(decompress(encoded.body), plain.body, `${path} ${encoding} decompresses to the identity bytes`);
      });
    }
  }
});

test('each encoding has its own ETag and its own 304; a tag of one encoding does not match another', async (t) => {
  const { server, key } = await serverWithPage(t);
  const auth = { authorization: `Bearer ${key}` };
  const path = '/v1/listings?limit=30';
  const tags: Record<string, string> = {};
  for (const encoding of ['identity', 'gzip', 'br']) {
    const answer = await rawRequest(server.url, 'GET', path, { ...auth, 'accept-encoding': encoding });
    tags[encoding] = String(answer.headers.etag);
  }
  assert.equal(new Set(Object.values(tags)).size, 3, `three distinct tags: ${JSON.stringify(tags)}`);
  for (const encoding of ['identity', 'gzip', 'br']) {
    await t.test(`${encoding}: 304 with its own tag`, async () => {
      const revalidated = await rawRequest(server.url, 'GET', path, { ...auth, 'accept-encoding': encoding, 'if-none-match': tags[encoding]! });
      assert.equal(revalidated.status, 304, `${encoding} with its own tag`);
      assert.equal(revalidated.body.length, 0);
      assert.equal(revalidated.headers.etag, tags[encoding]);
    });
  }
  const crossed = await rawRequest(server.url, 'GET', path, { ...auth, 'accept-encoding': 'identity', 'if-none-match': tags.gzip! });
  assert.equal(crossed.status, 200, 'the gzip tag does not validate the plain representation');
  assert.equal(crossed.headers.etag, tags.identity);
  // A write makes a new page: the old gzip tag no longer matches.
  await server.request('POST', '/v1/listings', { key, body: { title: 'One more', type: 'TOOL', price: 1 } });
  const afterWrite = await rawRequest(server.url, 'GET', path, { ...auth, 'accept-encoding': 'gzip', 'if-none-match': tags.gzip! });
  assert.equal(afterWrite.status, 200);
  assert.notEqual(afterWrite.headers.etag, tags.gzip);
});

test('Accept-Encoding q-values are honoured on the wire: q=0 refuses, the higher q wins', async (t) => {
  const { server, key } = await serverWithPage(t);
  const cases: Array<[string, string | undefined]> = [
    ['gzip;q=0', undefined],
    ['gzip;q=0, br;q=0', undefined],
    ['br;q=0, gzip', 'gzip'],
    ['gzip;q=0.5, br;q=0.9', 'br'],
    ['gzip;q=1, br;q=0.5', 'gzip'],
    ['*;q=0', undefined],
    ['identity', undefined],
    ['deflate', undefined],
    ['*', 'br'],
    ['br;q=0, *;q=0.1', 'gzip'],
    ['GZIP', 'gzip'],
  ];
  for (const [acceptEncoding, expected] of cases) {
    await t.test(`Accept-Encoding: ${acceptEncoding}`, async () => {
      const answer = await rawRequest(server.url, 'GET', '/v1/listings?limit=30', { authorization: `Bearer ${key}`, 'accept-encoding': acceptEncoding });
      assert.equal(answer.status, 200);
      assert.equal(answer.headers['content-encoding'], expected, `Accept-Encoding: ${acceptEncoding}`);
    });
  }
});

test('without the compression module every answer is sent plain, with the identity ETag and no Vary: Accept-Encoding', async (t) => {
  const server = await startServer(t, { dataDir: null, env: { MARKETPLACE_MODULES: 'none' } });
  const plain = await rawRequest(server.url, 'GET', '/openapi.json');
  const asked = await rawRequest(server.url, 'GET', '/openapi.json', { 'accept-encoding': 'gzip, br' });
  assert.equal(asked.status, 200);
  assert.ok(asked.body.length >= 1024);
  assert.equal(asked.headers['content-encoding'], undefined);
  assert.equal(asked.headers.vary, undefined);
  assert.equal(asked.headers.etag, plain.headers.etag);
  assert.deepEqual(asked.body, plain.body);
});

test('answers under 1 KiB are sent plain whatever the client accepts', async (t) => {
  const server = await startServer(t, { dataDir: null });
  const health = await rawRequest(server.url, 'GET', '/healthz', { 'accept-encoding': 'gzip, br' });
  assert.equal(health.status, 200);
  assert.equal(health.headers['content-encoding'], undefined);
  assert.equal(JSON.parse(health.body.toString()).status, 'ok');
  const refused = await rawRequest(server.url, 'GET', '/v1/listings', { 'accept-encoding': 'gzip, br' });
  assert.equal(refused.status, 401);
  assert.equal(refused.headers['content-encoding'], undefined);
});

test('a kept answer is compressed once: the same bytes give the very same compressed copy', async () => {
  const page = Buffer.from(JSON.stringify({ data: Array.from({ length: 50 }, (_, index) => ({ id: index, title: `item ${index}` })) }));
  const first = compressed(page, 'gzip');
  assert.ok(Buffer.isBuffer(first), 'a small answer is compressed at once');
  assert.equal(compressed(page, 'gzip'), first, 'the second call returns the first copy, not a new one');
  assert.notEqual(await compressed(page, 'br'), first);
  assert.deepEqual(gunzipSync(first), page);
});

test('a large answer is compressed off the main thread, once, however many ask for it meanwhile', async () => {
  const page = Buffer.from(JSON.stringify({ data: Array.from({ length: 4_000 }, (_, index) => ({ id: `lst_${index}`, title: `Listing ${index}` })) }));
  assert.ok(page.length > MAX_SYNC_COMPRESSED_BYTES);
  for (const [encoding, decompress] of [['gzip', gunzipSync], ['br', brotliDecompressSync]] as const) {
    const first = compressed(page, encoding);
    assert.ok(first instanceof Promise, `${encoding}: a promise, not bytes made in this turn`);
    assert.equal(compressed(page, encoding), first, `${encoding}: a second caller meanwhile shares the same compression`);
    const bytes = await first;
    assert.deepEqual(decompress(bytes), page);
    assert.equal(compressed(page, encoding), bytes, `${encoding}: once made, the kept copy is returned at once`);
  }
});

test('preferredEncoding: q-values, wildcard, case, malformed parts', async (t) => {
  const cases: Array<[string | undefined, string | null]> = [
    [undefined, null],
    ['', null],
    ['gzip, deflate, br', 'br'],
    ['gzip, deflate, br;q=0.9', 'gzip'],
    ['br;q=0', null],
    ['gzip; q=0.001', 'gzip'],
    ['*;q=0.5, gzip;q=0.4', 'br'],
    [' , ;q=1, gzip', 'gzip'],
    ['x-custom', null],
  ];
  for (const [header, expected] of cases) {
    await t.test(`Accept-Encoding: ${String(header)}`, async () => {
      assert.equal(preferredEncoding(header), expected, `Accept-Encoding: ${String(header)}`);
    });
  }
});

test('If-Match accepts the tag of a compressed answer: a client that read a big listing gzipped can still update it', async (t) => {
  const server = await startServer(t, { dataDir: null });
  const { key } = await server.userWithKey('creator', ['read:listings', 'write:listings']);
  const created = await server.request('POST', '/v1/listings', { key, body: { title: 'Long', type: 'DATASET', price: 5, description: 'd'.repeat(3000) } });
  const id = created.body.data.id as string;
  for (const encoding of ['gzip', 'br']) {
    await t.test(encoding, async () => {
      const read = await rawRequest(server.url, 'GET', `/v1/listings/${id}`, { authorization: `Bearer ${key}`, 'accept-encoding': encoding });
      assert.equal(read.headers['content-encoding'], encoding);
      const etag = String(read.headers.etag);
      const updated = await server.request('PUT', `/v1/listings/${id}`, { key, body: { price: encoding === 'gzip' ? 6 : 7 }, headers: { 'if-match': etag } });
      assert.equal(updated.status, 200, `If-Match with the ${encoding} tag names the current listing`);
      const stale = await server.request('PUT', `/v1/listings/${id}`, { key, body: { price: 8 }, headers: { 'if-match': etag } });
      assert.equal(stale.status, 412, `the ${encoding} tag of the previous version no longer matches`);
    });
  }
});

test('a kept compressed copy owns its memory: a few hundred bytes do not keep zlib\'s 16 KiB output buffer alive', async () => {
  const page = Buffer.from(JSON.stringify({ data: Array.from({ length: 60 }, (_, index) => ({ id: `lst_${index}`, title: `Listing ${index}` })) }));
  for (const encoding of ['gzip', 'br'] as const) {
    const copy = await compressed(page, encoding);
    assert.ok(copy.length < page.length, `${encoding} is smaller`);
    assert.equal(copy.buffer.byteLength, copy.byteLength, `${encoding}: ${copy.byteLength} bytes in an ArrayBuffer of ${copy.buffer.byteLength}`);
  }
});
