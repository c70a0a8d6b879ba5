// The webhook rules (src/resources/webhooks.ts, and the test ping of running-webhooks.ts) as tables, without a server: a registration
// body in, the registration read or the 400 naming the field; a user and a webhook id in, the
// ops a registration, removal or test ping would commit, or the refusal (20 webhooks at most,
// another user's webhook answered as a missing one). Decisions run on a memory store's
// Transaction; the outbox is the app's, kept current from the store's changes.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { actingUser } from '../../src/domain/actor.ts';
import { EVENT_TYPES } from '../../src/domain/events.ts';
import { WEBHOOKS } from '../../src/domain/records.ts';
import type { WebhookRecord } from '../../src/domain/webhook-records.ts';
import { SlidingWindowLimiter } from '../../src/limits/sliding-window.ts';
import { decideListingCreate } from '../../src/resources/listings.ts';
import {
  decideWebhookRegistration,
  decideWebhookRemoval,
  MAX_WEBHOOKS_PER_USER,
  ownWebhook,
  readWebhookRegistration,
  takeRedeliveryRequest,
} from '../../src/resources/webhooks.ts';
import { decideWebhookTestPing } from '../../src/resources/running-webhooks.ts';
import { REDELIVERY_LIMIT } from '../../src/webhooks/redelivery.ts';
import { assertReadings, aUser, commitDecision, decideOnly, openRulesStore, opSummary, refusalOf, seedOps } from './rules-store.ts';

const owner = aUser('usr_owner', 'creator');
const other = aUser('usr_other', 'member');
const URL = 'https://hooks.example.com/in';

test('reading a registration: the url as it will be dialled, every event by default, or one 400 naming the field', async () => {
  await assertReadings([
    { body: { url: URL }, read: { url: URL, events: [...EVENT_TYPES], description: '' } },
    { body: { url: 'HTTPS://Hooks.Example.com:443/in', events: ['listing.created'], description: 'mine' }, read: { url: URL, events: ['listing.created'], description: 'mine' } },
    { body: {}, refused: ['url'] },
    { body: { url: 'ftp://hooks.example.com/in' }, refused: ['url'] },
    { body: { url: 'http://127.0.0.1/in' }, refused: ['url'] },
    { body: { url: URL, events: [] }, refused: ['events'] },
    { body: { url: URL, events: ['listing.created', 'listing.created'] }, refused: ['events'] },
    { body: { url: URL, events: ['listing.sold'] }, refused: ['events'] },
    { body: { url: URL, description: 'x'.repeat(501) }, refused: ['description'] },
    { body: { url: URL, secret: 'mine' }, refused: ['secret'] },
  ], (body) => readWebhookRegistration(body, false));
  assert.equal(readWebhookRegistration({ url: 'http://127.0.0.1/in' }, true).url, 'http://127.0.0.1/in', 'private addresses when allowed (development)');
});

test('deciding registrations: the webhook, its owner\'s targets and its ping in one write, up to 20; the 21st is 409', async (t) => {
  const { store, clock, outbox } = await openRulesStore(t);
  await store.write(seedOps({ users: [owner] }));
  const fields = readWebhookRegistration({ url: URL }, false);

  const first = await commitDecision(store, (tx) => decideWebhookRegistration(tx, actingUser(owner), { fields, outbox }, clock.now()));
  assert.deepEqual(opSummary(first.ops), ['put webhooks', 'put webhook_targets', 'put events', 'put deliveries']);
  assert.deepEqual({ user_id: first.result.user_id, active: first.result.active, created_at: first.result.created_at }, { user_id: owner.id, active: true, created_at: '2026-01-01T00:00:00.000Z' });
  assert.match(first.result.secret, /^whsec_/);

  const noPing = readWebhookRegistration({ url: URL, events: ['listing.created'] }, false);
  const quiet = await decideOnly(store, (tx) => decideWebhookRegistration(tx, actingUser(owner), { fields: noPing, outbox }, clock.now()));
  assert.deepEqual(opSummary(quiet.ops), ['put webhooks', 'put webhook_targets'], 'no ping for a webhook that does not take pings');

  for (let count = 1; count < MAX_WEBHOOKS_PER_USER; count += 1) await commitDecision(store, (tx) => decideWebhookRegistration(tx, actingUser(owner), { fields: noPing, outbox }, clock.now()));
  assert.equal(store.size(WEBHOOKS), MAX_WEBHOOKS_PER_USER);
  const refusal = await refusalOf(() => decideOnly(store, (tx) => decideWebhookRegistration(tx, actingUser(owner), { fields, outbox }, clock.now())));
  assert.deepEqual(refusal, { status: 409, message: 'You already have 20 webhooks, the most allowed. Delete one before registering another.', fields: [] });
  assert.equal(await refusalOf(() => decideOnly(store, (tx) => decideWebhookRegistration(tx, actingUser(other), { fields, outbox }, clock.now()))), null, 'the cap is per user');
});

