// WebhookDispatcher against real receivers on 127.0.0.1 (allowPrivate, millisecond delays):
// signed delivery, retries with the same webhook-id, 3xx, 410, Retry-After, the failed end of
// the schedule, resuming after a restart, slow receivers, the concurrency bound, a failing disk.

import { test } from 'node:test';
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { systemClock } from '../../src/clock.ts';
import type { Clock } from '../../src/clock.ts';
import { DELIVERIES, WEBHOOKS } from '../../src/domain/records.ts';
import { nodeFileSystem } from '../../src/store/files.ts';
import type { FileSystem } from '../../src/store/files.ts';
import { Store } from '../../src/store/store.ts';
import type { WriteOp } from '../../src/store/format.ts';
import { WebhookDispatcher } from '../../src/webhooks/dispatcher.ts';
import type { WebhookDispatcherOptions } from '../../src/webhooks/dispatcher.ts';
import type { EventType } from '../../src/domain/events.ts';
import { WebhookOutbox } from '../../src/webhooks/outbox.ts';
import type { DeliveryRecord, WebhookRecord } from '../../src/domain/webhook-records.ts';
import { verifySignature } from '../../src/webhooks/verify.ts';
import { addWebhook, answer, pause, queueEvents, startReceiver, waitFor } from './fixtures.ts';
import type { ReceivedRequest, Receiver } from './fixtures.ts';

interface Setup {
  store: Store;
  outbox: WebhookOutbox;
  dispatcher: WebhookDispatcher;
  warnings: string[];
  emit(type: EventType, ownerId: string, data?: object): Promise<void>;
  webhook(id: string): WebhookRecord | undefined;
  deliveries(): DeliveryRecord[];
}

/** A memory store (unless given one), an outbox and a started dispatcher, stopped after the test. */
async function setup(t: TestContext, options: Partial<WebhookDispatcherOptions> = {}, given?: Store): Promise<Setup> {
  const store = given ?? (await Store.open({ dataDir: null }));
  const clock = options.clock ?? systemClock;
  const outbox = new WebhookOutbox({ store, clock });
  const warnings: string[] = [];
  const dispatcher = new WebhookDispatcher({
    store,
    clock,
    retryDelaysMs: [10, 20],
    allowPrivate: true,
    timeoutMs: 2000,
    stopTimeoutMs: 200,
    warn: (message) => warnings.push(message),
    ...options,
  });
  // Wired as app.ts wires them.
  store.onChange((change) => outbox.onStoreChange(change));
  store.onChange((change) => dispatcher.onStoreChange(change));
  dispatcher.start();
  t.after(() => dispatcher.stop());
  return {
    store,
    outbox,
    dispatcher,
    warnings,
    emit: (type, ownerId, data = { id: 'lst_1' }) => queueEvents(store, outbox, [type, ownerId, data]),
    webhook: (id) => store.get<WebhookRecord>(WEBHOOKS, id),
    deliveries: () => [...store.values<DeliveryRecord>(DELIVERIES)],
  };
}

function nowSeconds(clock: Clock = systemClock): number {
  return Math.floor(clock.now() / 1000);
}

function assertSigned(request: ReceivedRequest, secret: string, clock?: Clock): void {
  assert.ok(verifySignature(secret, request.headers, request.body, nowSeconds(clock)), 'the signature verifies with the secret');
}

test('a delivery arrives signed, with the event as its body, and is recorded as delivered', async (t) => {
  const receiver = await startReceiver(t, answer(204));
  const { store, emit, webhook, deliveries } = await setup(t);
  const hook = await addWebhook(store, { userId: 'usr_a', url: receiver.url });

  await emit('listing.created', 'usr_a', { id: 'lst_1', title: 'Prompt pack' });
  await waitFor('the delivery to be recorded', () => webhook(hook.id)?.last_delivery?.status === 'delivered');

  assert.equal(receiver.received.length, 1);
  const [request] = receiver.received;
  assert.ok(request);
  assertSigned(request, hook.secret);
  assert.equal(request.headers['content-type'], 'application/json');
  const body = JSON.parse(request.body) as { id: string; type: string; created_at: string; data: unknown };
  assert.deepEqual(Object.keys(body), ['id', 'type', 'created_at', 'data']);
  assert.equal(body.type, 'listing.created');
  assert.deepEqual(body.data, { id: 'lst_1', title: 'Prompt pack' });
  assert.equal(request.headers['webhook-id'], body.id);
  const last = webhook(hook.id)?.last_delivery;
  assert.deepEqual({ ...last, at: undefined }, { event_id: body.id, type: 'listing.created', status: 'delivered', attempts: 1, response_status: 204, at: undefined });
  assert.deepEqual(deliveries(), [], 'a delivered record is removed; last_delivery keeps the outcome');
});

