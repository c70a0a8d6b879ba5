// Compaction beside live writes, at the store: writes are acknowledged in every phase but the
// switch; records changed, deleted or deleted and put again while the records are written come
// back exactly as last acknowledged; and a crash at each file step of a compaction that carries
// writes over leaves every acknowledged write (as a killed process and as a power cut leave it).

import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { test, type TestContext } from 'node:test';
import { nodeFileSystem, type FileSystem, type LogHandle } from '../../src/store/files.ts';
import type { CompactionHooks } from '../../src/store/store.ts';
import { CRASH_CODE, FaultyFileSystem, type CrashImages } from './fault-fs.ts';
import { contents, del, freshDataDir, holdCompaction, logLines, openStore, put, type Item } from './helpers.ts';

type Phase = keyof CompactionHooks;
const PHASES_BESIDE_WRITES: Phase[] = ['afterSnapshot', 'writingRecords', 'carryingWrites'];

async function reopened(t: TestContext, dataDir: string): Promise<Item[]> {
  const { store, warnings } = await openStore(t, dataDir);
  const items = contents(store, 'items');
  await store.close();
  // A crash leaves a temp file (discarded at start) or a torn last line (dropped): nothing else.
  assert.deepEqual(warnings.filter((warning) => !/^(Discarded .*compact\.tmp|Dropped an incomplete last record)/.test(warning)), []);
  return items;
}

/** Records enough for the compaction to write several slices (and so pass `writingRecords`). */
async function seed(store: Awaited<ReturnType<typeof openStore>>['store'], count: number): Promise<void> {
  for (let start = 0; start < count; start += 500) {
    await Promise.all(Array.from({ length: Math.min(500, count - start) }, (_, offset) => store.write([put('items', `id-${start + offset}`, `item ${start + offset}`)])));
  }
  // Supersede every one, so the compaction has something to drop.
  for (let start = 0; start < count; start += 500) {
    await Promise.all(Array.from({ length: Math.min(500, count - start) }, (_, offset) => store.write([put('items', `id-${start + offset}`, `item ${start + offset}`, 2)])));
  }
}

/** A store in a fresh dir, holding `records` superseded once, whose compactions stop once at `phase`. */
async function storeHeldAt(t: TestContext, phase: Phase, records: number) {
  const dataDir = freshDataDir(t);
  const hold = holdCompaction(phase);
  // Released before the store closes (after-hooks run in the order they were added).
  t.after(hold.release);
  const { store } = await openStore(t, dataDir, { compactAtOps: 1_000_000, compactionHooks: hold.hooks });
  await seed(store, records);
  return { dataDir, hold, store };
}

for (const phase of PHASES_BESIDE_WRITES) {
  test(`held at ${phase}: writes are acknowledged meanwhile, and the compacted log holds exactly the acknowledged state`, async (t) => {
    const { dataDir, hold, store } = await storeHeldAt(t, phase, 3_000);
    const compaction = store.compact();
    await hold.reached;
    // Changes of records written before, at and after the compaction's place in the file: a
    // change, a deletion, a deletion then a put again (the iterator may meet it twice), new ones.
    await Promise.all([
      ...Array.from({ length: 100 }, (_, index) => store.write([put('items', `id-${index * 30}`, 'changed during', 3)])),
      ...Array.from({ length: 50 }, (_, index) => store.write([del('items', `id-${index * 30 + 1}`)])),
      ...Array.from({ length: 20 }, (_, index) => store.write([put('items', `new-${index}`, 'new during')])),
    ]);
    await Promise.all(Array.from({ length: 50 }, (_, index) => store.write([del('items', `id-${index * 30 + 2}`)])));
    await Promise.all(Array.from({ length: 50 }, (_, index) => store.write([put('items', `id-${index * 30 + 2}`, 'put again', 4)])));
    let done = false;
    void compaction.then(() => (done = true));
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(done, false, 'every write was acknowledged while the compaction was held');
    hold.release();
    const result = await compaction;
    const expected = contents(store, 'items');
    assert.equal(expected.length, 3_000 - 50 + 20);
    assert.equal(result.records, expected.length);
    // After the switch appends go to the new log.
    await store.write([put('items', 'after', 'after')]);
    expected.push({ id: 'after', name: 'after', version: 1 });
    expected.sort((left, right) => left.id.localeCompare(right.id));
    assert.equal(store.stats().compactions, 1);
    assert.ok(logLines(dataDir).length < 3_000 + 400, `the log holds ${logLines(dataDir).length} lines: the superseded ones are gone`);
    await store.close();
    assert.deepEqual(await reopened(t, dataDir), expected);
  });
}

