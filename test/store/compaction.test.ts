// Compaction: the log is rewritten to its live records (temp file, fsync, rename, fsync the
// directory); writes arriving meanwhile are kept; it starts by itself when the log is mostly
// superseded; and a crash or a failure at any of its steps leaves a loadable store holding
// exactly the acknowledged records.

import assert from 'node:assert/strict';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { Store } from '../../src/store/store.ts';
import { CRASH_CODE, FaultyFileSystem, type Call, type CrashImages } from './fault-fs.ts';
import { eventually } from '../helpers/eventually.ts';
import { contents, del, errorWithCode, freshDataDir, logLines, logPath, openStore, put, type Item } from './helpers.ts';

/** Writes a history where most lines are superseded; returns the state it acknowledged. */
async function writeHistory(store: Store): Promise<Item[]> {
  for (let round = 1; round <= 5; round += 1) {
    await Promise.all(Array.from({ length: 20 }, (_, index) => store.write([put('items', `id-${index}`, `item ${index}`, round)])));
  }
  await store.write([del('items', 'id-3'), del('items', 'id-4'), put('other', 'x', 'ex')]);
  return contents(store, 'items');
}

async function loadFrom(t: TestContext, dataDir: string): Promise<{ items: Item[]; other: Item[]; warnings: string[] }> {
  const { store, warnings } = await openStore(t, dataDir);
  const result = { items: contents(store, 'items'), other: contents(store, 'other'), warnings };
  await store.close();
  return result;
}

test('compaction keeps exactly the live records, and the store reopens to the same state', async (t) => {
  const dataDir = freshDataDir(t);
  const { store } = await openStore(t, dataDir, { compactAtOps: 1_000_000 });
  const expected = await writeHistory(store);
  const linesBefore = logLines(dataDir).length;
  const result = await store.compact();
  assert.ok(result.bytesAfter < result.bytesBefore / 3, `compacted ${result.bytesBefore} → ${result.bytesAfter} bytes`);
  assert.equal(result.records, 19);
  const lines = logLines(dataDir);
  assert.equal(lines.length, 1 + 19, `the log went from ${linesBefore} lines to a header and one line per live record`);
  assert.match(lines[0]!, /"format":"marketplace-api-log","version":1/);
  assert.equal(store.stats().opsInLog, 19);
  assert.equal(store.stats().compactions, 1);
  assert.deepEqual(readdirSync(dataDir).sort(), ['LOCK', 'marketplace.log']);
  // Appends after the compaction go to the new log.
  await store.write([put('items', 'after', 'after compaction')]);
  await store.close();
  const loaded = await loadFrom(t, dataDir);
  assert.deepEqual(loaded.items, [{ id: 'after', name: 'after compaction', version: 1 }, ...expected].sort((a, b) => a.id.localeCompare(b.id)));
  assert.deepEqual(loaded.other, [{ id: 'x', name: 'ex', version: 1 }]);
  assert.deepEqual(loaded.warnings, []);
});

test('writes made during a compaction are acknowledged while it runs and are kept in the new log', async (t) => {
  const dataDir = freshDataDir(t);
  const fileSystem = new FaultyFileSystem();
  const { store } = await openStore(t, dataDir, { fileSystem, compactAtOps: 1_000_000 });
  await writeHistory(store);
  // Hold the compaction at its temp file's fsync (the records written, before the switch).
  let releaseTempSync: () => void = () => {};
  const gate = new Promise<void>((resolve) => {
    releaseTempSync = resolve;
  });
  let reachedTempSync: () => void = () => {};
  const atTempSync = new Promise<void>((resolve) => {
    reachedTempSync = resolve;
  });
  const originalRun = fileSystem.run.bind(fileSystem);
  fileSystem.run = async (operation, path, perform, partial) => {
    if (operation === 'sync' && path.endsWith('.compact.tmp')) {
      reachedTempSync();
      await gate;
    }
    return originalRun(operation, path, perform, partial);
  };
  const compaction = store.compact();
  t.after(releaseTempSync);
  await atTempSync;
  // Puts, a change and a deletion of records the compaction has already written.
  const during = Array.from({ length: 50 }, (_, index) =>
    store.write([put('items', `during-${index}`, 'written during compaction'), put('items', 'id-0', 'changed during compaction', 99)]),
  );
  during.push(store.write([del('items', 'id-1')]));
  await Promise.all(during);
  let compacted = false;
  void compaction.then(() => (compacted = true));
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(compacted, false, 'the writes were acknowledged while the compaction was held');
  releaseTempSync();
  await compaction;
  const expected = contents(store, 'items');
  assert.equal(store.get<Item>('items', 'id-0')?.version, 99);
  assert.equal(store.get<Item>('items', 'id-1'), undefined);
  assert.equal(expected.length, 17 + 50);
  await store.close();
  assert.deepEqual((await loadFrom(t, dataDir)).items, expected);
});

