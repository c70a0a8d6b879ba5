// The typed client's webhook deliveries and redeliver against the real server (port 0) and a
// real receiver on 127.0.0.1: the outcomes as the API lists them, a redelivery that arrives with
// the same webhook-id and body, the typed errors (404, 403), a lost answer retried without a
// second delivery, and the user's hourly redelivery limit thrown at once while the key's own
// window is still waited out.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MarketplaceClient } from '../../src/client/index.ts';
import type { ClientOptions, DeliveryOutcome } from '../../src/client/index.ts';
import { DELIVERIES } from '../../src/domain/records.ts';
import { eventually } from '../helpers/eventually.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { apiError, fetchLosingFirstAnswer, recordingSleep } from './call-helpers.ts';
import { answer, startReceiver, type Receiver } from '../webhooks/fixtures.ts';

// One retry, an hour away: nothing is sent again behind the test's back.
const LOCAL = { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_DELAYS_MS: '3600000' };
const HOOKS = ['read:webhooks', 'write:webhooks'];

/** A client for a new user holding a key with `permissions`. */
async function keyHolder(server: TestServer, permissions: string[], options: { rateLimit?: number; userId?: string; client?: Partial<ClientOptions> } = {}) {
  const userId = options.userId ?? (await server.createUser({ name: 'Hook owner' })).id;
  const { key } = await server.createKey(userId, { permissions, rate_limit: options.rateLimit ?? 1000 });
  return { userId, client: new MarketplaceClient({ baseUrl: server.url, apiKey: key, ...options.client }) };
}

/** A webhook of `client`'s user receiving `ping` at `receiver`, once its ping's outcome is listed. */
async function pingedWebhook(client: MarketplaceClient, receiver: Receiver): Promise<{ webhookId: string; ping: DeliveryOutcome }> {
  const webhook = await client.webhooks.create({ url: receiver.url, events: ['ping'] });
  let outcomes: DeliveryOutcome[] = [];
  await eventually(async () => (outcomes = await client.webhooks.deliveries(webhook.id)).length === 1, 10_000, 'the ping outcome');
  return { webhookId: webhook.id, ping: outcomes[0]! };
}

/** Once nothing is queued or in flight: every delivery the server was asked for has been made. */
function settled(server: TestServer, receiver: Receiver): Promise<number> {
  return eventually(async () => receiver.open === 0 && server.app.store.size(DELIVERIES) === 0, 10_000, 'every delivery made');
}

test('deliveries lists each attempt; redeliver queues the event again and it arrives with the same webhook-id and body', async (t) => {
  const server = await startServer(t, { dataDir: null, env: LOCAL });
  const receiver = await startReceiver(t, answer(204));
  const { client } = await keyHolder(server, HOOKS);
  const { webhookId, ping } = await pingedWebhook(client, receiver);
  assert.equal(ping.event, 'ping');
  assert.equal(ping.status, 'delivered');
  assert.equal(ping.attempts, 1);
  assert.equal(ping.response_status, 204);
  assert.equal(ping.next_attempt_at, null);
  assert.ok(Number.isInteger(ping.duration_ms) && ping.duration_ms >= 0);

  const queued = await client.webhooks.redeliver(webhookId, ping.event_id);
  assert.deepEqual(queued, { webhook_id: webhookId, event_id: ping.event_id, type: 'ping', status: 'pending' });
  await eventually(async () => (await client.webhooks.deliveries(webhookId)).length === 2, 10_000, 'the redelivery outcome');
  assert.equal(receiver.received.length, 2);
  const [original, resent] = receiver.received;
  assert.equal(resent!.headers['webhook-id'], original!.headers['webhook-id'], 'the same event id');
  assert.equal(resent!.body, original!.body, 'the same body, byte for byte');

  // Many readers at once all see the same two outcomes, newest first.
  const lists = await Promise.all(Array.from({ length: 10 }, () => client.webhooks.deliveries(webhookId)));
  for (const outcomes of lists) {
    assert.deepEqual(outcomes.map((outcome) => [outcome.event_id, outcome.status, outcome.attempts]), [[ping.event_id, 'delivered', 1], [ping.event_id, 'delivered', 1]]);
    assert.ok(outcomes[0]!.at >= outcomes[1]!.at, 'newest first');
  }
});

test('errors: an unknown event or another user\'s webhook is 404, a key without the permission 403; nothing is sent', async (t) => {
  const server = await startServer(t, { dataDir: null, env: LOCAL });
  const receiver = await startReceiver(t, answer(204));
  const owner = await keyHolder(server, HOOKS);
  const { webhookId, ping } = await pingedWebhook(owner.client, receiver);
  const stranger = await keyHolder(server, HOOKS);
  const readOnly = await keyHolder(server, ['read:webhooks'], { userId: owner.userId });
  const writeOnly = await keyHolder(server, ['write:webhooks'], { userId: owner.userId });

  const unknownEvent = await apiError(owner.client.webhooks.redeliver(webhookId, 'evt_never_sent'));
  assert.equal(unknownEvent.status, 404);
  assert.match(unknownEvent.error, /not found/i);
  assert.equal((await apiError(owner.client.webhooks.deliveries('wh_unknown'))).status, 404);
  assert.equal((await apiError(stranger.client.webhooks.deliveries(webhookId))).status, 404, "another user's webhook is not found");
  assert.equal((await apiError(stranger.client.webhooks.redeliver(webhookId, ping.event_id))).status, 404);

  const cannotSend = await apiError(readOnly.client.webhooks.redeliver(webhookId, ping.event_id));
  assert.equal(cannotSend.status, 403);
  assert.ok(cannotSend.required?.includes('write:webhooks'), `required: ${String(cannotSend.required)}`);
  const cannotRead = await apiError(writeOnly.client.webhooks.deliveries(webhookId));
  assert.equal(cannotRead.status, 403);
  assert.ok(cannotRead.required?.includes('read:webhooks'), `required: ${String(cannotRead.required)}`);

  await settled(server, receiver);
  assert.equal(receiver.received.length, 1, 'only the ping was ever sent');
  assert.equal((await readOnly.client.webhooks.deliveries(webhookId)).length, 1);
});