test('a listing created after a registration carries its event and delivery in the same write', async (t) => {
  const { store, clock, outbox } = await openRulesStore(t);
  await store.write(seedOps({ users: [owner] }));
  await commitDecision(store, (tx) => decideWebhookRegistration(tx, actingUser(owner), { fields: readWebhookRegistration({ url: URL, events: ['listing.created'] }, false), outbox }, clock.now()));
  const decided = await decideOnly(store, (tx) => decideListingCreate(tx, actingUser(owner), { fields: { title: 'T', type: 'TOOL', price: 1 }, outbox }, clock.now()));
  assert.deepEqual(opSummary(decided.ops), ['put listings', 'put events', 'put deliveries', 'put webhook_targets']);
});

test('removal, test ping and lookup: the owner\'s webhook only; anyone else\'s is a missing one', async (t) => {
  const { store, clock, outbox } = await openRulesStore(t);
  await store.write(seedOps({ users: [owner, other] }));
  const { result: webhook } = await commitDecision(store, (tx) => decideWebhookRegistration(tx, actingUser(owner), { fields: readWebhookRegistration({ url: URL }, false), outbox }, clock.now()));
  const missing = { status: 404, message: 'Webhook not found', fields: [] };

  const cases = [
    { userId: other.id, webhookId: webhook.id, found: false },
    { userId: owner.id, webhookId: 'wh_missing', found: false },
    { userId: owner.id, webhookId: webhook.id, found: true },
  ];
  for (const { userId, webhookId, found } of cases) {
    const expected = found ? null : missing;
    const actor = actingUser(userId === owner.id ? owner : other);
    assert.deepEqual(await refusalOf(() => ownWebhook(store, webhookId, userId)), expected, `lookup ${webhookId} by ${userId}`);
    assert.deepEqual(await refusalOf(() => decideOnly(store, (tx) => decideWebhookTestPing(tx, actor, { webhookId, outbox }, clock.now()))), expected, `ping ${webhookId} by ${userId}`);
    assert.deepEqual(await refusalOf(() => decideOnly(store, (tx) => decideWebhookRemoval(tx, actor, { webhookId }, clock.now()))), expected, `removal ${webhookId} by ${userId}`);
  }

  const ping = await decideOnly(store, (tx) => decideWebhookTestPing(tx, actingUser(owner), { webhookId: webhook.id, outbox }, clock.now()));
  assert.deepEqual(opSummary(ping.ops), ['put events', 'put deliveries']);
  assert.match(ping.result.eventId!, /^evt_/);

  // The registration's ping is still waiting: the removal takes its delivery with the webhook.
  const removal = await decideOnly(store, (tx) => decideWebhookRemoval(tx, actingUser(owner), { webhookId: webhook.id }, clock.now()));
  assert.deepEqual(opSummary(removal.ops), ['del webhooks', 'put webhook_targets', 'del deliveries']);

  const switchedOff: WebhookRecord = { ...webhook, active: false };
  await store.write([{ op: 'put', collection: WEBHOOKS, id: webhook.id, data: switchedOff }]);
  assert.deepEqual(await refusalOf(() => decideOnly(store, (tx) => decideWebhookTestPing(tx, actingUser(owner), { webhookId: webhook.id, outbox }, clock.now()))), {
    status: 409,
    message: 'This webhook is switched off (its receiver answered 410 Gone); register it again to receive events.',
    fields: [],
  });
});

test('a redelivery turn is taken only for the user\'s own webhook, and refused with 429 past the hour\'s limit', async (t) => {
  const { store, clock, outbox } = await openRulesStore(t);
  await store.write(seedOps({ users: [owner, other] }));
  const { result: webhook } = await commitDecision(store, (tx) => decideWebhookRegistration(tx, actingUser(owner), { fields: readWebhookRegistration({ url: URL }, false), outbox }, clock.now()));
  const limiter = new SlidingWindowLimiter({ monotonicNow: () => clock.monotonic(), windowMs: 60 * 60 * 1000 });

  for (let asked = 0; asked < REDELIVERY_LIMIT + 5; asked += 1) {
    assert.equal((await refusalOf(() => takeRedeliveryRequest(store, limiter, webhook.id, other.id)))?.status, 404, 'asking about another\'s webhook costs no turn');
  }
  for (let taken = 0; taken < REDELIVERY_LIMIT; taken += 1) assert.equal(await refusalOf(() => takeRedeliveryRequest(store, limiter, webhook.id, owner.id)), null);
  assert.equal((await refusalOf(() => takeRedeliveryRequest(store, limiter, webhook.id, owner.id)))?.status, 429);
});
