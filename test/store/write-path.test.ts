// The write path: a write is acknowledged only after its fsync; a failing disk (fsync error,
// full disk, read-only) rejects it, leaves neither memory nor the file changed, keeps reads
// working, and writes resume once the disk recovers. Concurrent writes share fsyncs.

import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { collectionName, Store, StoreClosedError, StoreUnavailableError } from '../../src/store/store.ts';
import { FaultyFileSystem } from './fault-fs.ts';
import { contents, errorWithCode, freshDataDir, logBytes, logLines, logPath, openStore, put } from './helpers.ts';

test('fsync before ack: a write whose fsync fails is rejected, not in memory, and leaves no bytes in the log', async (t) => {
  const dataDir = freshDataDir(t);
  const fileSystem = new FaultyFileSystem();
  const { store } = await openStore(t, dataDir, { fileSystem });
  await store.write([put('items', 'kept', 'acknowledged before the fault')]);
  const changes: string[] = [];
  store.onChange(({ id }) => changes.push(id));
  const bytesBefore = logBytes(dataDir);

  fileSystem.inject({ operation: 'sync', error: errorWithCode('EIO', 'EIO: i/o error, fsync'), times: 1 });
  await assert.rejects(store.write([put('items', 'lost', 'never acknowledged')]), (error: unknown) => {
    assert.ok(error instanceof StoreUnavailableError);
    assert.match(error.message, /storage write failed: EIO/);
    return true;
  });
  assert.equal(store.get('items', 'lost'), undefined, 'not applied to memory');
  assert.deepEqual(changes, [], 'no change event for an unacknowledged write');
  assert.deepEqual(logBytes(dataDir), bytesBefore, 'the written-but-unsynced bytes were cut back');
  assert.equal(store.stats().writable, false);
  assert.match(store.stats().lastWriteError ?? '', /EIO/);

  // The fault has cleared: the next write goes through, and the store says so.
  await store.write([put('items', 'after', 'after the disk recovered')]);
  assert.equal(store.stats().writable, true);
  await store.close();
  const reopened = await openStore(t, dataDir);
  assert.deepEqual(
    contents(reopened.store, 'items').map((item) => item.id),
    ['after', 'kept'],
  );
  assert.deepEqual(reopened.warnings, []);
});

test('a full disk mid-write (ENOSPC after a partial write) is rejected, cut back, reads keep working, writes resume', async (t) => {
  const dataDir = freshDataDir(t);
  const fileSystem = new FaultyFileSystem();
  const { store } = await openStore(t, dataDir, { fileSystem });
  await store.write([put('items', 'a', 'alpha')]);
  const bytesBefore = logBytes(dataDir);

  fileSystem.inject({ operation: 'write', error: errorWithCode('ENOSPC', 'ENOSPC: no space left on device, write'), partialBytes: 17 });
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const results = await Promise.allSettled([store.write([put('items', `full-${attempt}`, 'x')]), store.write([put('items', 'a', 'alpha', 9)])]);
    for (const result of results) {
      assert.equal(result.status, 'rejected');
      assert.ok((result as PromiseRejectedResult).reason instanceof StoreUnavailableError);
    }
    // Reads work while writes fail.
    assert.deepEqual(store.get('items', 'a'), { id: 'a', name: 'alpha', version: 1 });
    assert.equal(store.size('items'), 1);
    assert.deepEqual(logBytes(dataDir), bytesBefore, `attempt ${attempt}: the partial record was cut back`);
  }
  fileSystem.clearFaults();
  await store.write([put('items', 'b', 'beta')]);
  await store.close();
  const reopened = await openStore(t, dataDir);
  assert.deepEqual(contents(reopened.store, 'items'), [
    { id: 'a', name: 'alpha', version: 1 },
    { id: 'b', name: 'beta', version: 1 },
  ]);
  assert.deepEqual(reopened.warnings, []);
});

