// A noisy neighbour held to its share: the real server (src/main.ts, its own process) with
// 30,000 listings; one key sends costly searches (thirty word prefixes each, every one a new
// query, so no cached page) sixteen at a time from a client process of its own, up to its rate
// limit, while another key asks for pages one after another. The hammering key is refused with
// 429 and Retry-After once its work passes its budget, long before its rate limit; the other
// key is served every time. The budget is set small (KEY_CPU_BUDGET_MS=100: 400 ms a minute
// for either key, both past 400 requests a minute) so that it is reached in seconds.
// How fast the other key is served meanwhile, with the budget and without it, is a benchmark
// figure (`npm run bench:timings`, published in docs/performance.md), not asserted here.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { temporaryDir } from '../helpers/server.ts';
import { HAMMER_RATE_LIMIT, hammer, quietPages, seed, startNeighbours } from '../helpers/noisy-neighbour.ts';

test('a key hammering costly searches at its rate limit is held to its CPU budget while another key is served every time', { timeout: 300_000 }, async (t) => {
  const dataDir = temporaryDir(t);
  await seed(dataDir);
  const server = await startNeighbours(dataDir, 100);
  t.after(server.stop);

  const hammered = hammer(server.url, server.hammeringKey);
  const quiet = await quietPages(server.url, server.quietKey, hammered);
  const held = await hammered;
  t.diagnostic(`hammering key served ${held.served}, refused ${held.refusedForCpu}; quiet key served ${quiet.latencies.length - quiet.refusals.length} of ${quiet.latencies.length}`);

  assert.equal(held.other, null, 'the hammering key got only 200 or a CPU refusal');
  const refusal = held.firstRefusal;
  assert.ok(refusal !== null, 'the hammering key was refused for CPU');
  assert.match(refusal.error, /CPU/);
  assert.ok(held.served < HAMMER_RATE_LIMIT / 4, `refused long before its rate limit (${held.served} of ${HAMMER_RATE_LIMIT} served)`);
  const retryAfter = Number(refusal.retryAfter);
  assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${refusal.retryAfter}`);
  assert.deepEqual(quiet.refusals, [], 'the quiet key was never refused');
});
