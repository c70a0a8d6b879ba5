// The compression figure for `npm run bench:timings`: the server's event-loop delay while it
// compresses large uncached br pages (test/http/compression-event-loop.test.ts's scenario: 100
// listings of 5,000 random astral characters, pages of about 2 MB, each `limit` its own page).
// The test checks the answers; how long the loop was held is measured here, over 30 pages one
// after another, the server in this process as in the test. Compressed on the main thread each
// page held the loop 150-400 ms; in libuv's thread pool the loop stays free.

import { monitorEventLoopDelay } from 'node:perf_hooks';
import { rawRequest } from '../test/helpers/raw-http.ts';
import { BENCH_ADMIN_TOKEN, sendJson, startBenchServer } from './timings-server.ts';

const PAGES = 30;

export interface CompressionFigures {
  pages: number;
  loop_delay_p99_ms: number;
  loop_delay_max_ms: number;
}

function incompressibleText(): string {
  const codes = new Uint32Array(5_000);
  crypto.getRandomValues(codes);
  return String.fromCodePoint(...Array.from(codes, (code) => 0x20000 + (code % 0xa6e0)));
}

/** A 201's data, or an error naming the request. */
async function created(base: string, path: string, token: string, body: unknown): Promise<any> {
  const answer = await sendJson(base, 'POST', path, { authorization: `Bearer ${token}` }, body);
  if (answer.status !== 201) throw new Error(`POST ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body.data;
}

export async function measureCompression(log: (line: string) => void): Promise<CompressionFigures> {
  log(`Compression: ${PAGES} uncached br pages of about 2 MB, the server's event-loop delay watched…`);
  const { app, base } = await startBenchServer();
  try {
    const user = await created(base, '/admin/v1/users', BENCH_ADMIN_TOKEN, { name: 'Bench', role: 'creator' });
    const { key } = await created(base, '/admin/v1/keys', BENCH_ADMIN_TOKEN, { user_id: user.id, rate_limit: 100_000, permissions: ['read:listings', 'write:listings'] });
    for (let index = 0; index < 100; index += 1) await created(base, '/v1/listings', key, { title: `Listing ${index}`, type: 'SKILL', price: index, description: incompressibleText() });
    // Warm up what is not measured (serialised listings, the index) with one plain page.
    await rawRequest(base, 'GET', '/v1/listings?limit=100', { authorization: `Bearer ${key}` });
    const delay = monitorEventLoopDelay({ resolution: 5 });
    delay.enable();
    try {
      // Limits 100 down to 71: every page new, so none comes from the cache.
      for (let limit = 100; limit > 100 - PAGES; limit -= 1) {
        const page = await rawRequest(base, 'GET', `/v1/listings?limit=${limit}`, { authorization: `Bearer ${key}`, 'accept-encoding': 'br' });
        if (page.status !== 200 || page.headers['content-encoding'] !== 'br') throw new Error(`page ${limit}: ${page.status} ${page.headers['content-encoding']}`);
      }
    } finally {
      delay.disable();
    }
    const figures = { pages: PAGES, loop_delay_p99_ms: delay.percentile(99) / 1e6, loop_delay_max_ms: delay.max / 1e6 };
    log(`  event-loop delay p99 ${figures.loop_delay_p99_ms.toFixed(1)} ms, max ${figures.loop_delay_max_ms.toFixed(1)} ms over ${PAGES} pages`);
    return figures;
  } finally {
    await app.close(2_000);
  }
}