test('a retry keeps webhook-id and is signed afresh with a new timestamp', async (t) => {
  // The clock jumps 5 s at each request, so each attempt has its own timestamp.
  let offsetMs = 0;
  const clock: Clock = { now: () => Date.now() + offsetMs, monotonic: () => performance.now() };
  const seenBeforeRetry: Array<DeliveryRecord | undefined> = [];
  let hookId = '';
  let store: Store | undefined;
  const receiver = await startReceiver(t, (_request, response, index) => {
    offsetMs += 5000;
    if (index === 1) seenBeforeRetry.push(...store!.values<DeliveryRecord>(DELIVERIES));
    response.writeHead(index < 2 ? 500 : 200).end();
  });
  const context = await setup(t, { clock });
  store = context.store;
  const hook = await addWebhook(context.store, { userId: 'usr_a', url: receiver.url });
  hookId = hook.id;

  await context.emit('listing.updated', 'usr_a');
  await waitFor('the third attempt to succeed', () => context.webhook(hookId)?.last_delivery?.status === 'delivered');

  assert.equal(receiver.received.length, 3);
  const ids = new Set(receiver.received.map((request) => request.headers['webhook-id']));
  const timestamps = new Set(receiver.received.map((request) => request.headers['webhook-timestamp']));
  const signatures = new Set(receiver.received.map((request) => request.headers['webhook-signature']));
  assert.equal(ids.size, 1, 'one webhook-id for every attempt');
  assert.equal(timestamps.size, 3, 'a fresh timestamp per attempt');
  assert.equal(signatures.size, 3, 'a fresh signature per attempt');
  assert.equal(new Set(receiver.received.map((request) => request.body)).size, 1, 'the same body bytes every time');
  for (const request of receiver.received) {
    assert.ok(verifySignature(hook.secret, request.headers, request.body, Number(request.headers['webhook-timestamp'])));
  }
  // What the store said between the first failure and the retry.
  const [retrying] = seenBeforeRetry;
  assert.equal(retrying?.status, 'retrying');
  assert.equal(retrying?.attempts, 1);
  assert.equal(retrying?.response_status, 500);
  assert.equal(retrying?.last_error, 'HTTP 500');
  assert.equal(context.webhook(hookId)?.last_delivery?.attempts, 3);
});

test('after the last delay the delivery is failed, and no further attempt is made', async (t) => {
  const receiver = await startReceiver(t, answer(500));
  const { store, emit, webhook, deliveries } = await setup(t, { retryDelaysMs: [10, 20] });
  const hook = await addWebhook(store, { userId: 'usr_a', url: receiver.url });

  await emit('listing.archived', 'usr_a');
  await waitFor('the delivery to fail', () => webhook(hook.id)?.last_delivery?.status === 'failed');
  await pause(100);

  assert.equal(receiver.received.length, 3, 'the first attempt and one per delay');
  const last = webhook(hook.id)?.last_delivery;
  assert.equal(last?.attempts, 3);
  assert.equal(last?.response_status, 500);
  assert.equal(last?.type, 'listing.archived');
  assert.equal(webhook(hook.id)?.active, true, 'failures alone do not deactivate');
  assert.deepEqual(deliveries(), []);
});

