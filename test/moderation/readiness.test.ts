// GET /readyz: 200 while the store accepts writes; 503 with reasons under an injected disk
// fault (full disk, fsync error, read-only), back to 200 by itself once the disk recovers;
// 503 once the server is stopping. /healthz stays 200 throughout (liveness).

import assert from 'node:assert/strict';
import test from 'node:test';
import { Readiness } from '../../src/health/readiness.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { FaultyFileSystem } from '../store/fault-fs.ts';
import { errorWithCode } from '../store/helpers.ts';

/** GET /readyz until it answers `status` (the probe result is kept up to a second). */
async function readyzUntil(server: TestServer, status: number, timeoutMs = 8000) {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const response = await server.request('GET', '/readyz');
    if (response.status === status) return response;
    if (performance.now() > deadline) assert.fail(`/readyz never answered ${status}: ${response.status} ${response.text}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

test('GET /readyz flips to 503 under each injected disk fault and back to 200 when the disk recovers', async (t) => {
  const fileSystem = new FaultyFileSystem();
  const server = await startServer(t, { fileSystem, expectedServerErrors: [503] });
  const ready = await server.request('GET', '/readyz');
  assert.equal(ready.status, 200);
  assert.deepEqual(ready.body, { status: 'ready' });

  for (const [label, fault, pattern] of [
    ['disk full', { operation: 'write' as const, error: errorWithCode('ENOSPC', 'ENOSPC: no space left on device, write') }, /ENOSPC/],
    ['fsync error', { operation: 'sync' as const, error: errorWithCode('EIO', 'EIO: i/o error, fsync') }, /EIO/],
    ['read-only file system', { operation: 'create' as const, error: errorWithCode('EROFS', 'EROFS: read-only file system, open') }, /EROFS/],
  ] as const) {
    fileSystem.inject(fault);
    const notReady = await readyzUntil(server, 503);
    assert.equal(notReady.body.status, 'not_ready', label);
    assert.ok(Array.isArray(notReady.body.reasons) && notReady.body.reasons.length === 1, label);
    assert.match(notReady.body.reasons[0], /store does not accept writes/, label);
    assert.match(notReady.body.reasons[0], pattern, label);
    assert.equal((await server.request('GET', '/healthz')).status, 200, `${label}: liveness unaffected`);
    fileSystem.clearFaults();
    const back = await readyzUntil(server, 200);
    assert.deepEqual(back.body, { status: 'ready' }, label);
  }
  // HEAD-less, token-less, and no probe file is left behind.
  const { readdirSync } = await import('node:fs');
  assert.ok(!readdirSync(server.dataDir!).some((name) => name.includes('probe')));
});

test('a burst of /readyz probes the disk at most about once a second', async (t) => {
  const fileSystem = new FaultyFileSystem();
  const server = await startServer(t, { fileSystem });
  const before = fileSystem.calls.filter((call) => call.operation === 'create').length;
  const answers = await Promise.all(Array.from({ length: 50 }, () => server.request('GET', '/readyz')));
  assert.ok(answers.every((response) => response.status === 200));
  const probes = fileSystem.calls.filter((call) => call.operation === 'create').length - before;
  assert.ok(probes <= 3, `${probes} probes for 50 requests`);
});

test('a memory-only server is ready; a stopping one is not', async (t) => {
  const server = await startServer(t, { dataDir: null });
  assert.deepEqual((await server.request('GET', '/readyz')).body, { status: 'ready' });
  const readiness = new Readiness({ fileSystem: new FaultyFileSystem(), dataDir: null, monotonicNow: () => performance.now() });
  assert.deepEqual(await readiness.check(), { ready: true, reasons: [] });
  readiness.markStopping();
  assert.deepEqual(await readiness.check(), { ready: false, reasons: ['the server is stopping'] });
});