test('compaction starts by itself once the log is mostly superseded records, not before', async (t) => {
  const dataDir = freshDataDir(t);
  const { store } = await openStore(t, dataDir, { compactAtOps: 100 });
  // 100 distinct live records: nothing superseded, no compaction.
  await Promise.all(Array.from({ length: 120 }, (_, index) => store.write([put('items', `id-${index}`, 'live')])));
  await store.snapshot(); // runs after anything the last write queued
  assert.equal(store.stats().compactions, 0);
  // Now supersede them: the log becomes mostly dead lines.
  for (let round = 0; round < 2; round += 1) {
    await Promise.all(Array.from({ length: 120 }, (_, index) => store.write([put('items', `id-${index}`, 'rewritten', round + 2)])));
  }
  // It runs beside the writes: wait for it to end.
  await eventually(async () => store.stats().compactions >= 1, 30_000, 'an automatic compaction');
  const stats = store.stats();
  assert.ok(stats.opsInLog < 240, `the log holds ${stats.opsInLog} operations for 120 live records`);
  await store.close();
  const loaded = await loadFrom(t, dataDir);
  assert.equal(loaded.items.length, 120);
  assert.ok(loaded.items.every((item) => item.version === 3));
});

test('a temporary file left by an interrupted compaction is discarded at start with a warning, never read', async (t) => {
  const dataDir = freshDataDir(t);
  const setup = await openStore(t, dataDir);
  await setup.store.write([put('items', 'a', 'alpha')]);
  await setup.store.close();
  const header = logLines(dataDir)[0]!;
  // Half a compaction: a record the log never acknowledged, and a torn line.
  const leftover = join(dataDir, 'marketplace.log.compact.tmp');
  writeFileSync(leftover, `${header}\n{"op":"put","c":"items","id":"ghost","d":{"id":"ghost"}}\n{"op":"put","c":"it`);
  const { store, warnings } = await openStore(t, dataDir);
  assert.deepEqual(contents(store, 'items').map((item) => item.id), ['a']);
  assert.equal(existsSync(leftover), false);
  assert.match(warnings.join('\n'), /Discarded .*marketplace\.log\.compact\.tmp \(\d+ bytes\), left by an interrupted compaction/);
});

/** Every file call a clean compaction makes (after some history), to crash at each in turn. */
async function compactionCalls(t: TestContext): Promise<Call[]> {
  const dataDir = freshDataDir(t);
  const fileSystem = new FaultyFileSystem();
  const { store } = await openStore(t, dataDir, { fileSystem, compactAtOps: 1_000_000 });
  await writeHistory(store);
  const start = fileSystem.calls.length;
  await store.compact();
  await store.write([put('items', 'after', 'after compaction')]);
  return fileSystem.calls.slice(start);
}

test('a crash at each step of a compaction (and of the first write after it) leaves exactly the acknowledged records', async (t) => {
  const steps = await compactionCalls(t);
  assert.deepEqual(
    steps.map((call) => call.operation),
    ['remove', 'create', 'write', 'write', 'sync', 'close', 'rename', 'open', 'close', 'syncDirectory', 'write', 'sync'],
  );
  let images = 0;
  for (let index = 0; index < steps.length; index += 1) {
    for (const phase of ['before', 'after'] as const) {
      await t.test(`crash ${phase} ${steps[index]!.operation} (step ${index + 1})`, async () => {
        const label = `crash ${phase} ${steps[index]!.operation} (step ${index + 1})`;
        const dataDir = freshDataDir(t);
        const fileSystem = new FaultyFileSystem();
        t.after(() => fileSystem.cleanUp());
        const { store } = await openStore(t, dataDir, { fileSystem, compactAtOps: 1_000_000 });
        const acknowledged = await writeHistory(store);
        let crashImages: CrashImages | null = null;
        fileSystem.crashAtCall(index, phase, (taken) => {
          crashImages = taken;
        });
        let afterAcknowledged = false;
        await store
          .compact()
          .then(() => store.write([put('items', 'after', 'after compaction')]))
          .then(() => {
            afterAcknowledged = true;
          })
          .catch((error: NodeJS.ErrnoException) => assert.equal(error.cause && (error.cause as NodeJS.ErrnoException).code, CRASH_CODE, label));
        await store.close().catch(() => {});
        assert.ok(crashImages, `${label}: the crash happened`);
        const expected = afterAcknowledged ? [...acknowledged, { id: 'after', name: 'after compaction', version: 1 }] : acknowledged;
        for (const [kind, dir] of Object.entries(crashImages as CrashImages)) {
          const loaded = await loadFrom(t, dir);
          images += 1;
          // An unacknowledged write may or may not survive, but never in part.
          const got = loaded.items.filter((item) => afterAcknowledged || item.id !== 'after');
          assert.deepEqual(got, expected.sort((a, b) => a.id.localeCompare(b.id)), `${label}, ${kind}`);
          assert.deepEqual(loaded.other, [{ id: 'x', name: 'ex', version: 1 }], `${label}, ${kind}`);
          assert.ok(!readdirSync(dir).some((name) => name.endsWith('.tmp')), `${label}, ${kind}: no temp file left after start`);
        }
      });
    }
  }
  assert.equal(images, steps.length * 2 * 2);
});

