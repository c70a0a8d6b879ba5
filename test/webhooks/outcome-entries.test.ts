// A webhook's delivery outcomes are written small: each attempt adds one record of its own to
// the log, however many outcomes the webhook already keeps, against a real server, a real local
// receiver and the log file on disk. And a data directory from before, holding a webhook's
// outcomes as one list record, still answers them, mixed with the new ones newest first, until
// 50 new ones have replaced it.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { DELIVERY_OUTCOMES } from '../../src/domain/records.ts';
import type { DeliveryOutcome, DeliveryOutcomeLogRecord } from '../../src/domain/webhook-records.ts';
import { LOG_FILE_NAME } from '../../src/store/format.ts';
import { Store } from '../../src/store/store.ts';
import { eventually } from '../helpers/eventually.ts';
import { startServer, temporaryDir, type TestServer } from '../helpers/server.ts';
import { answer, startReceiver } from './fixtures.ts';

const LOCAL = { WEBHOOK_ALLOW_PRIVATE: '1' };
const PERMISSIONS = ['read:listings', 'write:listings', 'read:webhooks', 'write:webhooks'];

/** Creates `count` listings, ten requests in flight at once; each queues one listing.created event. */
async function createListings(server: TestServer, key: string, count: number, label: string): Promise<void> {
  for (let start = 0; start < count; start += 10) {
    const batch = Array.from({ length: Math.min(10, count - start) }, (_, index) =>
      server.request('POST', '/v1/listings', { key, body: { title: `${label} ${start + index}`, type: 'TOOL', price: 1, description: 'x' } }),
    );
    for (const created of await Promise.all(batch)) assert.equal(created.status, 201, created.text);
  }
}

async function deliveriesOf(server: TestServer, key: string, webhookId: string): Promise<any[]> {
  const answer = await server.request('GET', `/v1/webhooks/${webhookId}/deliveries`, { key });
  assert.equal(answer.status, 200, answer.text);
  return answer.body.data;
}

/** The log's lines (as written, with their length) whose write touched a webhook's outcomes. */
function outcomeWriteLines(dataDir: string): string[] {
  return readFileSync(join(dataDir, LOG_FILE_NAME), 'utf8')
    .split('\n')
    .filter((line) => /"c":"delivery_outcome/.test(line));
}

test('each delivery outcome is written as one small record: the write is as small at the 60th delivery as at the first', async (t) => {
  const dataDir = temporaryDir(t);
  const server = await startServer(t, { dataDir, env: LOCAL });
  const receiver = await startReceiver(t, answer(204));
  const { key } = await server.userWithKey('creator', PERMISSIONS);
  const made = await server.request('POST', '/v1/webhooks', { key, body: { url: receiver.url, events: ['listing.created'] } });
  assert.equal(made.status, 201, made.text);
  const webhookId = made.body.data.id;

  await createListings(server, key, 60, 'Small');
  let outcomes: any[] = [];
  // The 60th request can reach the receiver before its outcome is written: wait for the write.
  await eventually(async () => {
    outcomes = await deliveriesOf(server, key, webhookId);
    return receiver.received.length === 60 && outcomeWriteLines(dataDir).length >= 60;
  }, 20_000, '60 deliveries made and their outcomes written');
  assert.equal(outcomes.length, 50, 'fifty outcomes kept');
  assert.ok(outcomes.every((outcome) => outcome.status === 'delivered' && outcome.response_status === 204));
  assert.equal(new Set(outcomes.map((outcome) => outcome.event_id)).size, 50, 'fifty different events');
  const times = outcomes.map((outcome) => Date.parse(outcome.at));
  assert.deepEqual(times, [...times].sort((a, b) => b - a), 'newest first');

  const lines = outcomeWriteLines(dataDir);
  assert.equal(lines.length, 60, 'one write per delivery');
  const sizes = lines.map((line) => Buffer.byteLength(line));
  // The write holds the delivery's removal, the webhook, this one outcome and (from the 51st)
  // the removal of the outcome 50 before: its size does not depend on how many outcomes are
  // kept (the list form's grew to ~10 KB by the 50th).
  assert.ok(Math.max(...sizes) < 2_048, `outcome writes of ${sizes.join(', ')} bytes`);
  assert.ok(Math.max(...sizes) <= Math.min(...sizes) + 128, `outcome writes of ${sizes.join(', ')} bytes`);
});

test("a data directory from before: a webhook's outcome list is still answered, mixed with new outcomes, until 50 new ones replace it", async (t) => {
  const dataDir = temporaryDir(t);
  const receiver = await startReceiver(t, answer(204));
  const first = await startServer(null, { dataDir, env: LOCAL });
  const { key, userId } = await first.userWithKey('creator', PERMISSIONS);
  const made = await first.request('POST', '/v1/webhooks', { key, body: { url: receiver.url, events: ['listing.created'] } });
  assert.equal(made.status, 201, made.text);
  const webhookId = made.body.data.id;
  await first.close();

  // What the list form left: one record with the webhook's 30 last outcomes, newest first.
  const old: DeliveryOutcome[] = Array.from({ length: 30 }, (_, index) => ({
    at: new Date(Date.UTC(2026, 0, 1, 0, 30 - index)).toISOString(),
    event_id: `evt_before_${30 - index}`,
    event: 'listing.created',
    status: 'delivered',
    attempts: 1,
    response_status: 200,
    duration_ms: 4,
  }));
  const store = await Store.open({ dataDir, warn: () => {} });
  const listForm: DeliveryOutcomeLogRecord = { id: webhookId, user_id: userId, outcomes: old };
  await store.commit(() => ({ ops: [{ op: 'put', collection: DELIVERY_OUTCOMES, id: webhookId, data: listForm }], result: undefined }));
  await store.close();

  const server = await startServer(t, { dataDir, env: LOCAL });
  const loaded = await deliveriesOf(server, key, webhookId);
  assert.deepEqual(loaded, old.map((outcome) => ({ ...outcome, next_attempt_at: null })), 'answered as it was written');
  // Still known to redelivery: its body is no longer kept (409), where an unknown event is 404.
  assert.equal((await server.request('POST', `/v1/webhooks/${webhookId}/deliveries/evt_before_30/redeliver`, { key })).status, 409);
  assert.equal((await server.request('POST', `/v1/webhooks/${webhookId}/deliveries/evt_never/redeliver`, { key })).status, 404);

  await createListings(server, key, 25, 'After');
  let mixed: any[] = [];
  await eventually(async () => {
    mixed = await deliveriesOf(server, key, webhookId);
    return mixed.filter((outcome) => !outcome.event_id.startsWith('evt_before_')).length === 25;
  }, 20_000, '25 new outcomes');
  assert.equal(mixed.length, 50);
  assert.ok(mixed.slice(0, 25).every((outcome) => !outcome.event_id.startsWith('evt_before_')), 'the new ones first');
  assert.deepEqual(mixed.slice(25).map((outcome) => outcome.event_id), old.slice(0, 25).map((outcome) => outcome.event_id), 'then the newest 25 of before');

  await createListings(server, key, 25, 'Later');
  await eventually(async () => receiver.received.length === 50 && server.app.store.get(DELIVERY_OUTCOMES, webhookId) === undefined, 20_000, 'the list record removed once 50 new outcomes are kept');
  const replaced = await deliveriesOf(server, key, webhookId);
  assert.equal(replaced.length, 50);
  assert.ok(replaced.every((outcome) => !outcome.event_id.startsWith('evt_before_')), 'only new outcomes');
});
