// The portal's webhooks against a real server and a real local receiver: registration with the
// /v1 rules, a test ping received and verified with its signature, the last delivery outcomes
// (never bodies, newest first, at most 50), removal, and another user's webhook is 404.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DELIVERY_OUTCOME_ENTRIES, DELIVERY_OUTCOMES, WEBHOOKS } from '../../src/domain/records.ts';
import type { WebhookRecord } from '../../src/domain/webhook-records.ts';
import { loggedOutcomes, MAX_OUTCOMES_PER_WEBHOOK, outcomeLogged, type DeliveryOutcome } from '../../src/webhooks/outcome-log.ts';
import { verifySignature } from '../../src/webhooks/verify.ts';
import { eventually } from '../helpers/eventually.ts';
import { signedInUser, type PortalUser } from '../helpers/portal.ts';
import { freshDataDir, openStore } from '../store/helpers.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { answer, startReceiver } from '../webhooks/fixtures.ts';

const LOCAL = { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_DELAYS_MS: '10,20' };

function portal(server: TestServer, user: PortalUser, method: string, path: string, body?: unknown) {
  return server.request(method, `/portal/v1${path}`, { headers: user.headers, body });
}

test('portal webhook: register (secret once), test ping received and its signature verified, outcomes listed without bodies', async (t) => {
  const server = await startServer(t, { env: LOCAL });
  const receiver = await startReceiver(t, answer(204));
  const user = await signedInUser(server);
  // Without ping among its events, the registration queues none; the test sends one anyway.
  const made = await portal(server, user, 'POST', '/webhooks', { url: receiver.url, events: ['listing.created'], description: 'ci' });
  assert.equal(made.status, 201, made.text);
  assert.equal(made.headers.get('cache-control'), 'no-store');
  const { id, secret } = made.body.data;
  assert.match(secret, /^whsec_/);
  const listed = await portal(server, user, 'GET', '/webhooks');
  assert.equal(listed.body.data[0].id, id);
  assert.ok(!listed.text.includes(secret), 'the secret is shown once');

  const tested = await portal(server, user, 'POST', `/webhooks/${id}/test`);
  assert.equal(tested.status, 202, tested.text);
  await eventually(async () => receiver.received.length === 1, 5_000, 'the ping arrives');
  const ping = receiver.received[0]!;
  const payload = JSON.parse(ping.body);
  assert.equal(payload.type, 'ping');
  assert.equal(payload.id, tested.body.data.event_id);
  assert.equal(ping.headers['webhook-id'], payload.id);
  assert.ok(verifySignature(secret, ping.headers, ping.body, Math.floor(Date.now() / 1000)), 'signed with the webhook secret, Standard Webhooks');
  const otherSecret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
  assert.ok(!verifySignature(otherSecret, ping.headers, ping.body, Math.floor(Date.now() / 1000)), 'and with no other secret');

  let outcomes: any[] = [];
  await eventually(async () => {
    outcomes = (await portal(server, user, 'GET', `/webhooks/${id}/deliveries`)).body.data;
    return outcomes.length === 1;
  }, 5_000, 'the outcome is recorded');
  const [outcome] = outcomes;
  assert.deepEqual(Object.keys(outcome).sort(), ['at', 'attempts', 'duration_ms', 'event', 'event_id', 'next_attempt_at', 'response_status', 'status']);
  assert.equal(outcome.status, 'delivered');
  assert.equal(outcome.event, 'ping');
  assert.equal(outcome.response_status, 204);
  assert.equal(outcome.attempts, 1);
  assert.ok(Number.isInteger(outcome.duration_ms) && outcome.duration_ms >= 0);

  const audit = await server.admin('GET', `/admin/v1/audit?target_id=${id}`);
  const actions = audit.body.data.filter((entry: any) => entry.actor?.id === user.userId).map((entry: any) => entry.action);
  assert.ok(actions.includes('portal.webhook_create') && actions.includes('portal.webhook_test'), String(actions));
  assert.ok(!audit.text.includes(secret));

  const removed = await portal(server, user, 'DELETE', `/webhooks/${id}`);
  assert.equal(removed.status, 200);
  assert.equal((await portal(server, user, 'GET', `/webhooks/${id}/deliveries`)).status, 404);
  assert.equal(server.app.store.get(DELIVERY_OUTCOMES, id), undefined, 'its outcomes went with it');
  assert.equal(server.app.store.size(DELIVERY_OUTCOME_ENTRIES), 0, 'every one of them');
});

