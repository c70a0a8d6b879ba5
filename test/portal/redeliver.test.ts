// Delivery outcomes people can act on, against a real server and real local receivers: each
// outcome says delivered, retrying (with the receiver's status or none, and the next attempt's
// time) or failed; any of them is sent again on request with the same webhook-id and body and a
// fresh signature the receiver verifies, from the portal and from /v1 with a key; only the
// user's own webhooks; at most 60 redeliveries per user per hour.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DELIVERIES } from '../../src/domain/records.ts';
import { verifySignature } from '../../src/webhooks/verify.ts';
import { eventually } from '../helpers/eventually.ts';
import { signedInUser, type PortalUser } from '../helpers/portal.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { answer, startReceiver } from '../webhooks/fixtures.ts';

// One retry, an hour away: a failing delivery stays `retrying` for the whole test.
const LOCAL = { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_DELAYS_MS: '3600000' };

function portal(server: TestServer, user: PortalUser, method: string, path: string, body?: unknown) {
  return server.request(method, `/portal/v1${path}`, { headers: user.headers, body });
}

async function outcomesOf(server: TestServer, user: PortalUser, webhookId: string, count: number): Promise<any[]> {
  let outcomes: any[] = [];
  await eventually(async () => {
    outcomes = (await portal(server, user, 'GET', `/webhooks/${webhookId}/deliveries`)).body.data;
    return outcomes.length >= count;
  }, 10_000, `${count} outcomes of ${webhookId}`);
  return outcomes;
}

test('outcomes carry their state, HTTP status or none, and the next attempt while retrying', async (t) => {
  const server = await startServer(t, { env: LOCAL });
  const failing = await startReceiver(t, answer(503));
  const user = await signedInUser(server);
  const made = await portal(server, user, 'POST', '/webhooks', { url: failing.url, events: ['ping'] });
  assert.equal(made.status, 201, made.text);
  const [outcome] = await outcomesOf(server, user, made.body.data.id, 1);
  assert.equal(outcome.status, 'retrying');
  assert.equal(outcome.response_status, 503);
  assert.equal(outcome.attempts, 1);
  assert.ok(Date.parse(outcome.next_attempt_at) > Date.now() + 3_000_000, `next attempt in about an hour: ${outcome.next_attempt_at}`);
  // Sending a retrying event again sends it now in place of its retry: never two deliveries of it at once.
  const again = await portal(server, user, 'POST', `/webhooks/${made.body.data.id}/deliveries/${outcome.event_id}/redeliver`);
  assert.equal(again.status, 202, again.text);
  const [sentNow] = await outcomesOf(server, user, made.body.data.id, 2);
  // The retry itself was sent (its second and last attempt), not a second delivery beside it.
  assert.equal(sentNow.event_id, outcome.event_id);
  assert.equal(sentNow.attempts, 2);
  assert.equal(sentNow.status, 'failed');
  assert.equal([...server.app.store.values(DELIVERIES)].filter((delivery) => delivery.event_id === outcome.event_id).length, 0, 'no retry left');
});

