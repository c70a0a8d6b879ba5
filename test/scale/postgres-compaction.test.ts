// Compaction of the PostgreSQL back-end starts by itself on the same rule as the file's: once
// the table holds enough, and the removals old enough to drop outnumber the live records. Young
// removals are kept (instances briefly cut off still learn of them), so it does not compact
// again and again while they wait; and an instance following another's compaction carries on.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import { PostgresLog } from '../../src/backends/postgres/postgres-log.ts';
import { Store } from '../../src/store/store.ts';
import { eventually } from '../helpers/eventually.ts';
import { put, THINGS } from '../helpers/numbered-things.ts';
import { postgresAndRedisForFile, skipUnlessServices, sleep } from '../helpers/services.ts';

const skip = skipUnlessServices('postgresBin');
const services = postgresAndRedisForFile(skip);
/**
 * How long removals are kept. The steps that must see them young (a handful of writes and one
 * query) must finish within it even on a busy machine: 300 ms did not, under load.
 */
const KEEP_MS = 5_000;

async function openStore(url: string): Promise<Store> {
  const log = await PostgresLog.open({ url, warn: () => {}, tombstoneRetentionMs: KEEP_MS });
  return Store.open({ dataDir: null, log, instanceSync: log, compactAtOps: 40, warn: () => {} });
}

async function tombstones(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return Number((await client.query('SELECT count(*) AS n FROM marketplace_records WHERE data IS NULL')).rows[0].n);
  } finally {
    await client.end();
  }
}

test('removals outnumbering the live records are dropped by an automatic compaction once old enough', { skip, timeout: 180_000 }, async (t) => {
  const url = services.postgres.createDatabase(`compaction_${process.pid}`);
  const writer = await openStore(url);
  const follower = await openStore(url);
  t.after(() => Promise.all([writer.close(), follower.close()]));

  const ids = Array.from({ length: 60 }, (_unused, index) => `thing_${index}`);
  await writer.write(ids.map((id, n) => put(id, n)));
  await writer.write(ids.slice(5).map((id) => ({ op: 'del', collection: THINGS, id })));
  assert.equal(await tombstones(url), 55);
  assert.equal(writer.stats().opsInLog, 5 + 55, 'the live records and the removals kept');

  // Young removals must be kept: writes meanwhile do not compact (nor try to, again and again).
  for (let index = 0; index < 5; index += 1) await writer.write([put('thing_0', 100 + index)]);
  assert.equal(writer.stats().compactions, 0);
  assert.equal(await tombstones(url), 55);

  // Once they are old enough (the count rounds to the second), the next write compacts.
  await sleep(KEEP_MS + 1_500);
  await writer.write([put('thing_1', 200)]);
  await eventually(async () => writer.stats().compactions > 0, 60_000, 'the automatic compaction');
  assert.equal(writer.stats().compactions, 1, 'compacted by itself');
  assert.equal(await tombstones(url), 0, 'the removals are gone from the table');
  assert.equal(writer.stats().opsInLog, 5);

  // Only once: later writes with nothing to drop do not compact again.
  for (let index = 0; index < 5; index += 1) await writer.write([put('thing_2', 300 + index)]);
  assert.equal(writer.stats().compactions, 1);

  // The follower saw every removal before they were dropped, and keeps writing.
  await follower.write([put('thing_99', 99)]);
  await eventually(async () => writer.size(THINGS) === 6, 60_000, "the follower's write on the writer");
  // A blind write does not pull first; a request would catch up before reading, as here.
  await writer.ensureFresh();
  await follower.ensureFresh();
  const contents = (store: Store) => [...store.values(THINGS)].map((thing) => `${thing.id}=${thing.n}`).sort();
  assert.deepEqual(contents(follower), contents(writer));
  assert.deepEqual(contents(writer), ['thing_0=104', 'thing_1=200', 'thing_2=304', 'thing_3=3', 'thing_4=4', 'thing_99=99']);
});
