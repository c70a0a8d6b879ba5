// How much the store's log grows under a read-only workload: reads are counted in memory and
// saved as aggregates, so N reads of listings (one by one and in pages) whose counts are saved
// together grow the log by at most 3 bytes each, counted from before the reads to after the
// server stopped (which saves the last counts), against a real server on a data directory.
// Not in test:unit (slow: 22,000 requests to a real server); npm test runs it.

import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { LOG_FILE_NAME } from '../../src/store/format.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

const LISTINGS = 2_000;
const READS = 20_000;
const IN_FLIGHT = 32;

/** Runs `count` calls of `send`, `IN_FLIGHT` at a time. */
async function inParallel(count: number, send: (index: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < count) await send(next++);
    }),
  );
}

function logBytes(server: TestServer): number {
  return statSync(join(server.dataDir!, LOG_FILE_NAME)).size;
}

test(`${READS} reads over ${LISTINGS} listings grow the log by at most 3 bytes per read`, { timeout: 300_000 }, async (t) => {
  const server = await startServer(t);
  const { key } = await server.userWithKey('creator', ['read:listings', 'write:listings'], 1_000_000);
  const ids: string[] = [];
  await inParallel(LISTINGS, async (index) => {
    const created = await server.request('POST', '/v1/listings', { key, body: { title: `Listing ${index}`, type: 'TOOL', price: 1 } });
    assert.equal(created.status, 201);
    ids.push(created.body.data.id);
  });
  // The counts of the writes above saved first, so only the reads' own bytes are measured.
  await server.app.close();
  // One save for all the reads, as a server reading 333 a second makes at the default minute:
  // what a read costs depends on how many reads a save covers (docs/performance.md gives the
  // figure at the default interval and a real rate), and on this busy machine the reads may
  // take longer than a minute.
  const reopened = await startServer(t, { dataDir: server.dataDir, config: { usageFlushMs: 3_600_000 } });
  const before = logBytes(reopened);
  const storeBefore = reopened.app.store.stats().writes;
  const startedAt = performance.now();
  await inParallel(READS, async (index) => {
    // Nine reads of one listing for each page of twenty: views and impressions both counted.
    const path = index % 10 === 9 ? `/v1/listings?limit=20&page=${(index % 50) + 1}` : `/v1/listings/${ids[index % LISTINGS]}`;
    const response = await reopened.request('GET', path, { key });
    assert.equal(response.status, 200);
  });
  const seconds = (performance.now() - startedAt) / 1000;
  await reopened.app.close();
  const storeWrites = reopened.app.store.stats().writes - storeBefore;
  const grew = logBytes(reopened) - before;
  t.diagnostic(`${READS} reads in ${seconds.toFixed(1)} s: the log grew ${grew} bytes (${(grew / READS).toFixed(2)} per read) in ${storeWrites} store operations`);
  assert.ok(grew <= 3 * READS, `the log grew ${grew} bytes, ${(grew / READS).toFixed(1)} per read`);
});