test('writes sent during the switch wait for it (it is short) and go to the new log', async (t) => {
  const { dataDir, hold, store } = await storeHeldAt(t, 'beforeRename', 200);
  const compaction = store.compact();
  await hold.reached;
  let acknowledged = false;
  const write = store.write([put('items', 'during-switch', 'x')]).then(() => (acknowledged = true));
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(acknowledged, false);
  hold.release();
  await Promise.all([compaction, write]);
  assert.equal(logLines(dataDir).at(-1)!.includes('during-switch'), true, 'written after the switch, to the new log');
  const expected = contents(store, 'items');
  await store.close();
  assert.deepEqual(await reopened(t, dataDir), expected);
});

/**
 * The file system, but once `holdCloses()` is called the close of a file opened (not created:
 * the log, not a compaction's new file) waits until the returned release is called, as closing
 * the last handle of a replaced log of gigabytes waits while the kernel frees its blocks
 * (hundreds of milliseconds on ext4).
 */
function slowClosingFileSystem() {
  let gate: Promise<void> | null = null;
  let closeAsked = (): void => {};
  const wrap = (handle: LogHandle, holdable: boolean): LogHandle => ({
    write: (data, position) => handle.write(data, position),
    sync: () => handle.sync(),
    truncate: (length) => handle.truncate(length),
    close: async () => {
      if (gate !== null && holdable) {
        closeAsked();
        await gate;
      }
      await handle.close();
    },
  });
  const fileSystem: FileSystem = {
    ...nodeFileSystem,
    open: async (path) => wrap(await nodeFileSystem.open(path), true),
    create: async (path) => wrap(await nodeFileSystem.create(path), false),
  };
  function holdCloses(): { asked: Promise<void>; release: () => void } {
    let release = (): void => {};
    gate = new Promise((resolve) => (release = resolve));
    const asked = new Promise<void>((resolve) => (closeAsked = resolve));
    return { asked, release: () => ((gate = null), release()) };
  }
  return { fileSystem, holdCloses };
}

test('the old log closing after a switch holds no write: the compaction ends and writes are acknowledged meanwhile', async (t) => {
  const dataDir = freshDataDir(t);
  const { fileSystem, holdCloses } = slowClosingFileSystem();
  const { store } = await openStore(t, dataDir, { fileSystem, compactAtOps: 1_000_000 });
  for (let index = 0; index < 200; index += 1) await store.write([put('items', `id-${index}`, 'first', 1)]);
  for (let index = 0; index < 200; index += 1) await store.write([put('items', `id-${index}`, 'second', 2)]);
  const closes = holdCloses();
  t.after(closes.release);
  const compaction = store.compact();
  await closes.asked;
  // The old log's handle, replaced by the compaction's file, is closing.
  const acknowledged = Promise.all([compaction, store.write([put('items', 'while-closing', 'x')])]);
  let giveUp: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([
    acknowledged.then(() => 'acknowledged'),
    new Promise((resolve) => (giveUp = setTimeout(resolve, 20_000, 'still held after 20 s'))),
  ]);
  clearTimeout(giveUp);
  assert.equal(outcome, 'acknowledged');
  closes.release();
  const expected = contents(store, 'items');
  assert.equal(expected.length, 201);
  await store.close();
  assert.deepEqual(await reopened(t, dataDir), expected);
});

