// Compressing a large answer must not stall the event loop: pages of about 2 MB of text that
// does not compress, each asked for once with br (so none is cached), and answered compressed.
// Compressed on the main thread, each page held the loop for hundreds of milliseconds;
// compressed in libuv's thread pool, the loop stays free. How free is a figure, not a bound a
// busy machine could break: the server's event-loop delay over the same pages is measured by
// `npm run bench:timings` (bench/timings-compression.ts) and published in docs/performance.md;
// here it is only reported.
// Not in test:unit (slow: 10 pages of 2 MB compressed with brotli); npm test runs it.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { brotliDecompressSync } from 'node:zlib';
import { rawRequest } from '../helpers/raw-http.ts';
import { startServer } from '../helpers/server.ts';

/** 5,000 random characters outside the BMP (4 bytes each in UTF-8): text brotli cannot shrink much. */
function incompressibleText(): string {
  const codes = new Uint32Array(5_000);
  crypto.getRandomValues(codes);
  return String.fromCodePoint(...Array.from(codes, (code) => 0x20000 + (code % 0xa6e0)));
}

test('large uncached br pages are each compressed afresh and answered whole, the event-loop delay reported', async (t) => {
  const server = await startServer(t, { dataDir: null });
  const { key } = await server.userWithKey('creator', ['read:listings', 'write:listings'], 10_000);
  for (let index = 0; index < 100; index += 1) {
    const created = await server.request('POST', '/v1/listings', { key, body: { title: `Listing ${index}`, type: 'SKILL', price: index, description: incompressibleText() } });
    assert.equal(created.status, 201);
  }
  const auth = { authorization: `Bearer ${key}`, 'accept-encoding': 'br' };
  // Warm up what is not under test (serialised listings, the index) with one plain page.
  const plain = await rawRequest(server.url, 'GET', '/v1/listings?limit=100', { authorization: `Bearer ${key}` });
  assert.ok(plain.body.length > 1_900_000, `a page of ${plain.body.length} bytes`);

  const delay = monitorEventLoopDelay({ resolution: 5 });
  delay.enable();
  try {
    // Each limit is its own page, made and compressed afresh.
    for (let limit = 100; limit > 90; limit -= 1) {
      const page = await rawRequest(server.url, 'GET', `/v1/listings?limit=${limit}`, auth);
      assert.equal(page.status, 200);
      assert.equal(page.headers['content-encoding'], 'br');
      if (limit === 100) assert.deepEqual(brotliDecompressSync(page.body), plain.body);
    }
  } finally {
    delay.disable();
  }
  const maxMs = delay.max / 1e6;
  const p99Ms = delay.percentile(99) / 1e6;
  t.diagnostic(`event-loop delay while compressing: p99 ${p99Ms.toFixed(1)} ms, max ${maxMs.toFixed(1)} ms`);
});