test('a 3xx is a failure and the redirect is not followed', async (t) => {
  const target = await startReceiver(t, answer(200));
  const redirecting = await startReceiver(t, answer(302, { location: target.url }));
  const { store, emit, webhook } = await setup(t, { retryDelaysMs: [10] });
  const hook = await addWebhook(store, { userId: 'usr_a', url: redirecting.url });

  await emit('listing.created', 'usr_a');
  await waitFor('the delivery to fail', () => webhook(hook.id)?.last_delivery?.status === 'failed');

  assert.equal(redirecting.received.length, 2);
  assert.equal(target.received.length, 0, 'the Location was never visited');
  assert.equal(webhook(hook.id)?.last_delivery?.response_status, 302);
});

test('410 Gone turns the webhook inactive; its other pending deliveries are dropped unsent', async (t) => {
  const receiver = await startReceiver(t, answer(410));
  const { store, outbox, emit, webhook, deliveries } = await setup(t);
  const hook = await addWebhook(store, { userId: 'usr_a', url: receiver.url });

  await queueEvents(store, outbox, ['listing.created', 'usr_a', {}], ['listing.updated', 'usr_a', {}]);
  await waitFor('both deliveries to be settled', () => deliveries().length === 0);

  assert.equal(receiver.received.length, 1, 'one webhook at a time, and nothing after the 410');
  assert.equal(webhook(hook.id)?.active, false);
  assert.deepEqual({ ...webhook(hook.id)?.last_delivery, at: undefined, event_id: undefined }, {
    event_id: undefined,
    type: 'listing.created',
    status: 'failed',
    attempts: 1,
    response_status: 410,
    at: undefined,
  });
  assert.deepEqual(await store.commit((tx) => ({ ops: [], result: outbox.eventOps(tx, 'listing.created', 'usr_a', {}) })), [], 'an inactive webhook gets no new events');
  await emit('listing.created', 'usr_a');
  await pause(50);
  assert.equal(receiver.received.length, 1);
});

test('Retry-After on a 429 or a 503 lengthens the next delay', async (t) => {
  const { store, emit, webhook, deliveries } = await setup(t, { retryDelaysMs: [10] });
  const cases: Array<{ status: number; receiver: Receiver; hook: WebhookRecord }> = [];
  for (const status of [429, 503]) {
    const receiver = await startReceiver(t, (_request, response, index) => {
      if (index === 0) response.writeHead(status, { 'retry-after': '1' }).end();
      else response.writeHead(200).end();
    });
    const hook = await addWebhook(store, { userId: `usr_${status}`, url: receiver.url });
    cases.push({ status, receiver, hook });
  }

  for (const { status } of cases) await emit('user.updated', `usr_${status}`);
  await waitFor('both retries to be scheduled', () => deliveries().length === 2 && deliveries().every((delivery) => delivery.status === 'retrying'));
  for (const retrying of deliveries()) {
    assert.equal(retrying.next_attempt_at - Date.parse(retrying.updated_at), 1000, `HTTP ${retrying.response_status}: one second, not 10 ms`);
  }
  await waitFor('both retries to succeed', () => cases.every(({ hook }) => webhook(hook.id)?.last_delivery?.status === 'delivered'));
  for (const { status, receiver } of cases) {
    const [first, second] = receiver.received;
    assert.ok(second!.at - first!.at >= 900, `${status}: waited ${Math.round(second!.at - first!.at)} ms`);
  }
});

test('a receiver that does not answer in time is a failure ("timeout")', async (t) => {
  const receiver = await startReceiver(t, () => {});
  const { store, emit, webhook, deliveries } = await setup(t, { timeoutMs: 50, retryDelaysMs: [5000] });
  const hook = await addWebhook(store, { userId: 'usr_a', url: receiver.url });

  await emit('listing.created', 'usr_a');
  await waitFor('the retry to be scheduled', () => deliveries()[0]?.status === 'retrying');
  assert.equal(deliveries()[0]?.last_error, 'timeout');
  assert.equal(webhook(hook.id)?.last_delivery?.status, 'retrying');
  assert.equal(webhook(hook.id)?.last_delivery?.response_status, null);
});