test('compactions asked for while one runs take turns: the later one starts after it, shared by every call meanwhile', async (t) => {
  // Holds the first compaction only.
  const { dataDir, hold, store } = await storeHeldAt(t, 'afterSnapshot', 100);
  const first = store.compact();
  await hold.reached;
  // Superseded after the first one's snapshot point: only a later compaction can drop it.
  await store.write([put('items', 'secret', 'personal data')]);
  await store.write([put('items', 'secret', 'erased', 2)]);
  const second = store.compact();
  const third = store.compact();
  assert.equal(second, third);
  hold.release();
  await Promise.all([first, second]);
  assert.equal(store.stats().compactions, 2);
  assert.ok(!logLines(dataDir).some((line) => line.includes('personal data')), 'the later compaction dropped the superseded line');
});

test('closing the store during a compaction stops it; the log stays whole and no temp file remains', async (t) => {
  const { dataDir, hold, store } = await storeHeldAt(t, 'writingRecords', 3_000);
  const expected = contents(store, 'items');
  const compaction = store.compact().then(
    () => 'compacted',
    (error: Error) => error.name,
  );
  await hold.reached;
  const closed = store.close();
  hold.release();
  await closed;
  assert.equal(await compaction, 'StoreClosedError');
  assert.deepEqual(readdirSync(dataDir).filter((name) => name.endsWith('.tmp')), []);
  assert.deepEqual(await reopened(t, dataDir), expected);
});

test('a crash at each file step of a compaction carrying writes over leaves every acknowledged write', async (t) => {
  /** A compaction with writes acknowledged while its records are written; returns its file calls. */
  const run = async (fileSystem: FaultyFileSystem, dataDir: string, crashAt: { index: number; phase: 'before' | 'after'; onCrash: (images: CrashImages) => void } | null) => {
    const acknowledged: Item[] = [];
    let startCalls = 0;
    const hooks: CompactionHooks = {
      writingRecords: async () => {
        await Promise.all(
          Array.from({ length: 20 }, (_, index) => {
            const item: Item = { id: `during-${index}`, name: 'during', version: 1 };
            return store.write([put('items', item.id, item.name)]).then(
              () => void acknowledged.push(item),
              () => {},
            );
          }),
        );
      },
    };
    const { store } = await openStore(t, dataDir, { fileSystem, compactAtOps: 1_000_000, compactionHooks: hooks });
    await seed(store, 1_500);
    const before = contents(store, 'items');
    startCalls = fileSystem.calls.length;
    if (crashAt !== null) fileSystem.crashAtCall(crashAt.index, crashAt.phase, crashAt.onCrash);
    await store.compact().catch((error: Error) => assert.equal((error.cause as NodeJS.ErrnoException | undefined)?.code, CRASH_CODE));
    const calls = fileSystem.calls.slice(startCalls);
    await store.close().catch(() => {});
    return { before, acknowledged, calls };
  };
  const clean = await run(new FaultyFileSystem(), freshDataDir(t), null);
  const steps = clean.calls;
  assert.ok(steps.filter((call) => call.operation === 'write' && call.path.endsWith('.compact.tmp')).length >= 3, 'records and carried writes went to the new file');
  for (let index = 0; index < steps.length; index += 1) {
    for (const phase of ['before', 'after'] as const) {
      const label = `crash ${phase} ${steps[index]!.operation} ${steps[index]!.path.split('/').at(-1)} (step ${index + 1})`;
      await t.test(label, async () => {
        const fileSystem = new FaultyFileSystem();
        t.after(() => fileSystem.cleanUp());
        let images: CrashImages | null = null;
        const outcome = await run(fileSystem, freshDataDir(t), { index, phase, onCrash: (taken) => (images = taken) });
        assert.ok(images, `${label}: the crash happened`);
        for (const [kind, dir] of Object.entries(images as CrashImages)) {
          const loaded = new Map((await reopened(t, dir)).map((item) => [item.id, item]));
          for (const item of outcome.before) assert.deepEqual(loaded.get(item.id), item, `${label}, ${kind}: ${item.id}`);
          for (const item of outcome.acknowledged) assert.deepEqual(loaded.get(item.id), item, `${label}, ${kind}: acknowledged ${item.id}`);
        }
      });
    }
  }
});