test('when even the cut-back fails, the half record is cut before the next write, and a crash meanwhile drops it as torn', async (t) => {
  const dataDir = freshDataDir(t);
  const fileSystem = new FaultyFileSystem();
  const { store } = await openStore(t, dataDir, { fileSystem });
  await store.write([put('items', 'a', 'alpha')]);
  const goodLength = logBytes(dataDir).length;
  fileSystem.inject({ operation: 'write', error: errorWithCode('EIO'), partialBytes: 25, times: 1 });
  fileSystem.inject({ operation: 'truncate', error: errorWithCode('EIO'), times: 1 });
  await assert.rejects(store.write([put('items', 'half', 'half written')]), StoreUnavailableError);
  assert.equal(logBytes(dataDir).length, goodLength + 25, 'the half record is still there');

  // A crash now would find a torn tail, dropped at load.
  const { cpSync, mkdtempSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const image = mkdtempSync(join(tmpdir(), 'mkt-half-'));
  t.after(() => rmSync(image, { recursive: true, force: true }));
  cpSync(dataDir, image, { recursive: true });
  const fromImage = await openStore(t, image);
  assert.deepEqual(contents(fromImage.store, 'items'), [{ id: 'a', name: 'alpha', version: 1 }]);
  assert.match(fromImage.warnings.join('\n'), /Dropped an incomplete last record \(25 bytes/);

  // The running store cuts it before its next append.
  await store.write([put('items', 'b', 'beta')]);
  await store.close();
  const reopened = await openStore(t, dataDir);
  assert.deepEqual(contents(reopened.store, 'items').map((item) => item.id), ['a', 'b']);
  assert.deepEqual(reopened.warnings, []);
});

test('a read-only file system turns writes into StoreUnavailableError until it is writable again', async (t) => {
  const dataDir = freshDataDir(t);
  const fileSystem = new FaultyFileSystem();
  const { store } = await openStore(t, dataDir, { fileSystem });
  fileSystem.inject({ operation: 'write', error: errorWithCode('EROFS', 'EROFS: read-only file system, write') });
  await assert.rejects(store.write([put('items', 'a', 'alpha')]), /EROFS/);
  await assert.rejects(store.compact(), StoreUnavailableError);
  assert.equal(store.size('items'), 0);
  fileSystem.clearFaults();
  await store.write([put('items', 'a', 'alpha')]);
  assert.equal(store.size('items'), 1);
});

test('group commit: 200 concurrent writes share far fewer than 200 fsyncs, and all are durable', async (t) => {
  const dataDir = freshDataDir(t);
  const { store } = await openStore(t, dataDir);
  const writes = Array.from({ length: 200 }, (_, index) => store.write([put('items', `id-${index}`, `item ${index}`)]));
  await Promise.all(writes);
  const stats = store.stats();
  assert.equal(stats.writes, 200);
  assert.ok(stats.fsyncs! <= 10, `200 writes took ${stats.fsyncs} fsyncs`);
  assert.equal(stats.fsyncs!, stats.batches);
  await store.close();
  const reopened = await openStore(t, dataDir);
  assert.equal(reopened.store.size('items'), 200);
  assert.equal(logLines(dataDir).length, 201);
});

test('a write is acknowledged only once its fsync has finished', async (t) => {
  const dataDir = freshDataDir(t);
  const fileSystem = new FaultyFileSystem();
  const { store } = await openStore(t, dataDir, { fileSystem });
  // Holds the fsync open until the test lets it finish.
  let releaseSync: () => void = () => {};
  const syncGate = new Promise<void>((resolve) => {
    releaseSync = resolve;
  });
  const originalRun = fileSystem.run.bind(fileSystem);
  fileSystem.run = async (operation, path, perform, partial) => {
    if (operation === 'sync') await syncGate;
    return originalRun(operation, path, perform, partial);
  };
  let acknowledged = false;
  const pending = store.write([put('items', 'a', 'alpha')]).then(() => {
    acknowledged = true;
  });
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(acknowledged, false, 'not acknowledged while its fsync runs');
  assert.equal(store.get('items', 'a'), undefined, 'not visible before it is durable');
  releaseSync();
  await pending;
  assert.equal(acknowledged, true);
  assert.deepEqual(store.get('items', 'a'), { id: 'a', name: 'alpha', version: 1 });
});

test('data files and the lock are created with mode 0600, the data directory 0700', async (t) => {
  const parent = freshDataDir(t);
  const dataDir = join(parent, 'nested', 'data');
  const { store } = await openStore(t, dataDir, { compactAtOps: 1_000_000 });
  await store.write([put('items', 'a', 'alpha')]);
  assert.equal(statSync(logPath(dataDir)).mode & 0o777, 0o600);
  assert.equal(statSync(join(dataDir, 'LOCK')).mode & 0o777, 0o600);
  assert.equal(statSync(dataDir).mode & 0o777, 0o700);
  await store.compact();
  assert.equal(statSync(logPath(dataDir)).mode & 0o777, 0o600, 'the compacted log too');
});

test('close: queued writes finish, later writes are refused, the lock is released', async (t) => {
  const dataDir = freshDataDir(t);
  const store = await Store.open({ dataDir, warn: () => {} });
  const queued = [store.write([put('items', 'a', 'alpha')]), store.write([put('items', 'b', 'beta')])];
  const closing = store.close();
  await assert.rejects(store.write([put('items', 'c', 'gamma')]), StoreClosedError);
  await Promise.all(queued);
  await closing;
  await store.close(); // twice is harmless
  await assert.rejects(store.compact(), StoreClosedError);
  const reopened = await openStore(t, dataDir);
  assert.deepEqual(contents(reopened.store, 'items').map((item) => item.id), ['a', 'b']);
});

test('a failing change listener neither undoes nor stalls a durable write', async (t) => {
  const dataDir = freshDataDir(t);
  const { store, warnings } = await openStore(t, dataDir);
  store.onChange(() => {
    throw new Error('listener bug');
  });
  const seen: string[] = [];
  store.onChange(({ id }) => seen.push(id));
  await store.write([put('items', 'a', 'alpha')]);
  await store.write([put('items', 'b', 'beta')]);
  assert.deepEqual(seen, ['a', 'b']);
  assert.equal(store.size('items'), 2);
  assert.match(warnings.join('\n'), /listener failed on items\/a: listener bug/);
});

test('a put whose data id differs from its id is refused before it reaches the log', async (t) => {
  const dataDir = freshDataDir(t);
  const { store } = await openStore(t, dataDir);
  await assert.rejects(store.write([{ op: 'put', collection: 'items', id: 'a', data: { id: 'b' } }]), TypeError);
  assert.equal(logLines(dataDir).length, 1);
});

test('DATA_DIR=:memory: a backup is the store as it was when asked, even with writes right behind it', async () => {
  const store = await Store.open({ dataDir: null });
  const records = 5_000; // several encoding slices' worth
  await store.write(Array.from({ length: records }, (_, index) => put('items', `item-${index}`, 'before')));
  const snapshotting = store.snapshot();
  await store.write([put('items', 'item-0', 'after', 2), put('items', 'late', 'after')]);
  const lines = Buffer.concat(await snapshotting).toString('utf8').trim().split('\n');
  assert.equal(lines.length, 1 + records, 'the header and every record present when asked, nothing added later');
  assert.ok(!lines.some((line) => line.includes('"late"')), 'a record written after the request is not in it');
  assert.ok(!lines.some((line) => line.includes('"after"')), 'a record changed after the request is in it as it was');
  await store.close();
});

test('DATA_DIR=:memory: (dataDir null) keeps everything in memory and touches no disk', async () => {
  const store = await Store.open({ dataDir: null });
  await store.write([put('items', 'a', 'alpha')]);
  await store.write([put('items', 'a', 'alpha', 2), put('items', 'b', 'beta')]);
  assert.deepEqual(store.get('items', 'a'), { id: 'a', name: 'alpha', version: 2 });
  assert.deepEqual(await store.compact(), { bytesBefore: 0, bytesAfter: 0, records: 2 });
  const snapshot = Buffer.concat(await store.snapshot()).toString('utf8').trim().split('\n');
  assert.equal(snapshot.length, 3);
  assert.equal(store.stats().fsyncs, 0);
  await store.close();
  await assert.rejects(store.write([put('items', 'c', 'gamma')]), StoreClosedError);
});

test('onChangeOf hears one collection, typed, in the order of registration among all listeners', async () => {
  const store = await Store.open({ dataDir: null });
  const heard: string[] = [];
  const ITEMS = collectionName<{ id: string; name: string }>('items');
  store.onChange(({ collection, id }) => heard.push(`all:${collection}/${id}`));
  store.onChangeOf(ITEMS, ({ id, after }) => heard.push(`items:${id}=${after?.name}`));
  store.onChange(({ collection, id }) => heard.push(`all again:${collection}/${id}`));
  await store.write([{ op: 'put', collection: 'items', id: 'a', data: { id: 'a', name: 'first' } as { id: string } }]);
  await store.write([{ op: 'put', collection: 'others', id: 'b', data: { id: 'b' } }]);
  assert.deepEqual(heard, ['all:items/a', 'items:a=first', 'all again:items/a', 'all:others/b', 'all again:others/b']);
  await store.close();
});
