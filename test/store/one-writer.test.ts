// The single-server path needs nothing of the many-instance seam (InstanceSync): a store over the
// file log alone, given no such object, decides concurrent writes on the current state,
// compacts beside them, finds a record's earlier versions, is never stale and loads back every
// acknowledged write; and the deployment chosen without DATABASE_URL hands the store none.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openBackends } from '../../src/backends/open-backends.ts';
import { systemClock } from '../../src/clock.ts';
import { loadConfig } from '../../src/config.ts';
import { FileLog } from '../../src/store/file-log.ts';
import { nodeFileSystem } from '../../src/store/files.ts';
import { collectionName, Store, type StoredRecord } from '../../src/store/store.ts';
import { freshDataDir } from './helpers.ts';

interface Counter extends StoredRecord {
  count: number;
}
const COUNTERS = collectionName<Counter>('counters');

/** One write that adds 1 to the counter as it is when the write is decided. */
function increment(store: Store): Promise<number> {
  return store.commit((tx) => {
    const count = (tx.get(COUNTERS, 'hits')?.count ?? 0) + 1;
    return { ops: [{ op: 'put', collection: COUNTERS, id: 'hits', data: { id: 'hits', count } }], result: count };
  });
}

async function openOverFileLog(dataDir: string): Promise<Store> {
  const log = await FileLog.open({ dataDir, warn: () => {}, now: Date.now });
  // No instanceSync: the store is the log's one writer.
  return Store.open({ dataDir, log, warn: (message) => assert.fail(`unexpected warning: ${message}`) });
}

test('a store over the file log with no InstanceSync at all decides, compacts, searches and reloads every acknowledged write', async (t) => {
  const dataDir = freshDataDir(t, 'one-writer');
  const store = await openOverFileLog(dataDir);
  t.after(() => store.close().catch(() => {}));

  // 200 writes in flight at once, each decided on the state the ones before it left.
  const counts = await Promise.all(Array.from({ length: 200 }, () => increment(store)));
  assert.deepEqual(
    [...counts].sort((a, b) => a - b),
    Array.from({ length: 200 }, (_, index) => index + 1),
  );
  assert.equal(store.ensureFresh(), null);
  assert.deepEqual(store.problems(), []);

  // Every value the counter held is still in the log, oldest first.
  const earlier = await store.earlierVersions(COUNTERS, 'hits');
  assert.deepEqual(
    earlier.map((record) => record.count),
    Array.from({ length: 200 }, (_, index) => index + 1),
  );

  // A compaction with 100 more writes in flight beside it: all acknowledged, the superseded ones dropped.
  const [summary, more] = await Promise.all([store.compact(), Promise.all(Array.from({ length: 100 }, () => increment(store)))]);
  assert.equal(summary.records, 1);
  assert.equal(Math.max(...more), 300);
  assert.ok(summary.bytesAfter < summary.bytesBefore, `the compacted log (${summary.bytesAfter} bytes) is smaller than before (${summary.bytesBefore})`);
  const afterCompaction = (await store.earlierVersions(COUNTERS, 'hits')).map((record) => record.count);
  assert.equal(afterCompaction.at(-1), 300);
  assert.ok(afterCompaction.length < 200, `the compaction dropped superseded versions (${afterCompaction.length} left)`);
  assert.equal(store.stats().writable, true);
  await store.close();

  const reopened = await openOverFileLog(dataDir);
  t.after(() => reopened.close().catch(() => {}));
  assert.equal(reopened.get(COUNTERS, 'hits')?.count, 300);
  assert.equal(await increment(reopened), 301);
});

test('without DATABASE_URL the back-ends give the store no InstanceSync (file log and memory only)', async (t) => {
  for (const dataDir of [freshDataDir(t, 'one-writer-backends'), ':memory:']) {
    const config = loadConfig({ DATA_DIR: dataDir });
    const backends = await openBackends(config, { clock: systemClock, fileSystem: nodeFileSystem, warn: () => {}, webhookSendTimeoutMs: 1_000 });
    try {
      assert.equal(backends.instanceSync, null, `DATA_DIR=${dataDir}`);
    } finally {
      backends.closeLimiters();
      await backends.log.close();
    }
  }
});

test('the memory-only log compacts by taking its turn after the writes queued before it, and keeps no earlier versions', async () => {
  const store = await Store.open({ dataDir: null, warn: (message) => assert.fail(`unexpected warning: ${message}`) });
  try {
    const writes = Promise.all(Array.from({ length: 50 }, () => increment(store)));
    const summary = await store.compact();
    // Queued before the compaction, every one of them was applied by the time it ended.
    assert.equal(store.get(COUNTERS, 'hits')?.count, 50);
    assert.deepEqual(summary, { bytesBefore: 0, bytesAfter: 0, records: 1 });
    await writes;
    assert.deepEqual(await store.earlierVersions(COUNTERS, 'hits'), []);
  } finally {
    await store.close();
  }
});
