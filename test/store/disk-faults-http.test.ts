// A failing disk seen through HTTP: writes answer 503 with a clear error while reads keep
// answering 200, writes resume once the disk recovers, and the log still loads afterwards.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startServer, temporaryDir } from '../helpers/server.ts';
import { FaultyFileSystem } from './fault-fs.ts';
import { errorWithCode } from './helpers.ts';

test('full disk: writes → 503 (nothing half-written), reads → 200, recovery → 201, restart loads it all', async (t) => {
  const dataDir = temporaryDir(t);
  const fileSystem = new FaultyFileSystem();
  const server = await startServer(t, { dataDir, fileSystem, expectedServerErrors: [503] });
  const { key } = await server.userWithKey('creator', ['read:listings', 'write:listings'], 1_000_000);
  const first = await server.request('POST', '/v1/listings', { key, body: { title: 'Before the fault', type: 'SKILL', price: 5 } });
  assert.equal(first.status, 201);
  const listingId = first.body.data.id as string;

  for (const [label, fault] of [
    ['disk full during write', { operation: 'write' as const, error: errorWithCode('ENOSPC', 'ENOSPC: no space left on device, write'), partialBytes: 30 }],
    ['I/O error on fsync', { operation: 'sync' as const, error: errorWithCode('EIO', 'EIO: i/o error, fsync') }],
    ['read-only file system', { operation: 'write' as const, error: errorWithCode('EROFS', 'EROFS: read-only file system, write') }],
  ] as const) {
    await t.test(label, async () => {
      fileSystem.inject(fault);
      const created = await server.request('POST', '/v1/listings', { key, body: { title: `During: ${label}`, type: 'SKILL', price: 1 } });
      assert.equal(created.status, 503, label);
      assert.match(created.body.error, /cannot save changes right now \(storage unavailable\); reads still work/, label);
      assert.equal(created.headers.get('retry-after'), '5');
      const updated = await server.request('PUT', `/v1/listings/${listingId}`, { key, body: { price: 99 } });
      assert.equal(updated.status, 503, label);
      // Reads are served from memory, untouched by the failed writes.
      const read = await server.request('GET', `/v1/listings/${listingId}`, { key });
      assert.equal(read.status, 200, label);
      assert.equal(read.body.data.price, 5, `${label}: the refused update is not visible`);
      assert.equal((await server.request('GET', '/v1/listings', { key })).status, 200);
      const stats = await server.admin('GET', '/admin/v1/stats');
      assert.equal(stats.body.data.store.writable, false, label);
      fileSystem.clearFaults();
    });
  }

  const after = await server.request('POST', '/v1/listings', { key, body: { title: 'After recovery', type: 'TOOL', price: 7 } });
  assert.equal(after.status, 201);
  assert.equal((await server.admin('GET', '/admin/v1/stats')).body.data.store.writable, true);
  await server.close();

  const output: string[] = [];
  const restarted = await startServer(t, { dataDir, output });
  const listed = await restarted.request('GET', '/v1/listings?limit=100', { key });
  assert.deepEqual((listed.body.data as Array<{ title: string }>).map((listing) => listing.title).sort(), ['After recovery', 'Before the fault']);
  assert.ok(!output.some((line) => /incomplete|damaged/.test(line)), 'no half record was left in the log');
});