test('a redeliver whose answer is lost is retried with the same Idempotency-Key: the server replays its 202, one delivery not two', async (t) => {
  const server = await startServer(t, { dataDir: null, env: LOCAL });
  const receiver = await startReceiver(t, answer(204));
  // The first redeliver is carried out, then its answer is lost on the way back: a blind
  // repeat would queue the event a second time.
  const { fetch: flakyFetch, seen } = fetchLosingFirstAnswer((url) => url.endsWith('/redeliver'));
  const { sleep, waits } = recordingSleep();
  const { client } = await keyHolder(server, HOOKS, { client: { fetch: flakyFetch, sleep } });
  const { webhookId, ping } = await pingedWebhook(client, receiver);

  const queued = await client.webhooks.redeliver(webhookId, ping.event_id);
  assert.equal(queued.event_id, ping.event_id);
  assert.equal(seen.length, 2);
  assert.ok(seen[0]!.key, 'the call carries an Idempotency-Key');
  assert.equal(seen[1]!.key, seen[0]!.key, 'the retry carries the same one');
  assert.deepEqual(seen.map((exchange) => [exchange.status, exchange.replayed]), [[202, null], [202, 'true']], 'the server replays its first answer');
  assert.deepEqual(waits, [500]);

  await eventually(async () => (await client.webhooks.deliveries(webhookId)).length >= 2, 10_000, 'the redelivery outcome');
  await settled(server, receiver);
  assert.equal(receiver.received.length, 2, 'the ping and one redelivery');
  assert.equal((await client.webhooks.deliveries(webhookId)).length, 2);
});

test("past 60 redeliveries in the hour the 429 is thrown at once with retryAfter; the key's own 429 is still waited out", async (t) => {
  const server = await startServer(t, { dataDir: null, env: LOCAL });
  const receiver = await startReceiver(t, answer(204));
  const { sleep, waits } = recordingSleep();
  const posts: number[] = [];
  const countingFetch: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    if (init?.method === 'POST') posts.push(response.status);
    return response;
  };
  const { userId, client } = await keyHolder(server, HOOKS, { client: { sleep, fetch: countingFetch } });
  const { webhookId, ping } = await pingedWebhook(client, receiver);

  // A refused redelivery (an unknown event) takes no turn; a recovery takes one even when it
  // finds nothing to send, so sixty of them, all in flight at once, use the hour's turns
  // without sending anything.
  const unknown = await apiError(client.webhooks.redeliver(webhookId, 'evt_unknown'));
  assert.equal(unknown.status, 404);
  const since = new Date(Date.now() - 60_000);
  const recoveries = await Promise.all(Array.from({ length: 60 }, () => client.webhooks.recover(webhookId, since)));
  assert.deepEqual(new Set(recoveries.map((recovery) => recovery.events)), new Set([0]));
  posts.length = 0;

  const limited = await apiError(client.webhooks.redeliver(webhookId, ping.event_id));
  assert.equal(limited.status, 429);
  assert.match(limited.error, /60 redeliveries/);
  assert.ok(limited.retryAfter !== undefined && limited.retryAfter >= 1 && limited.retryAfter <= 3600, `retryAfter: ${limited.retryAfter}`);
  assert.ok((limited.rateLimit?.remaining ?? 0) > 0, "the key's own window still had room");
  assert.deepEqual(posts, [429], 'sent once, not retried');
  assert.deepEqual(waits, [], 'no wait was made');

  // The key's own window (1 request a minute) refusing a redeliver is waited for, as on every call.
  const slow = await keyHolder(server, HOOKS, { userId, rateLimit: 1, client: { sleep, fetch: countingFetch, retry: { maxRetries: 1 } } });
  await slow.client.webhooks.deliveries(webhookId);
  posts.length = 0;
  const windowFull = await apiError(slow.client.webhooks.redeliver(webhookId, ping.event_id));
  assert.equal(windowFull.status, 429);
  assert.equal(windowFull.rateLimit?.remaining, 0);
  assert.deepEqual(posts, [429, 429], 'tried again after the wait');
  assert.equal(waits.length, 1, "one wait for the key's window");
  // Until the key's one-minute window resets (X-RateLimit-Reset is in whole seconds, rounded up).
  assert.ok(waits[0]! > 0 && waits[0]! <= 61_000, `waited ${waits[0]} ms`);

  await settled(server, receiver);
  assert.equal(receiver.received.length, 1, 'nothing was sent again');
});