test('a failure at each step of a compaction leaves the store working; later writes are durable, also across a power cut', async (t) => {
  const steps = await compactionCalls(t);
  for (let index = 0; index < steps.length - 2; index += 1) {
    await t.test(`failure at ${steps[index]!.operation} (step ${index + 1})`, async () => {
      const step = steps[index]!;
      const label = `failure at ${step.operation} (step ${index + 1})`;
      const dataDir = freshDataDir(t);
      const fileSystem = new FaultyFileSystem();
      t.after(() => fileSystem.cleanUp());
      const { store } = await openStore(t, dataDir, { fileSystem, compactAtOps: 1_000_000 });
      await writeHistory(store);
      // Fail the matching call once (counting calls of that kind and path from now on).
      const sameBefore = steps.slice(0, index).filter((call) => call.operation === step.operation && call.path === step.path).length;
      let seen = 0;
      const originalRun = fileSystem.run.bind(fileSystem);
      fileSystem.run = async (operation, path, perform, partial) => {
        if (operation === step.operation && path === step.path) {
          seen += 1;
          if (seen === sameBefore + 1) {
            return originalRun(operation, path, () => Promise.reject(errorWithCode('EIO', `EIO at ${operation}`)), partial);
          }
        }
        return originalRun(operation, path, perform, partial);
      };
      await store.compact().catch(() => {});
      fileSystem.run = originalRun;
      // Writes after the failed step are acknowledged and survive a restart and a power cut.
      await store.write([put('items', 'after', 'after the failed step')]);
      const expected = contents(store, 'items');
      let images: CrashImages | null = null;
      fileSystem.crashAtCall(0, 'before', (taken) => {
        images = taken;
      });
      await store.write([put('items', 'unacknowledged', 'x')]).catch(() => {});
      await store.close().catch(() => {});
      for (const [kind, dir] of Object.entries(images! as CrashImages)) {
        const loaded = await loadFrom(t, dir);
        assert.deepEqual(loaded.items, expected, `${label}, then a ${kind}`);
      }
    });
  }
});

test('the compacted log replaces the old one only whole: the log never holds a partial compaction', async (t) => {
  const dataDir = freshDataDir(t);
  const fileSystem = new FaultyFileSystem();
  const { store } = await openStore(t, dataDir, { fileSystem, compactAtOps: 1_000_000 });
  const expected = await writeHistory(store);
  fileSystem.inject({ operation: 'write', pathEndsWith: '.compact.tmp', error: errorWithCode('ENOSPC'), partialBytes: 40 });
  await assert.rejects(store.compact(), /ENOSPC/);
  assert.equal(existsSync(logPath(dataDir) + '.compact.tmp'), false, 'the partial temp file is removed');
  fileSystem.clearFaults();
  await store.close();
  assert.deepEqual((await loadFrom(t, dataDir)).items, expected);
});

test('a compaction of more records than one write chunk keeps them all, in one line each', async (t) => {
  const dataDir = freshDataDir(t);
  const { store } = await openStore(t, dataDir, { compactAtOps: 1_000_000 });
  await Promise.all(Array.from({ length: 9_000 }, (_, index) => store.write([put('items', `id-${index}`, `item ${index}`)])));
  await Promise.all(Array.from({ length: 9_000 }, (_, index) => store.write([put('items', `id-${index}`, `item ${index}`, 2)])));
  await store.compact();
  assert.equal(logLines(dataDir).length, 1 + 9_000);
  await store.close();
  const loaded = await loadFrom(t, dataDir);
  assert.equal(loaded.items.length, 9_000);
  assert.ok(loaded.items.every((item) => item.version === 2));
});