test('portal webhook outcomes: a failing receiver shows retrying then failed attempts, newest first', async (t) => {
  const server = await startServer(t, { env: LOCAL });
  const receiver = await startReceiver(t, answer(500));
  const user = await signedInUser(server);
  const made = await portal(server, user, 'POST', '/webhooks', { url: receiver.url });
  const id = made.body.data.id;
  let outcomes: any[] = [];
  await eventually(async () => {
    outcomes = (await portal(server, user, 'GET', `/webhooks/${id}/deliveries`)).body.data;
    return outcomes.some((outcome) => outcome.status === 'failed');
  }, 5_000, 'the registration ping fails for good after its retries');
  assert.deepEqual(outcomes.map((outcome) => [outcome.status, outcome.attempts, outcome.response_status]), [
    ['failed', 3, 500],
    ['retrying', 2, 500],
    ['retrying', 1, 500],
  ]);
  assert.ok(!JSON.stringify(outcomes).includes('"data"'), 'no payload');
});

test('the outcome log keeps the 50 newest, newest first, in 50 small records', async (t) => {
  const { store } = await openStore(t, freshDataDir(t, 'outcomes'));
  const webhook: WebhookRecord = { id: 'wh_1', user_id: 'usr_1', url: 'https://example.com/hook', events: ['ping'], description: '', active: true, secret: 'whsec_x', created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z', last_delivery: null };
  await store.commit(() => ({ ops: [{ op: 'put', collection: WEBHOOKS, id: webhook.id, data: webhook }], result: undefined }));
  for (let index = 1; index <= 60; index += 1) {
    const outcome: DeliveryOutcome = { at: new Date(Date.UTC(2026, 0, 1, 0, 0, index)).toISOString(), event_id: `evt_${index}`, event: 'ping', status: 'delivered', attempts: 1, response_status: 200, duration_ms: 3 };
    await store.commit((tx) => {
      const logged = outcomeLogged(tx.get(WEBHOOKS, webhook.id)!, outcome, undefined);
      return { ops: [{ op: 'put', collection: WEBHOOKS, id: webhook.id, data: logged.webhook }, ...logged.ops], result: undefined };
    });
  }
  const outcomes = loggedOutcomes(store, webhook.id);
  assert.equal(outcomes.length, MAX_OUTCOMES_PER_WEBHOOK);
  assert.equal(outcomes[0]!.event_id, 'evt_60');
  assert.equal(outcomes.at(-1)!.event_id, 'evt_11');
  assert.equal(store.size(DELIVERY_OUTCOME_ENTRIES), MAX_OUTCOMES_PER_WEBHOOK, 'one record per kept outcome, the oldest overwritten');
});

test("security: another user's webhook is 404 on delete, test and deliveries, and is left as it was", async (t) => {
  const server = await startServer(t, { env: LOCAL });
  const receiver = await startReceiver(t, answer(204));
  const owner = await signedInUser(server);
  const stranger = await signedInUser(server);
  const made = await portal(server, owner, 'POST', '/webhooks', { url: receiver.url, events: ['listing.created'] });
  const id = made.body.data.id;
  for (const [method, path] of [['DELETE', `/webhooks/${id}`], ['POST', `/webhooks/${id}/test`], ['GET', `/webhooks/${id}/deliveries`]] as const) {
    const refused = await portal(server, stranger, method, path);
    assert.equal(refused.status, 404, `${method} ${path}: ${refused.text}`);
  }
  assert.equal((await portal(server, stranger, 'GET', '/webhooks')).body.data.length, 0);
  assert.equal((await portal(server, owner, 'GET', '/webhooks')).body.data.length, 1);
  assert.equal(receiver.received.length, 0, 'no ping was sent for the stranger');
  // The /v1 rules apply: an unknown event kind or a refused URL is 400.
  assert.equal((await portal(server, owner, 'POST', '/webhooks', { url: receiver.url, events: ['everything'] })).status, 400);
  assert.equal((await portal(server, owner, 'POST', '/webhooks', { url: 'ftp://example.com' })).status, 400);
});
