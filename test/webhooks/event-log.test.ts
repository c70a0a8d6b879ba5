// The event log's order on its own (src/webhooks/event-log.ts). With instances sharing a
// database: each owner's events numbered 1, 2, 3… through the owner's head record in the write
// itself; a number written but not applied here yet (another instance's write arriving after a
// later one) holds back what follows it, in the list and in a stream read over real HTTP, until
// it arrives; numbers missing for good (swept, or before the heads) hold nothing back. In one
// process: one counter for all owners, no head written, nothing ever held back.

import assert from 'node:assert/strict';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test, type TestContext } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { DEFAULT_EVENT_STREAM_LIMITS } from '../../src/config.ts';
import { EVENT_LOG, EVENT_LOG_HEADS } from '../../src/domain/records.ts';
import type { EventLogHeadRecord, EventLogRecord } from '../../src/domain/webhook-records.ts';
import type { WriteOp } from '../../src/store/format.ts';
import { Store } from '../../src/store/store.ts';
import { EventLog } from '../../src/webhooks/event-log.ts';
import { EventStreams } from '../../src/webhooks/event-streams.ts';
import { eventually } from '../helpers/eventually.ts';

const OWNER = 'usr_owner';
const CREATED = '2026-11-29T09:00:00.000Z';

/** A log as instances sharing a database number it (`shared`), or as one process does. */
async function openLog(shared = true): Promise<{ store: Store; log: EventLog }> {
  const store = await Store.open({ dataDir: null, warn: () => {} });
  const log = new EventLog(store, new ManualClock(Date.parse(CREATED)), 30, { shared });
  store.onChangeOf(EVENT_LOG, (change) => log.onStoreChange(change));
  return { store, log };
}

function payloadOf(id: string): string {
  return JSON.stringify({ id, type: 'listing.created', created_at: CREATED, data: {} });
}

/** Writes records as another instance's applied writes would arrive: numbered already, in any order, each record op before its head op. */
async function applyAsIfFromElsewhere(store: Store, records: Array<{ seq: number; head?: EventLogHeadRecord }>): Promise<void> {
  for (const { seq, head } of records) {
    const record: EventLogRecord = { id: `evt_${seq}`, owner_id: OWNER, type: 'listing.created', created_at: CREATED, seq, payload: payloadOf(`evt_${seq}`) };
    const ops: WriteOp[] = [{ op: 'put', collection: EVENT_LOG, id: record.id, data: record }];
    if (head !== undefined) ops.push({ op: 'put', collection: EVENT_LOG_HEADS, id: OWNER, data: head });
    await store.commit(() => ({ ops, result: null }));
  }
}

function seqs(records: readonly EventLogRecord[]): number[] {
  return records.map((record) => record.seq);
}

test('events are numbered 1, 2, 3… per owner through the head, also two in one write; each owner apart', async () => {
  const { store, log } = await openLog();
  for (const [index, owner] of [OWNER, OWNER, 'usr_other'].entries()) {
    await store.commit((tx) => ({ ops: log.recordOps(tx, owner, `evt_a${index}`, 'listing.created', CREATED, payloadOf(`evt_a${index}`)), result: null }));
  }
  await store.commit((tx) => ({
    ops: [...log.recordOps(tx, OWNER, 'evt_b1', 'listing.created', CREATED, payloadOf('evt_b1')), ...log.recordOps(tx, OWNER, 'evt_b2', 'listing.updated', CREATED, payloadOf('evt_b2'))],
    result: null,
  }));
  assert.deepEqual(seqs(log.readyAfter(OWNER, 0, 10)), [1, 2, 3, 4]);
  assert.deepEqual(log.readyAfter(OWNER, 0, 10).map((record) => record.id), ['evt_a0', 'evt_a1', 'evt_b1', 'evt_b2']);
  assert.deepEqual(seqs(log.readyAfter('usr_other', 0, 10)), [1]);
  assert.deepEqual(store.get(EVENT_LOG_HEADS, OWNER), { id: OWNER, last_seq: 4, first_seq: 1 });
});

