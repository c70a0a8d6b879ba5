// Compaction beside live traffic, seen from a client: while a compaction is held mid-way (a
// test hook of the store), `POST /v1/listings` is answered 201 and reads go on; once the
// compaction ends, a restarted server holds every listing acknowledged during it.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { eventually } from '../helpers/eventually.ts';
import { startServer, temporaryDir, type TestResponse } from '../helpers/server.ts';
import { holdCompaction } from './helpers.ts';

test('POST /v1/listings during a held compaction → 201 while it is held, and the listing is there after compaction and restart', { timeout: 120_000 }, async (t) => {
  const dataDir = temporaryDir(t);
  const snapshotHold = holdCompaction('afterSnapshot');
  // Released before the server closes (after-hooks run in the order they were added).
  t.after(snapshotHold.release);
  const first = await startServer(t, { dataDir, compactionHooks: snapshotHold.hooks });
  const owner = await first.userWithKey('creator', ['read:listings', 'write:listings']);
  // Some history for the compaction to drop: listings made, then each updated.
  const before: TestResponse[] = await Promise.all(
    Array.from({ length: 30 }, (_, index) => first.request('POST', '/v1/listings', { key: owner.key, body: { title: `before ${index}`, type: 'TOOL', price: index } })),
  );
  assert.ok(before.every((answer) => answer.status === 201));
  await Promise.all(before.map((answer) => first.request('PUT', `/v1/listings/${answer.body.data.id}`, { key: owner.key, body: { price: 100 } })));

  let compactionAnswer: TestResponse | null = null;
  const compaction = first.admin('POST', '/admin/v1/compact').then((answer) => {
    compactionAnswer = answer;
  });
  await snapshotHold.reached;

  // Many writes and reads at once, all while the compaction stays held.
  const writes = Array.from({ length: 20 }, (_, index) =>
    first.request('POST', '/v1/listings', { key: owner.key, body: { title: `during ${index}`, type: 'AGENT', price: 1000 + index } }),
  );
  const reads = before.slice(0, 10).map((answer) => first.request('GET', `/v1/listings/${answer.body.data.id}`, { key: owner.key }));
  let answered = 0;
  for (const write of writes) void write.then(() => (answered += 1), () => {});
  await eventually(async () => answered === writes.length, 20_000, 'every POST /v1/listings answered while the compaction is held');
  assert.equal(snapshotHold.held(), true, 'the compaction is still held');
  assert.equal(compactionAnswer, null, 'the compaction has not answered yet');
  const during = await Promise.all(writes);
  assert.deepEqual(during.map((answer) => answer.status), during.map(() => 201));
  assert.deepEqual((await Promise.all(reads)).map((answer) => [answer.status, answer.body.data.price]), before.slice(0, 10).map(() => [200, 100]));

  snapshotHold.release();
  await compaction;
  assert.equal(compactionAnswer!.status, 200);
  const stats = await first.admin('GET', '/admin/v1/stats');
  assert.equal(stats.body.data.store.compactions, 1);
  await first.close();

  const second = await startServer(t, { dataDir });
  for (const answer of [...before, ...during]) {
    const { id } = answer.body.data;
    const read = await second.request('GET', `/v1/listings/${id}`, { key: owner.key });
    assert.equal(read.status, 200, `listing ${id} survived`);
    assert.equal(read.body.data.title, answer.body.data.title);
  }
  assert.equal((await second.request('GET', `/v1/listings/${before[0]!.body.data.id}`, { key: owner.key })).body.data.price, 100);
});
