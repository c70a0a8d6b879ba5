// tx.afterCommit: what a decision hands over runs once its write is durable and applied, before
// the commit resolves; never when the write fails on the disk or is refused by decide; and once
// only when the decision was stopped by a stale read and made again.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { collectionName } from '../../src/store/collections.ts';
import { FaultyFileSystem } from './fault-fs.ts';
import { errorWithCode, freshDataDir, openStore, put, type Item } from './helpers.ts';

const ITEMS = collectionName<Item>('items');

test('afterCommit runs after the write is applied, not when it fails, and once when decided again', async (t) => {
  const fileSystem = new FaultyFileSystem();
  const { store } = await openStore(t, freshDataDir(t, 'after-commit'), { fileSystem });
  const ran: string[] = [];

  await store.commit((tx) => {
    tx.afterCommit(() => ran.push(`applied: ${store.get(ITEMS, 'a')?.name}`));
    return { ops: [put('items', 'a', 'first')], result: undefined };
  });
  assert.deepEqual(ran, ['applied: first'], 'ran before the commit resolved, with the write in memory');

  fileSystem.inject({ operation: 'write', error: errorWithCode('EIO', 'EIO: i/o error, write') });
  await assert.rejects(
    store.commit((tx) => {
      tx.afterCommit(() => ran.push('failed write'));
      return { ops: [put('items', 'a', 'lost')], result: undefined };
    }),
  );
  fileSystem.clearFaults();
  await assert.rejects(
    store.commit((tx) => {
      tx.afterCommit(() => ran.push('refused'));
      throw new Error('refused by decide');
    }),
  );
  assert.deepEqual(ran, ['applied: first'], 'nothing ran for a write that did not land');

  // Two writes in one batch (queued while a first one is written); the second reads what the
  // first changes, so it is decided twice.
  let decisions = 0;
  await Promise.all([
    store.write([put('items', 'c', 'holds the queue')]),
    store.commit(() => ({ ops: [put('items', 'a', 'second')], result: undefined })),
    store.commit((tx) => {
      decisions += 1;
      tx.afterCommit(() => ran.push(`after reading ${tx.get(ITEMS, 'a')?.name}`));
      const current = tx.get(ITEMS, 'a');
      return { ops: [put('items', 'b', `saw ${current?.name}`)], result: undefined };
    }),
  ]);
  assert.equal(decisions, 2, 'the second write was decided again');
  assert.deepEqual(ran, ['applied: first', 'after reading second'], 'its action ran once, from the decision that landed');
});
