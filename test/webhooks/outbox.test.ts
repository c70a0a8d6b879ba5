// WebhookOutbox: which webhooks an event is queued for, what its event record and its
// deliveries hold.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/clock.ts';
import { DELIVERIES, EVENTS, WEBHOOKS } from '../../src/domain/records.ts';
import { Store } from '../../src/store/store.ts';
import type { WriteOp } from '../../src/store/format.ts';
import type { DecisionReader } from '../../src/store/store.ts';
import { WebhookOutbox } from '../../src/webhooks/outbox.ts';
import type { DeliveryRecord, EventRecord } from '../../src/webhooks/records.ts';
import { addWebhook, webhookRecord } from './fixtures.ts';

async function setup() {
  const store = await Store.open({ dataDir: null });
  const clock = new ManualClock(Date.UTC(2026, 2, 1, 12));
  const outbox = new WebhookOutbox({ store, clock });
  store.onChange((change) => outbox.onStoreChange(change)); // as app.ts wires it
  return { store, clock, outbox };
}

/** What `decide` returns, decided in a write of the store that writes nothing. */
function decided<T>(store: Store, decide: (tx: DecisionReader) => T): Promise<T> {
  return store.commit((tx) => ({ ops: [], result: decide(tx) }));
}

function putsIn<T>(ops: WriteOp[], collection: string): T[] {
  return ops.filter((op) => op.op === 'put' && op.collection === collection).map((op) => (op as Extract<WriteOp, { op: 'put' }>).data as T);
}

function deliveriesIn(ops: WriteOp[]): DeliveryRecord[] {
  return putsIn<DeliveryRecord>(ops, DELIVERIES);
}

/** The one event record among `ops`. */
function eventIn(ops: WriteOp[]): EventRecord {
  const events = putsIn<EventRecord>(ops, EVENTS);
  assert.equal(events.length, 1, 'one event record');
  return events[0]!;
}

test('an event is queued for each active webhook of the owner subscribed to its kind, and no other', async () => {
  const { store, outbox } = await setup();
  const all = await addWebhook(store, { userId: 'usr_a', url: 'https://a.example/all' });
  const listingsOnly = await addWebhook(store, { userId: 'usr_a', url: 'https://a.example/l', events: ['listing.created'] });
  await addWebhook(store, { userId: 'usr_a', url: 'https://a.example/u', events: ['user.updated'] });
  await addWebhook(store, { userId: 'usr_a', url: 'https://a.example/off', active: false });
  await addWebhook(store, { userId: 'usr_b', url: 'https://b.example/all' });

  const ops = await decided(store, (tx) => outbox.eventOps(tx, 'listing.created', 'usr_a', { id: 'lst_1', title: 'A' }));
  const deliveries = deliveriesIn(ops);
  assert.deepEqual(deliveries.map((delivery) => delivery.webhook_id).sort(), [all.id, listingsOnly.id].sort());
  assert.equal(new Set(deliveries.map((delivery) => delivery.event_id)).size, 1, 'one event, one id');
  assert.equal(eventIn(ops).id, deliveries[0]!.event_id, 'the deliveries refer to the one event record');
  assert.equal((await decided(store, (tx) => outbox.eventOps(tx, 'listing.created', 'usr_nobody', {}))).length, 0);
});

test('the event record holds the exact body to send, once; its delivery refers to it and is due at once', async () => {
  const { store, clock, outbox } = await setup();
  const webhook = await addWebhook(store, { userId: 'usr_a', url: 'https://a.example/' });
  const ops = await decided(store, (tx) => outbox.eventOps(tx, 'user.updated', 'usr_a', { id: 'usr_a', name: 'Ann' }));
  const [delivery] = deliveriesIn(ops);
  const event = eventIn(ops);
  assert.ok(delivery);
  assert.match(delivery.event_id, /^evt_[A-Za-z0-9]{20}$/);
  assert.match(delivery.id, /^dlv_/);
  assert.equal(delivery.webhook_id, webhook.id);
  assert.equal(delivery.status, 'pending');
  assert.equal(delivery.attempts, 0);
  assert.equal(delivery.next_attempt_at, clock.now());
  assert.equal(delivery.payload, undefined, 'the body is not copied into the delivery');
  assert.equal(event.id, delivery.event_id);
  assert.equal(event.owner_id, 'usr_a');
  assert.equal(
    event.payload,
    JSON.stringify({ id: delivery.event_id, type: 'user.updated', created_at: '2026-03-01T12:00:00.000Z', data: { id: 'usr_a', name: 'Ann' } }),
  );
});

test('the ping goes to the new webhook only, carries it without its secret, and only when subscribed', async () => {
  const { store, outbox } = await setup();
  await addWebhook(store, { userId: 'usr_a', url: 'https://a.example/old' });
  const fresh = webhookRecord({ userId: 'usr_a', url: 'https://a.example/new' });
  const ops = await decided(store, (tx) => outbox.pingOps(tx, fresh));
  const [ping, ...others] = deliveriesIn(ops);
  assert.equal(others.length, 0);
  assert.ok(ping);
  assert.equal(ping.webhook_id, fresh.id);
  const payload = eventIn(ops).payload;
  const body = JSON.parse(payload) as { type: string; data: Record<string, unknown> };
  assert.equal(body.type, 'ping');
  assert.equal(body.data.id, fresh.id);
  assert.equal(body.data.url, 'https://a.example/new');
  assert.equal('secret' in body.data, false);
  assert.ok(!payload.includes(fresh.secret));

  const noPing = webhookRecord({ userId: 'usr_a', url: 'https://a.example/x', events: ['listing.updated'] });
  assert.deepEqual(await decided(store, (tx) => outbox.pingOps(tx, noPing)), []);
});

test('the owner index follows the store: a deleted webhook gets nothing, one loaded at start does', async () => {
  const { store, clock, outbox } = await setup();
  const webhook = await addWebhook(store, { userId: 'usr_a', url: 'https://a.example/' });
  assert.equal(deliveriesIn(await decided(store, (tx) => outbox.eventOps(tx, 'listing.updated', 'usr_a', {}))).length, 1);
  const laterOutbox = new WebhookOutbox({ store, clock });
  assert.deepEqual(laterOutbox.webhooksOf('usr_a').map((record) => record.id), [webhook.id]);
  await store.write([{ op: 'del', collection: WEBHOOKS, id: webhook.id }]);
  assert.equal((await decided(store, (tx) => outbox.eventOps(tx, 'listing.updated', 'usr_a', {}))).length, 0);
  assert.deepEqual(outbox.webhooksOf('usr_a'), []);
});