test('redeliver: the same webhook-id and body with a fresh, verifiable signature; portal and /v1; only your own', async (t) => {
  const server = await startServer(t, { env: LOCAL });
  const receiver = await startReceiver(t, answer(204));
  const ada = await signedInUser(server);
  const bob = await signedInUser(server);
  const made = await portal(server, ada, 'POST', '/webhooks', { url: receiver.url, events: ['ping'] });
  const { id: webhookId, secret } = made.body.data;
  const [first] = await outcomesOf(server, ada, webhookId, 1);
  assert.equal(first.status, 'delivered');
  assert.equal(first.response_status, 204);
  assert.equal(first.next_attempt_at, null);
  const original = receiver.received[0]!;

  // A second later the timestamp, and so the signature, must be new.
  const originalSeconds = Number(original.headers['webhook-timestamp']);
  await eventually(async () => Math.floor(Date.now() / 1000) > originalSeconds, 5_000, 'the next second');
  const redelivered = await portal(server, ada, 'POST', `/webhooks/${webhookId}/deliveries/${first.event_id}/redeliver`);
  assert.equal(redelivered.status, 202, redelivered.text);
  assert.deepEqual(redelivered.body.data, { webhook_id: webhookId, event_id: first.event_id, type: 'ping', status: 'pending' });
  await eventually(async () => receiver.received.length === 2, 5_000, 'the redelivery arrives');
  const resent = receiver.received[1]!;
  assert.equal(resent.headers['webhook-id'], original.headers['webhook-id'], 'same webhook-id');
  assert.equal(resent.body, original.body, 'same payload, byte for byte');
  assert.ok(Number(resent.headers['webhook-timestamp']) > originalSeconds, 'a fresh timestamp');
  assert.notEqual(resent.headers['webhook-signature'], original.headers['webhook-signature']);
  assert.ok(verifySignature(secret, resent.headers, resent.body, Math.floor(Date.now() / 1000)), 'the receiver verifies it');
  const outcomes = await outcomesOf(server, ada, webhookId, 2);
  assert.deepEqual(outcomes.map((outcome) => [outcome.event_id, outcome.status]), [[first.event_id, 'delivered'], [first.event_id, 'delivered']]);

  // The same from /v1 with a key: listing needs read:webhooks, redelivering write:webhooks.
  const reader = (await portal(server, ada, 'POST', '/keys', { permissions: ['read:webhooks'] })).body.data.key;
  const writer = (await portal(server, ada, 'POST', '/keys', { permissions: ['write:webhooks'] })).body.data.key;
  const listed = await server.request('GET', `/v1/webhooks/${webhookId}/deliveries`, { key: reader });
  assert.equal(listed.status, 200, listed.text);
  assert.deepEqual(listed.body.data, outcomes);
  assert.equal((await server.request('GET', `/v1/webhooks/${webhookId}/deliveries`, { key: writer })).status, 403);
  assert.equal((await server.request('POST', `/v1/webhooks/${webhookId}/deliveries/${first.event_id}/redeliver`, { key: reader })).status, 403);
  const viaKey = await server.request('POST', `/v1/webhooks/${webhookId}/deliveries/${first.event_id}/redeliver`, { key: writer });
  assert.equal(viaKey.status, 202, viaKey.text);
  await eventually(async () => receiver.received.length === 3, 5_000, 'the /v1 redelivery arrives');
  assert.equal(receiver.received[2]!.body, original.body);

  // Another user's webhook, or an event it never had, is 404 and sends nothing.
  const bobsKey = (await portal(server, bob, 'POST', '/keys', { permissions: ['read:webhooks', 'write:webhooks'] })).body.data.key;
  assert.equal((await portal(server, bob, 'POST', `/webhooks/${webhookId}/deliveries/${first.event_id}/redeliver`)).status, 404);
  assert.equal((await server.request('POST', `/v1/webhooks/${webhookId}/deliveries/${first.event_id}/redeliver`, { key: bobsKey })).status, 404);
  assert.equal((await server.request('GET', `/v1/webhooks/${webhookId}/deliveries`, { key: bobsKey })).status, 404);
  assert.equal((await portal(server, ada, 'POST', `/webhooks/${webhookId}/deliveries/evt_nothing/redeliver`)).status, 404);
  assert.equal(receiver.received.length, 3);
});

test('at most 60 redeliveries per user per hour, however many are asked at once; then 429 with Retry-After', async (t) => {
  const server = await startServer(t, { env: LOCAL });
  const receiver = await startReceiver(t, answer(204));
  const user = await signedInUser(server);
  const webhooks: string[] = [];
  // One webhook per ten requests, so each redelivery can be accepted (one at a time per event and webhook).
  for (let index = 0; index < 7; index += 1) webhooks.push((await portal(server, user, 'POST', '/webhooks', { url: `${receiver.url}/${index}`, events: ['ping'] })).body.data.id);
  await eventually(async () => receiver.received.length === 7, 10_000, 'every ping');
  const events = await Promise.all(webhooks.map(async (webhookId) => (await outcomesOf(server, user, webhookId, 1))[0].event_id as string));

  let accepted = 0;
  const refused: string[] = [];
  // Rounds of at most one redelivery in flight per webhook, all seven at once.
  for (let round = 0; round < 10; round += 1) {
    const answers = await Promise.all(webhooks.map((webhookId, index) => portal(server, user, 'POST', `/webhooks/${webhookId}/deliveries/${events[index]}/redeliver`)));
    for (const response of answers) {
      if (response.status === 202) accepted += 1;
      else if (response.status === 429) refused.push(response.headers.get('retry-after') ?? 'none');
      else assert.equal(response.status, 409, response.text);
    }
    await eventually(async () => receiver.open === 0 && server.app.store.size(DELIVERIES) === 0, 10_000, 'the round sent');
  }
  assert.equal(accepted, 60, `${accepted} accepted`);
  assert.ok(refused.length >= 1);
  for (const retryAfter of refused) assert.match(retryAfter, /^\d+$/);
  const over = await portal(server, user, 'POST', `/webhooks/${webhooks[0]}/deliveries/${events[0]}/redeliver`);
  assert.equal(over.status, 429);
  assert.match(over.body.error, /60/);
});
