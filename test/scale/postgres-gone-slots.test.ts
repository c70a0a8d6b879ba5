// Each instance writes a slot of its own in the PostgreSQL log, and every start makes a new one.
// So that their number (and the per-slot vector each commit and each /v1 answer's watermark
// carry) does not grow with every restart, the slots of instances gone for an hour are
// forgotten. Their records stay: every running instance has long applied them, a new one loads
// them, and a commit treats them as old.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import { PostgresLog } from '../../src/backends/postgres/postgres-log.ts';
import { Store } from '../../src/store/store.ts';
import { eventually } from '../helpers/eventually.ts';
import { put, THINGS } from '../helpers/numbered-things.ts';
import { postgresAndRedisForFile, skipUnlessServices } from '../helpers/services.ts';

const skip = skipUnlessServices('postgresBin');
const services = postgresAndRedisForFile(skip);

async function openStore(url: string): Promise<{ store: Store; log: PostgresLog }> {
  const log = await PostgresLog.open({ url, warn: () => {} });
  return { store: await Store.open({ dataDir: null, log, instanceSync: log, warn: () => {} }), log };
}

async function query<T extends pg.QueryResultRow>(url: string, sql: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql, values)).rows;
  } finally {
    await client.end();
  }
}

test("the slots of instances gone for an hour are forgotten; their records stay, and count as old", { skip, timeout: 120_000 }, async (t) => {
  const url = services.postgres.createDatabase(`gone_slots_${process.pid}`);
  // An instance that wrote and stopped cleanly (its instance row deleted) two hours ago…
  const gone = await openStore(url);
  await gone.store.write([put('thing_1', 1)]);
  await gone.store.close();
  // …and one running for as long, still saying so.
  const running = await openStore(url);
  t.after(() => running.store.close());
  await running.store.write([put('thing_2', 2)]);
  await eventually(async () => (await query(url, 'SELECT 1 FROM marketplace_instances WHERE id = $1', [running.log.slot])).length === 1, 60_000, 'the running instance says it runs');
  await query(url, "UPDATE marketplace_log_slots SET created_at = now() - interval '2 hours' WHERE id = ANY($1)", [[gone.log.slot, running.log.slot]]);

  // A new instance looks for gone slots as it starts (at its first beat).
  const fresh = await openStore(url);
  t.after(() => fresh.store.close());
  await eventually(async () => (await query(url, 'SELECT 1 FROM marketplace_log_slots WHERE id = $1', [gone.log.slot])).length === 0, 60_000, "the gone instance's slot forgotten");
  const slots = (await query<{ id: string }>(url, 'SELECT id FROM marketplace_log_slots')).map((row) => row.id);
  assert.ok(slots.includes(running.log.slot) && slots.includes(fresh.log.slot), "the running instances' slots kept");

  // Its record stays, loaded by the new instance and read by the running one.
  assert.equal(fresh.store.get(THINGS, 'thing_1')?.n, 1);
  assert.equal(running.store.get(THINGS, 'thing_1')?.n, 1);
  // A write deciding on it commits at once: the record of a forgotten slot is not newer than anything.
  const stats = () => fresh.store.stats().conflicts;
  const conflictsBefore = stats();
  const decided = await fresh.store.commit((tx) => {
    const thing = tx.get(THINGS, 'thing_1')!;
    return { ops: [put('thing_1', thing.n + 10)], result: thing.n + 10 };
  });
  assert.equal(decided, 11);
  assert.equal(stats(), conflictsBefore, 'not refused as stale');
  await eventually(async () => (running.store.ensureFresh() ?? Promise.resolve()).then(() => running.store.get(THINGS, 'thing_1')?.n === 11), 30_000, 'the change reaches the running instance');
  // And the record is there for an instance starting later.
  const later = await openStore(url);
  t.after(() => later.store.close());
  assert.equal(later.store.get(THINGS, 'thing_1')?.n, 11);
});