test('a number not applied yet holds back the later ones until it arrives; then all in order', async () => {
  const { store, log } = await openLog();
  await applyAsIfFromElsewhere(store, [
    { seq: 1, head: { id: OWNER, last_seq: 1, first_seq: 1 } },
    { seq: 2, head: { id: OWNER, last_seq: 2, first_seq: 1 } },
    { seq: 4, head: { id: OWNER, last_seq: 4, first_seq: 1 } },
  ]);
  assert.deepEqual(seqs(log.readyAfter(OWNER, 0, 10)), [1, 2], '3 is written but not here yet: 4 waits');
  assert.deepEqual(seqs(log.readyAfter(OWNER, 2, 10)), []);
  await applyAsIfFromElsewhere(store, [{ seq: 3 }]);
  assert.deepEqual(seqs(log.readyAfter(OWNER, 0, 10)), [1, 2, 3, 4]);
  assert.deepEqual(seqs(log.readyAfter(OWNER, 2, 10)), [3, 4]);
});

test('numbers missing for good hold nothing back: swept (the sweep says how far in the head), and between events numbered before the heads', async () => {
  const swept = await openLog();
  const OLD = '2026-09-01T00:00:00.000Z';
  for (const [index, createdAt] of [OLD, OLD, OLD, CREATED, CREATED].entries()) {
    await swept.store.commit((tx) => ({ ops: swept.log.recordOps(tx, OWNER, `evt_s${index}`, 'listing.created', createdAt, payloadOf(`evt_s${index}`)), result: null }));
  }
  assert.equal(await swept.log.sweep(), 3, 'the three older than the 30 kept days');
  assert.deepEqual(swept.store.get(EVENT_LOG_HEADS, OWNER), { id: OWNER, last_seq: 5, first_seq: 1, swept_through: 3 });
  assert.deepEqual(seqs(swept.log.readyAfter(OWNER, 0, 10)), [4, 5]);
  await swept.store.commit((tx) => ({ ops: swept.log.recordOps(tx, OWNER, 'evt_s5', 'listing.created', CREATED, payloadOf('evt_s5')), result: null }));
  assert.deepEqual(swept.store.get(EVENT_LOG_HEADS, OWNER), { id: OWNER, last_seq: 6, first_seq: 1, swept_through: 3 }, 'the next event keeps what the sweep said');

  const older = await openLog();
  // One counter for every owner numbered these: gaps are other owners' events.
  await applyAsIfFromElsewhere(older.store, [{ seq: 10 }, { seq: 20 }]);
  assert.deepEqual(seqs(older.log.readyAfter(OWNER, 0, 10)), [10, 20]);
  // The first event numbered by a head goes on from the newest kept.
  await older.store.commit((tx) => ({ ops: older.log.recordOps(tx, OWNER, 'evt_new', 'listing.created', CREATED, payloadOf('evt_new')), result: null }));
  assert.deepEqual(seqs(older.log.readyAfter(OWNER, 0, 10)), [10, 20, 21]);
  assert.deepEqual(older.store.get(EVENT_LOG_HEADS, OWNER), { id: OWNER, last_seq: 21, first_seq: 21 });
  // Events one process numbered after the head (the data moved back and forth): numbering goes on after them.
  await applyAsIfFromElsewhere(older.store, [{ seq: 40 }]);
  await older.store.commit((tx) => ({ ops: older.log.recordOps(tx, OWNER, 'evt_later', 'listing.created', CREATED, payloadOf('evt_later')), result: null }));
  assert.deepEqual(seqs(older.log.readyAfter(OWNER, 0, 10)), [10, 20, 21, 40, 41]);
  assert.deepEqual(older.store.get(EVENT_LOG_HEADS, OWNER), { id: OWNER, last_seq: 41, first_seq: 41 });
});

