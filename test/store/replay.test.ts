// Loading the log: the last line for an id wins, deletions are tombstones, batches land whole,
// a torn last line is dropped with a warning, and damage or a newer format stops the start.

import assert from 'node:assert/strict';
import { appendFileSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { test } from 'node:test';
import { LOG_VERSION } from '../../src/store/format.ts';
import { LogDamagedError, LogVersionError, Store } from '../../src/store/store.ts';
import { contents, del, freshDataDir, logBytes, logLines, logPath, openStore, put } from './helpers.ts';

test('replay: overwrites, tombstones and batches give the last acknowledged state', async (t) => {
  const dataDir = freshDataDir(t);
  const first = await openStore(t, dataDir);
  await first.store.write([put('items', 'a', 'alpha', 1)]);
  await first.store.write([put('items', 'a', 'alpha', 2)]);
  await first.store.write([put('items', 'b', 'beta')]);
  await first.store.write([del('items', 'b')]);
  await first.store.write([del('items', 'never-existed')]);
  await first.store.write([put('items', 'c', 'gamma'), del('items', 'a'), put('other', 'd', 'delta'), put('items', 'c', 'gamma', 3)]);
  await first.store.write([put('items', 'b', 'beta again', 5)]);
  const before = { items: contents(first.store, 'items'), other: contents(first.store, 'other') };
  await first.store.close();

  // One line per write (the batch is one line), appended after the header.
  assert.equal(logLines(dataDir).length, 1 + 7);
  const second = await openStore(t, dataDir);
  assert.deepEqual(contents(second.store, 'items'), [
    { id: 'b', name: 'beta again', version: 5 },
    { id: 'c', name: 'gamma', version: 3 },
  ]);
  assert.deepEqual(contents(second.store, 'other'), [{ id: 'd', name: 'delta', version: 1 }]);
  assert.deepEqual({ items: contents(second.store, 'items'), other: contents(second.store, 'other') }, before);
  assert.equal(second.store.get('items', 'a'), undefined);
  assert.deepEqual(second.warnings, []);
  assert.equal(second.store.stats().opsInLog, 10);
});

test('torn tail: the log cut at every byte of its last record loads every earlier record, and takes new writes', async (t) => {
  const dataDir = freshDataDir(t);
  const setup = await openStore(t, dataDir);
  for (let index = 0; index < 5; index += 1) await setup.store.write([put('items', `id-${index}`, `item ${index}`)]);
  await setup.store.write([put('items', 'id-0', 'item 0, renamed', 2), put('items', 'last', 'the last record é✓')]);
  await setup.store.close();
  const whole = logBytes(dataDir);
  const lastRecordStart = whole.lastIndexOf('\n', whole.length - 2) + 1;
  const expectedEarlier = [
    { id: 'id-0', name: 'item 0', version: 1 },
    ...[1, 2, 3, 4].map((index) => ({ id: `id-${index}`, name: `item ${index}`, version: 1 })),
  ];

  // Every cut from "the record's first byte missing" to "only its newline missing".
  for (let cut = lastRecordStart; cut < whole.length; cut += 1) {
    writeFileSync(logPath(dataDir), whole.subarray(0, cut));
    const warnings: string[] = [];
    const store = await Store.open({ dataDir, warn: (message) => warnings.push(message) });
    try {
      assert.deepEqual(contents(store, 'items'), expectedEarlier, `cut at byte ${cut}`);
      const tornBytes = cut - lastRecordStart;
      if (tornBytes === 0) assert.deepEqual(warnings, [], `cut at byte ${cut}: nothing torn`);
      else assert.match(warnings.join('\n'), new RegExp(`Dropped an incomplete last record \\(${tornBytes} bytes at byte offset ${lastRecordStart}\\)`));
      // Loading leaves the torn bytes alone; the next write replaces them.
      assert.equal(statSync(logPath(dataDir)).size, cut);
      await store.write([put('items', 'after-crash', `written after a cut at ${cut}`)]);
    } finally {
      await store.close();
    }
    const reopened = await Store.open({ dataDir, warn: (message) => assert.fail(`unexpected warning after the cut at ${cut}: ${message}`) });
    try {
      assert.deepEqual(contents(reopened, 'items'), [
        { id: 'after-crash', name: `written after a cut at ${cut}`, version: 1 },
        ...expectedEarlier,
      ]);
    } finally {
      await reopened.close();
    }
  }
});

test('a damaged line in the middle stops the start with its line number, byte offset and the repair command', async (t) => {
  const dataDir = freshDataDir(t);
  const setup = await openStore(t, dataDir);
  for (let index = 0; index < 5; index += 1) await setup.store.write([put('items', `id-${index}`, `item ${index}`)]);
  await setup.store.close();
  const lines = logLines(dataDir);
  const offsetOfLine3 = Buffer.byteLength(lines[0]! + '\n' + lines[1]! + '\n');
  const cases: Array<{ name: string; damaged: string; reason: RegExp }> = [
    { name: 'not JSON', damaged: lines[2]!.slice(0, 1) + '#' + lines[2]!.slice(2), reason: /not valid JSON/ },
    { name: 'a record whose data id differs', damaged: lines[2]!.replace('"d":{"id":"id-1"', '"d":{"id":"id-9"'), reason: /unknown operation or data/ },
    { name: 'an unknown operation', damaged: '{"op":"upsert","c":"items","id":"id-1","d":{"id":"id-1"}}', reason: /unknown operation/ },
    { name: 'an empty line', damaged: '', reason: /not valid JSON/ },
  ];
  for (const { name, damaged, reason } of cases) {
    await t.test(name, async () => {
      const text = [...lines.slice(0, 2), damaged, ...lines.slice(3)].join('\n') + '\n';
      writeFileSync(logPath(dataDir), text);
      const before = readFileSync(logPath(dataDir));
      await assert.rejects(Store.open({ dataDir, warn: () => {} }), (error: unknown) => {
        assert.ok(error instanceof LogDamagedError, name);
        assert.equal(error.lineNumber, 3, name);
        assert.equal(error.byteOffset, offsetOfLine3, name);
        assert.match(error.message, /damaged at line 3 \(byte offset \d+\)/);
        assert.match(error.message, reason);
        assert.ok(error.message.includes(`npm run cli -- repair --data-dir ${dataDir}`), error.message);
        return true;
      });
      assert.deepEqual(readFileSync(logPath(dataDir)), before, `${name}: the refused log is unchanged`);
    });
  }
  // The lock was released: a good log opens again at once.
  writeFileSync(logPath(dataDir), lines.join('\n') + '\n');
  const reopened = await openStore(t, dataDir);
  assert.equal(reopened.store.size('items'), 5);
});

test('a complete but damaged last line is damage, not a torn write: the start is refused', async (t) => {
  const dataDir = freshDataDir(t);
  const setup = await openStore(t, dataDir);
  await setup.store.write([put('items', 'a', 'alpha')]);
  await setup.store.close();
  appendFileSync(logPath(dataDir), '{"op":"put","c":"items"\n');
  await assert.rejects(Store.open({ dataDir, warn: () => {} }), (error: unknown) => error instanceof LogDamagedError && error.lineNumber === 3);
});

test('a log from a newer release is refused with a clear message and left unchanged', async (t) => {
  const dataDir = freshDataDir(t);
  const newer = LOG_VERSION + 1;
  writeFileSync(
    logPath(dataDir),
    `{"format":"marketplace-api-log","version":${newer},"created_at":"2030-01-01T00:00:00.000Z"}\n{"op":"put2","anything":"new"}\n`,
  );
  const before = readFileSync(logPath(dataDir));
  await assert.rejects(Store.open({ dataDir, warn: () => {} }), (error: unknown) => {
    assert.ok(error instanceof LogVersionError);
    assert.equal(error.version, newer);
    assert.match(error.message, new RegExp(`format version ${newer}, newer than this release understands \\(version ${LOG_VERSION}\\)`));
    assert.match(error.message, /left unchanged/);
    assert.doesNotMatch(error.message, /repair/, 'a newer log is not damaged: no repair advice');
    return true;
  });
  assert.deepEqual(readFileSync(logPath(dataDir)), before);
});

test('a file that is not a log (no header) is refused at line 1', async (t) => {
  const dataDir = freshDataDir(t);
  writeFileSync(logPath(dataDir), 'hello, I am not a log\n');
  await assert.rejects(Store.open({ dataDir, warn: () => {} }), (error: unknown) => error instanceof LogDamagedError && error.lineNumber === 1);
  writeFileSync(logPath(dataDir), '');
  await assert.rejects(Store.open({ dataDir, warn: () => {} }), /header line is missing/);
});

test('loading never writes to the log, even with a torn tail to drop', async (t) => {
  const dataDir = freshDataDir(t);
  const setup = await openStore(t, dataDir);
  await setup.store.write([put('items', 'a', 'alpha'), put('items', 'b', 'beta')]);
  await setup.store.write([put('items', 'a', 'alpha', 2)]);
  await setup.store.close();
  appendFileSync(logPath(dataDir), '{"op":"put","c":"items","id":"torn"');
  const bytesBefore = logBytes(dataDir);
  const old = new Date(Date.UTC(2020, 0, 1));
  const { utimesSync } = await import('node:fs');
  utimesSync(logPath(dataDir), old, old);
  const mtimeBefore = statSync(logPath(dataDir)).mtimeMs;

  for (let round = 0; round < 3; round += 1) {
    const store = await Store.open({ dataDir, warn: () => {} });
    assert.equal(store.size('items'), 2);
    store.get('items', 'a');
    await store.snapshot();
    await store.close();
  }
  assert.deepEqual(logBytes(dataDir), bytesBefore);
  assert.equal(statSync(logPath(dataDir)).mtimeMs, mtimeBefore);
});
