// GET /readyz: 200 while the store accepts writes; 503 with reasons under an injected disk
// fault (full disk, fsync error, read-only), back to 200 by itself once the disk recovers;
// 503 once the server is stopping. /healthz stays 200 throughout (liveness). The flip test runs
// the server on a ManualClock and moves it past the one-second probe interval instead of waiting.

import assert from 'node:assert/strict';
import test from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { Readiness } from '../../src/health/readiness.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { FaultyFileSystem } from '../store/fault-fs.ts';
import { errorWithCode } from '../store/helpers.ts';

/** The probe result is kept for a second: move the server's clock past that, then ask GET /readyz. */
async function readyzAfterProbeInterval(server: TestServer, clock: ManualClock) {
  clock.advance(1_000);
  return server.request('GET', '/readyz');
}

test('GET /readyz flips to 503 under each injected disk fault and back to 200 when the disk recovers', async (t) => {
  const fileSystem = new FaultyFileSystem();
  const clock = new ManualClock();
  const server = await startServer(t, { fileSystem, clock, expectedServerErrors: [503] });
  const ready = await server.request('GET', '/readyz');
  assert.equal(ready.status, 200);
  assert.deepEqual(ready.body, { status: 'ready' });

  for (const [label, fault, pattern] of [
    ['disk full', { operation: 'write' as const, error: errorWithCode('ENOSPC', 'ENOSPC: no space left on device, write') }, /ENOSPC/],
    ['fsync error', { operation: 'sync' as const, error: errorWithCode('EIO', 'EIO: i/o error, fsync') }, /EIO/],
    ['read-only file system', { operation: 'create' as const, error: errorWithCode('EROFS', 'EROFS: read-only file system, open') }, /EROFS/],
  ] as const) {
    await t.test(label, async () => {
      fileSystem.inject(fault);
      const notReady = await readyzAfterProbeInterval(server, clock);
      assert.equal(notReady.status, 503, label);
      assert.equal(notReady.body.status, 'not_ready', label);
      assert.ok(Array.isArray(notReady.body.reasons) && notReady.body.reasons.length === 1, label);
      assert.match(notReady.body.reasons[0], /store does not accept writes/, label);
      assert.match(notReady.body.reasons[0], pattern, label);
      assert.equal((await server.request('GET', '/healthz')).status, 200, `${label}: liveness unaffected`);
      fileSystem.clearFaults();
      const back = await readyzAfterProbeInterval(server, clock);
      assert.equal(back.status, 200, label);
      assert.deepEqual(back.body, { status: 'ready' }, label);
    });
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