test('read from the oldest kept, a number not applied yet below the first one applied holds it back too', async () => {
  const { store, log } = await openLog();
  await applyAsIfFromElsewhere(store, [{ seq: 2, head: { id: OWNER, last_seq: 2, first_seq: 1 } }]);
  assert.deepEqual(seqs(log.readyAfter(OWNER, 0, 10)), [], '1 is written but not here yet');
  await applyAsIfFromElsewhere(store, [{ seq: 1 }]);
  assert.deepEqual(seqs(log.readyAfter(OWNER, 0, 10)), [1, 2]);
});

test('in one process: one counter for every owner, no head written, and a missing number holds nothing back', async () => {
  const { store, log } = await openLog(false);
  for (const [index, owner] of [OWNER, 'usr_other', OWNER].entries()) {
    await store.commit((tx) => ({ ops: log.recordOps(tx, owner, `evt_${index}`, 'listing.created', CREATED, payloadOf(`evt_${index}`)), result: null }));
  }
  assert.deepEqual(seqs(log.readyAfter(OWNER, 0, 10)), [1, 3]);
  assert.deepEqual(seqs(log.readyAfter('usr_other', 0, 10)), [2]);
  assert.equal(store.size(EVENT_LOG_HEADS), 0);
  // A server restarted on the same data goes on after the highest kept number.
  const restarted = new EventLog(store, new ManualClock(Date.parse(CREATED)), 30, { shared: false });
  await store.commit((tx) => ({ ops: restarted.recordOps(tx, OWNER, 'evt_after', 'listing.created', CREATED, payloadOf('evt_after')), result: null }));
  assert.equal(store.get(EVENT_LOG, 'evt_after')?.seq, 4);
});

/** Serves one stream of OWNER's events on a real HTTP server; returns the ids as they arrive. */
async function readStream(t: TestContext, log: EventLog): Promise<string[]> {
  const streams = new EventStreams(log, DEFAULT_EVENT_STREAM_LIMITS);
  const server = createServer((_req, res) => void streams.open(res, {}, { ownerId: OWNER, keyId: 'key_1', afterSeq: 0, allowed: () => true }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    streams.closeAll();
    server.close();
  });
  const ids: string[] = [];
  await new Promise<void>((resolve, reject) => {
    const req = httpRequest(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, { agent: false }, (response) => {
      response.setEncoding('utf8');
      let buffer = '';
      response.on('data', (chunk: string) => {
        buffer += chunk;
        for (const match of buffer.matchAll(/^id: (\S+)$/gm)) ids.push(match[1]!);
        buffer = buffer.slice(buffer.lastIndexOf('\n\n') + 2);
      });
      t.after(() => response.destroy());
      resolve();
    });
    req.on('error', reject);
    req.end();
  });
  return ids;
}

test('a stream sends nothing past a number not applied yet, and sends it and the rest in order once it arrives', async (t) => {
  const { store, log } = await openLog();
  await applyAsIfFromElsewhere(store, [{ seq: 1, head: { id: OWNER, last_seq: 1, first_seq: 1 } }]);
  const ids = await readStream(t, log);
  await eventually(async () => ids.length === 1, 10_000, 'the first event');
  await applyAsIfFromElsewhere(store, [{ seq: 3, head: { id: OWNER, last_seq: 3, first_seq: 1 } }]);
  await applyAsIfFromElsewhere(store, [{ seq: 2 }]);
  await eventually(async () => ids.length === 3, 10_000, 'the held-back event and the one after it');
  assert.deepEqual(ids, ['evt_1', 'evt_2', 'evt_3']);
});

test("a stream woken by another instance's write reads it whole: the head applied after the record in it still holds back what is missing", async (t) => {
  const { store, log } = await openLog();
  const ids = await readStream(t, log);
  // The owner's first write to arrive here is their second event; its record op comes before its head op.
  await applyAsIfFromElsewhere(store, [{ seq: 2, head: { id: OWNER, last_seq: 2, first_seq: 1 } }]);
  await applyAsIfFromElsewhere(store, [{ seq: 1 }]);
  await eventually(async () => ids.length === 2, 10_000, 'both events');
  assert.deepEqual(ids, ['evt_1', 'evt_2']);
});