test('pending deliveries resume after a restart, retries keeping their attempt count', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'webhooks-restart-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  let up = false;
  const receiver = await startReceiver(t, (_request, response) => response.writeHead(up ? 200 : 503).end());

  // First life: one event fails once and waits for a long retry; another is queued while no
  // dispatcher runs at all. Then the server stops.
  const firstStore = await Store.open({ dataDir });
  const first = await setup(t, { retryDelaysMs: [60_000] }, firstStore);
  const hook = await addWebhook(firstStore, { userId: 'usr_a', url: receiver.url });
  await first.emit('listing.created', 'usr_a');
  await waitFor('the first attempt to fail', () => first.deliveries()[0]?.status === 'retrying');
  await first.dispatcher.stop();
  await first.emit('listing.updated', 'usr_a');
  assert.equal(receiver.received.length, 1);
  await firstStore.close();

  // Second life: the same data dir; the long retry's time is made due, as if the hour had passed.
  up = true;
  const secondStore = await Store.open({ dataDir });
  t.after(() => secondStore.close());
  const retrying = [...secondStore.values<DeliveryRecord>(DELIVERIES)].find((delivery) => delivery.status === 'retrying')!;
  assert.equal(retrying.attempts, 1, 'the failed attempt survived the restart');
  const dueNow: DeliveryRecord = { ...retrying, next_attempt_at: Date.now() };
  await secondStore.write([{ op: 'put', collection: DELIVERIES, id: dueNow.id, data: dueNow }]);
  const second = await setup(t, {}, secondStore);
  await waitFor('both deliveries to arrive', () => second.deliveries().length === 0 && receiver.received.length === 3);

  const types = receiver.received.slice(1).map((request) => (JSON.parse(request.body) as { type: string }).type);
  assert.deepEqual(types.sort(), ['listing.created', 'listing.updated']);
  for (const request of receiver.received) assertSigned(request, hook.secret);
  const [firstTry, ...afterRestart] = receiver.received;
  const retried = afterRestart.find((request) => request.body === firstTry!.body);
  assert.equal(retried?.headers['webhook-id'], firstTry!.headers['webhook-id'], 'the retry after the restart keeps its webhook-id');
  assert.equal(second.webhook(hook.id)?.last_delivery?.status, 'delivered');
});

test('a slow receiver delays nothing else', async (t) => {
  const slow = await startReceiver(t, () => {}); // never answers
  const fast = await startReceiver(t, answer(200));
  // The slow send is given a minute: the fast one must not wait for it, however busy the machine.
  const { store, outbox, emit, webhook } = await setup(t, { timeoutMs: 60_000 });
  await addWebhook(store, { userId: 'usr_slow', url: slow.url });
  const quick = await addWebhook(store, { userId: 'usr_fast', url: fast.url });

  // More slow events than there are slots: one webhook never takes more than one.
  await queueEvents(store, outbox, ...Array.from({ length: 12 }, () => ['listing.created', 'usr_slow', {}] as const));
  await waitFor('the slow receiver to be waiting', () => slow.open === 1);
  await emit('listing.created', 'usr_fast');
  await waitFor('the fast delivery', () => webhook(quick.id)?.last_delivery?.status === 'delivered');
  assert.equal(slow.open, 1, 'delivered while the slow send still waits');
  assert.equal(slow.maxOpen, 1, 'one request at a time per webhook');
});

test('no more than maxInFlight sends run at once', async (t) => {
  const receiver = await startReceiver(t, (_request, response) => {
    setTimeout(() => response.writeHead(200).end(), 30);
  });
  const { store, outbox, deliveries } = await setup(t, { maxInFlight: 2 });
  const events: Array<[EventType, string, object]> = [];
  for (let index = 0; index < 6; index += 1) {
    await addWebhook(store, { userId: `usr_${index}`, url: receiver.url });
    events.push(['listing.created', `usr_${index}`, {}]);
  }
  await queueEvents(store, outbox, ...events);
  await waitFor('all six deliveries', () => receiver.received.length === 6 && deliveries().length === 0);
  assert.equal(receiver.maxOpen, 2);
});

test('a webhook deleted while its delivery is in flight stays deleted', async (t) => {
  // A disk whose fsync takes 30 ms, so the delete is still on its way when the answer arrives.
  const dataDir = mkdtempSync(join(tmpdir(), 'webhooks-delete-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const slowSyncFileSystem: FileSystem = {
    ...nodeFileSystem,
    open: async (path) => {
      const handle = await nodeFileSystem.open(path);
      return {
        write: (data, position) => handle.write(data, position),
        sync: () => pause(30).then(() => handle.sync()),
        truncate: (length) => handle.truncate(length),
        close: () => handle.close(),
      };
    },
  };
  const store = await Store.open({ dataDir, fileSystem: slowSyncFileSystem });
  t.after(() => store.close());
  let hookId = '';
  const receiver = await startReceiver(t, (_request, response) => {
    response.writeHead(200).end();
    // The owner deletes the webhook (as DELETE /v1/webhooks/:id does) just as the answer leaves.
    void store.commit((tx) => {
      const ops: WriteOp[] = [{ op: 'del', collection: WEBHOOKS, id: hookId }];
      for (const delivery of tx.values(DELIVERIES)) ops.push({ op: 'del', collection: DELIVERIES, id: delivery.id });
      return { ops, result: undefined };
    });
  });
  const context = await setup(t, {}, store);
  hookId = (await addWebhook(store, { userId: 'usr_a', url: receiver.url })).id;

  await context.emit('listing.created', 'usr_a');
  await waitFor('the delivery to be answered', () => receiver.received.length === 1);
  await waitFor('the outcome to be settled', () => context.dispatcher.stats().inFlight === 0);
  await pause(100);
  assert.equal(context.webhook(hookId), undefined, 'not brought back by the delivery outcome');
  assert.deepEqual(context.deliveries(), []);
});

test('a store write that fails is retried later; the dispatcher keeps going', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'webhooks-disk-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  let diskFull = false;
  const failingFileSystem: FileSystem = {
    ...nodeFileSystem,
    open: async (path) => {
      const handle = await nodeFileSystem.open(path);
      return {
        ...handle,
        write: (data, position) => (diskFull ? Promise.reject(Object.assign(new Error('no space left on device'), { code: 'ENOSPC' })) : handle.write(data, position)),
        sync: () => handle.sync(),
        truncate: (length) => handle.truncate(length),
        close: () => handle.close(),
      };
    },
  };
  const store = await Store.open({ dataDir, fileSystem: failingFileSystem });
  t.after(() => store.close());
  const receiver = await startReceiver(t, (_request, response) => {
    diskFull = true; // the disk fills while the delivery is out
    response.writeHead(200).end();
  });
  const { emit, webhook, warnings } = await setup(t, { storeRetryMs: 20 }, store);
  const hook = await addWebhook(store, { userId: 'usr_a', url: receiver.url });

  await emit('listing.created', 'usr_a');
  await waitFor('a warning about the refused write', () => warnings.length > 0);
  assert.match(warnings[0]!, /Could not record webhook delivery/);
  assert.equal(webhook(hook.id)?.last_delivery, null);
  diskFull = false;
  await waitFor('the outcome to be written once the disk recovers', () => webhook(hook.id)?.last_delivery?.status === 'delivered');
  assert.equal(receiver.received.length, 1, 'the outcome is written again, not the event sent again');
});

// The send's deadline is 120 s and the test's own timeout 60 s: only stop()'s 100 ms bound ends it in time.
test('stop() cancels scheduled attempts and waits only so long for one under way', { timeout: 60_000 }, async (t) => {
  const receiver = await startReceiver(t, () => {}); // never answers
  const { store, emit, dispatcher, deliveries } = await setup(t, { timeoutMs: 120_000, stopTimeoutMs: 100 });
  await addWebhook(store, { userId: 'usr_a', url: receiver.url });
  await addWebhook(store, { userId: 'usr_b', url: receiver.url.replace('/hook', '/b') });

  await emit('listing.created', 'usr_a');
  await waitFor('the send to be under way', () => receiver.open === 1);
  await dispatcher.stop();
  assert.equal(receiver.open, 1, 'stop() returned while the send was still under way');

  await emit('listing.created', 'usr_b');
  await pause(50);
  assert.equal(receiver.received.length, 1, 'nothing new is sent after stop()');
  assert.equal(deliveries().length, 2, 'both stay pending in the store for the next start');
});
