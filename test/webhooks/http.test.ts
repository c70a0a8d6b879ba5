// /v1/webhooks and /admin/v1/webhooks through a real server, with real receivers on 127.0.0.1
// (WEBHOOK_ALLOW_PRIVATE=1, millisecond retries): registration and its one-time secret, the
// ping, validation, the limit of 20, isolation between users, events reaching only the owner's
// subscribed webhooks, and delivery never slowing the request that caused it.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { TestContext } from 'node:test';
import { DELIVERIES } from '../../src/domain/records.ts';
import type { DeliveryRecord } from '../../src/domain/webhook-records.ts';
import { verifySignature } from '../../src/webhooks/verify.ts';
import { ManualClock } from '../../src/clock.ts';
import { idsInOrder, newestFirst } from '../helpers/creation-order.ts';
import { startServer } from '../helpers/server.ts';
import type { TestResponse, TestServer } from '../helpers/server.ts';
import { answer, pause, startReceiver, waitFor } from './fixtures.ts';
import type { ReceivedRequest, Receiver } from './fixtures.ts';

const ALL_EVENTS = ['listing.created', 'listing.updated', 'listing.archived', 'listing.removed', 'user.updated', 'ping', 'quota.warning', 'quota.exhausted', 'key.expiring', 'plan_request.decided'];
const PERMISSIONS = ['read:webhooks', 'write:webhooks', 'read:listings', 'write:listings', 'read:users', 'write:users'];
const LOCAL = { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_DELAYS_MS: '10,20' };

function start(t: TestContext, env: Record<string, string> = LOCAL): Promise<TestServer> {
  return startServer(t, { dataDir: null, env });
}

async function register(server: TestServer, key: string, body: Record<string, unknown>) {
  const response = await server.request('POST', '/v1/webhooks', { key, body });
  assert.equal(response.status, 201, response.text);
  return response.body.data as { id: string; secret: string; created_at: string; [field: string]: unknown };
}

/** GET /v1/webhooks until `condition` holds for its data (what an owner polling the API sees). */
async function listUntil(server: TestServer, key: string, condition: (webhooks: any[]) => boolean): Promise<TestResponse> {
  const deadline = performance.now() + 30_000;
  for (;;) {
    const response = await server.request('GET', '/v1/webhooks', { key });
    if (condition(response.body.data)) return response;
    if (performance.now() > deadline) assert.fail(`GET /v1/webhooks never showed the expected state: ${response.text}`);
    await pause(10);
  }
}

interface Event {
  id: string;
  type: string;
  created_at: string;
  data: Record<string, unknown>;
}

/** Each request's parsed event, after checking its signature with `secret`. */
function signedEvents(receiver: Receiver, secret: string): Event[] {
  return receiver.received.map((request: ReceivedRequest) => {
    assert.ok(verifySignature(secret, request.headers, request.body, Math.floor(Date.now() / 1000)), `signed: ${request.body.slice(0, 80)}`);
    const event = JSON.parse(request.body) as Event;
    assert.equal(request.headers['webhook-id'], event.id);
    return event;
  });
}

test('POST /v1/webhooks → 201 with the secret once; the ping arrives signed; the list never shows the secret', async (t) => {
  const receiver = await startReceiver(t, answer(200));
  const server = await start(t);
  const { key } = await server.userWithKey('member', PERMISSIONS);

  const created = await register(server, key, { url: receiver.url, description: 'my receiver' });
  assert.match(created.id, /^wh_[A-Za-z0-9]{20}$/);
  assert.match(created.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
  assert.deepEqual(Object.keys(created).sort(), ['active', 'created_at', 'description', 'disabled_reason', 'enabled', 'events', 'id', 'last_delivery', 'secret', 'url']);
  assert.deepEqual(created.events, ALL_EVENTS, 'every kind by default');
  assert.equal(created.active, true);
  assert.equal(created.last_delivery, null);
  assert.equal(created.description, 'my receiver');

  await waitFor('the ping', () => receiver.received.length === 1);
  const [ping] = signedEvents(receiver, created.secret);
  assert.equal(ping!.type, 'ping');
  assert.equal(ping!.data.id, created.id);
  assert.equal(ping!.data.url, receiver.url);
  assert.ok(!receiver.received[0]!.body.includes(created.secret), 'the ping does not carry the secret');

  const list = await listUntil(server, key, (webhooks) => webhooks[0]?.last_delivery?.status === 'delivered');
  assert.equal(list.status, 200);
  assert.deepEqual(list.body.pagination, { page: 1, limit: 20, total: 1, total_pages: 1 });
  const [listed] = list.body.data;
  assert.deepEqual(Object.keys(listed).sort(), ['active', 'created_at', 'description', 'disabled_reason', 'enabled', 'events', 'id', 'last_delivery', 'url']);
  assert.equal(listed.last_delivery.status, 'delivered');
  assert.equal(listed.last_delivery.type, 'ping');
  assert.equal(listed.last_delivery.event_id, ping!.id);
  assert.equal(listed.last_delivery.attempts, 1);
  assert.equal(listed.last_delivery.response_status, 200);
  assert.ok(!list.text.includes(created.secret));
  assert.ok(!list.text.includes('whsec_'));
});

test('a webhook not subscribed to ping gets none', async (t) => {
  const receiver = await startReceiver(t, answer(200));
  const server = await start(t);
  const { key } = await server.userWithKey('member', PERMISSIONS);
  const created = await register(server, key, { url: receiver.url, events: ['user.updated'] });
  assert.deepEqual(created.events, ['user.updated']);
  await server.request('PUT', '/v1/users/me', { key, body: { bio: 'hello' } });
  await waitFor('the user.updated event', () => receiver.received.length === 1);
  await pause(30);
  assert.deepEqual(signedEvents(receiver, created.secret).map((event) => event.type), ['user.updated']);
});

const BAD_BODIES: Array<[string, Record<string, unknown>, string]> = [
  ['no url', { events: ['ping'] }, 'url'],
  ['url not a string', { url: 42 }, 'url'],
  ['url ftp:', { url: 'ftp://example.com/hook' }, 'url'],
  ['url javascript:', { url: 'javascript:alert(1)' }, 'url'],
  ['url not a URL', { url: 'example.com/hook' }, 'url'],
  ['url with a user name', { url: 'https://user:pass@example.com/hook' }, 'url'],
  ['url of 2049 characters', { url: `https://example.com/${'a'.repeat(2029)}` }, 'url'],
  ['events empty', { url: 'https://example.com/', events: [] }, 'events'],
  ['events not an array', { url: 'https://example.com/', events: 'ping' }, 'events'],
  ['events with an unknown kind', { url: 'https://example.com/', events: ['listing.deleted'] }, 'events'],
  ['events with a duplicate', { url: 'https://example.com/', events: ['ping', 'ping'] }, 'events'],
  ['description of 501 characters', { url: 'https://example.com/', description: 'x'.repeat(501) }, 'description'],
  ['description not a string', { url: 'https://example.com/', description: 5 }, 'description'],
  ['an unknown field', { url: 'https://example.com/', colour: 'blue' }, 'colour'],
  ['secret (read-only)', { url: 'https://example.com/', secret: 'whsec_AAAA' }, 'secret'],
  ['active (read-only)', { url: 'https://example.com/', active: false }, 'active'],
];

test('POST /v1/webhooks with a bad body → 400 naming the field', async (t) => {
  const server = await start(t);
  const { key } = await server.userWithKey('member', PERMISSIONS);
  for (const [name, body, field] of BAD_BODIES) {
    await t.test(name, async () => {
      const response = await server.request('POST', '/v1/webhooks', { key, body });
      assert.equal(response.status, 400, `${name}: ${response.text}`);
      assert.ok(response.body.details?.[field], `${name}: details name ${field} (${response.text})`);
    });
  }
  const list = await server.request('GET', '/v1/webhooks', { key });
  assert.equal(list.body.pagination.total, 0, 'nothing was registered');
});

const REFUSED_URLS = [
  'http://127.0.0.1/hook',
  'http://localhost:8080/hook',
  'http://2130706433/',
  'http://0x7f000001/',
  'http://0177.0.0.1/',
  'http://[::1]/',
  'http://[::ffff:127.0.0.1]/',
  'http://[64:ff9b::7f00:1]/',
  'http://10.0.0.8/',
  'http://169.254.169.254/latest/meta-data',
  'http://100.64.0.1/',
  'http://[fd00::1]/',
  'http://[fe80::1]/',
];

test('without WEBHOOK_ALLOW_PRIVATE, URLs naming internal addresses are refused at registration', async (t) => {
  const server = await start(t, {});
  const { key } = await server.userWithKey('member', PERMISSIONS);
  for (const url of REFUSED_URLS) {
    await t.test(url, async () => {
      const response = await server.request('POST', '/v1/webhooks', { key, body: { url } });
      assert.equal(response.status, 400, `${url}: ${response.text}`);
      assert.match(response.body.details.url, /refused/);
    });
  }
  const ok = await server.request('POST', '/v1/webhooks', { key, body: { url: 'https://hooks.example.com/in', events: ['listing.created'] } });
  assert.equal(ok.status, 201, 'a public name passes (it is checked again when sending)');
});

test('at most 20 webhooks per user → 409 for the 21st; deleting one makes room', async (t) => {
  const server = await start(t);
  const { key } = await server.userWithKey('member', PERMISSIONS);
  const other = await server.userWithKey('member', PERMISSIONS);
  const body = { url: 'https://hooks.example.com/in', events: ['listing.created'] };
  const created = await Promise.all(Array.from({ length: 20 }, () => register(server, key, body)));

  const refused = await server.request('POST', '/v1/webhooks', { key, body });
  assert.equal(refused.status, 409);
  assert.match(refused.body.error, /20 webhooks/);
  assert.equal((await server.request('POST', '/v1/webhooks', { key: other.key, body })).status, 201, 'the limit is per user');

  const page = await server.request('GET', '/v1/webhooks?limit=100', { key });
  assert.equal(page.body.pagination.total, 20);
  assert.equal((await server.request('DELETE', `/v1/webhooks/${created[0]!.id}`, { key })).status, 200);
  assert.equal((await server.request('POST', '/v1/webhooks', { key, body })).status, 201);
});

test('registrations racing each other cannot pass the limit', async (t) => {
  const server = await start(t);
  const { key } = await server.userWithKey('member', PERMISSIONS);
  const body = { url: 'https://hooks.example.com/in', events: ['listing.created'] };
  const answers = await Promise.all(Array.from({ length: 30 }, () => server.request('POST', '/v1/webhooks', { key, body })));
  assert.equal(answers.filter((response) => response.status === 201).length, 20);
  assert.equal(answers.filter((response) => response.status === 409).length, 10);
});

test('users see and delete only their own webhooks; another user’s id → 404 like an unknown one', async (t) => {
  const server = await start(t);
  const ada = await server.userWithKey('member', PERMISSIONS);
  const bob = await server.userWithKey('member', PERMISSIONS);
  const adaHook = await register(server, ada.key, { url: 'https://ada.example.com/in', events: ['listing.created'] });

  const bobList = await server.request('GET', '/v1/webhooks', { key: bob.key });
  assert.deepEqual(bobList.body.data, []);
  for (const id of [adaHook.id, 'wh_doesnotexist0000000']) {
    await t.test(id, async () => {
      const response = await server.request('DELETE', `/v1/webhooks/${id}`, { key: bob.key });
      assert.equal(response.status, 404);
      assert.deepEqual(Object.keys(response.body).sort(), ['error', 'request_id']);
      assert.equal(response.body.error, 'Webhook not found');
    });
  }
  assert.equal((await server.request('GET', '/v1/webhooks', { key: ada.key })).body.pagination.total, 1, "Ada's webhook is still there");

  const removed = await server.request('DELETE', `/v1/webhooks/${adaHook.id}`, { key: ada.key });
  assert.equal(removed.status, 200);
  assert.equal(removed.body.data.id, adaHook.id);
  assert.equal(removed.body.data.secret, undefined);
  assert.equal((await server.request('DELETE', `/v1/webhooks/${adaHook.id}`, { key: ada.key })).status, 404);
  assert.deepEqual((await server.request('GET', '/v1/webhooks', { key: ada.key })).body.data, []);
});

test('listing and profile events reach the owner’s subscribed webhooks only', async (t) => {
  const adaAll = await startReceiver(t, answer(200));
  const adaUpdates = await startReceiver(t, answer(200));
  const bobAll = await startReceiver(t, answer(204));
  const server = await start(t);
  const ada = await server.userWithKey('creator', PERMISSIONS);
  const bob = await server.userWithKey('creator', PERMISSIONS);
  const allHook = await register(server, ada.key, { url: adaAll.url });
  const updatesHook = await register(server, ada.key, { url: adaUpdates.url, events: ['listing.updated'] });
  const bobHook = await register(server, bob.key, { url: bobAll.url });
  await waitFor('the two pings', () => adaAll.received.length === 1 && bobAll.received.length === 1);

  const created = await server.request('POST', '/v1/listings', { key: ada.key, body: { title: 'Agent kit', type: 'AGENT', price: 5 } });
  assert.equal(created.status, 201);
  const listingId = created.body.data.id as string;
  assert.equal((await server.request('PUT', `/v1/listings/${listingId}`, { key: ada.key, body: { price: 7.5 } })).status, 200);
  assert.equal((await server.request('DELETE', `/v1/listings/${listingId}`, { key: ada.key })).status, 200);
  assert.equal((await server.request('PUT', '/v1/users/me', { key: ada.key, body: { bio: 'Agents, mostly' } })).status, 200);
  await waitFor("Ada's four events", () => adaAll.received.length === 5);

  const events = signedEvents(adaAll, allHook.secret);
  // One webhook gets one event at a time, in the order they happened.
  assert.deepEqual(events.map((event) => event.type), ['ping', 'listing.created', 'listing.updated', 'listing.archived', 'user.updated']);
  assert.equal(events[1]!.data.id, listingId);
  assert.equal(events[1]!.data.price, 5);
  assert.equal(events[2]!.data.price, 7.5);
  assert.equal(events[3]!.data.status, 'archived');
  assert.equal(events[4]!.data.bio, 'Agents, mostly');
  for (const event of events) assert.match(event.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  assert.equal(new Set(events.map((event) => event.id)).size, 5, 'each event has its own id');

  await waitFor('the listing.updated event', () => adaUpdates.received.length === 1);
  await pause(50);
  assert.deepEqual(signedEvents(adaUpdates, updatesHook.secret).map((event) => event.type), ['listing.updated']);
  assert.deepEqual(signedEvents(bobAll, bobHook.secret).map((event) => event.type), ['ping'], "Bob receives none of Ada's events");

  // Bob's own listing reaches Bob, and not Ada.
  await server.request('POST', '/v1/listings', { key: bob.key, body: { title: 'Bob tool', type: 'TOOL', price: 0 } });
  await waitFor("Bob's listing.created", () => bobAll.received.length === 2);
  await pause(30);
  assert.equal(adaAll.received.length, 5);
  assert.equal(adaUpdates.received.length, 1);
});

test('a receiver that hangs does not slow the request that caused the event', async (t) => {
  const hanging = await startReceiver(t, () => {});
  const server = await start(t);
  const ada = await server.userWithKey('creator', PERMISSIONS);
  await register(server, ada.key, { url: hanging.url });
  await waitFor('the ping to be waiting on the receiver', () => hanging.open === 1);

  for (let index = 0; index < 5; index += 1) {
    const response = await server.request('POST', '/v1/listings', { key: ada.key, body: { title: `Kit ${index}`, type: 'SKILL', price: 1 } });
    assert.equal(response.status, 201);
  }
  // Answered while the ping still hangs on the receiver: a request that waited for a send could
  // only end when one ended, and a send to this receiver ends only at its 10 s timeout, which
  // closes the ping's connection. (Order, not milliseconds: a busy machine cannot break it.)
  assert.equal(hanging.open, 1, 'the ping is still waiting on the receiver');
  assert.equal(hanging.received.length, 1, 'nothing but the ping has reached the receiver');
  const deliveries = [...server.app.store.values<DeliveryRecord>(DELIVERIES)];
  assert.equal(deliveries.length, 6, 'the events are queued in the store, not sent inside the requests');
});

test('410 from the receiver makes the webhook inactive, as the list shows', async (t) => {
  const receiver = await startReceiver(t, answer(410));
  const server = await start(t);
  const { key } = await server.userWithKey('member', PERMISSIONS);
  await register(server, key, { url: receiver.url });
  const [listed] = (await listUntil(server, key, (webhooks) => webhooks[0]?.active === false)).body.data;
  assert.equal(receiver.received.length, 1);
  assert.equal(listed.active, false);
  assert.equal(listed.last_delivery.status, 'failed');
  assert.equal(listed.last_delivery.response_status, 410);
});

test('DELETE drops the webhook’s undelivered events', async (t) => {
  const receiver = await startReceiver(t, answer(500));
  const server = await start(t, { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_DELAYS_MS: '60000' });
  const { key } = await server.userWithKey('member', PERMISSIONS);
  const hook = await register(server, key, { url: receiver.url });
  const pending = () => [...server.app.store.values<DeliveryRecord>(DELIVERIES)].filter((delivery) => delivery.webhook_id === hook.id);
  await waitFor('the ping to be waiting for its retry', () => pending()[0]?.status === 'retrying');
  assert.equal((await server.request('DELETE', `/v1/webhooks/${hook.id}`, { key })).status, 200);
  assert.deepEqual(pending(), []);
});

test('GET /admin/v1/webhooks lists everyone’s (or one user’s) webhooks with user_id and no secret', async (t) => {
  const server = await start(t);
  const ada = await server.userWithKey('member', PERMISSIONS);
  const bob = await server.userWithKey('member', PERMISSIONS);
  const adaHook = await register(server, ada.key, { url: 'https://ada.example.com/in', events: ['listing.created'] });
  await register(server, bob.key, { url: 'https://bob.example.com/in', events: ['listing.created'] });

  const all = await server.admin('GET', '/admin/v1/webhooks');
  assert.equal(all.status, 200);
  assert.equal(all.body.pagination.total, 2);
  assert.ok(!all.text.includes('whsec_'));

  const adas = await server.admin('GET', `/admin/v1/webhooks?user_id=${ada.userId}&page=1&limit=10`);
  assert.equal(adas.status, 200);
  assert.deepEqual(adas.body.data.map((webhook: { id: string }) => webhook.id), [adaHook.id]);
  assert.deepEqual(Object.keys(adas.body.data[0]).sort(), ['active', 'created_at', 'description', 'disabled_reason', 'enabled', 'events', 'id', 'last_delivery', 'url', 'user_id']);
  assert.equal(adas.body.data[0].user_id, ada.userId);

  assert.equal((await server.admin('GET', '/admin/v1/webhooks?user_id=')).status, 400);
  assert.equal((await server.admin('GET', '/admin/v1/webhooks?owner=x')).status, 400);
  assert.equal((await server.request('GET', '/admin/v1/webhooks', { key: ada.key })).status, 401, 'an API key is not the operator token');
});

test('webhooks made in one millisecond list as every list does: newest first, then by id, highest first', async (t) => {
  const server = await startServer(t, { dataDir: null, env: LOCAL, clock: new ManualClock(Date.UTC(2026, 0, 1, 12)) });
  const { key } = await server.userWithKey('member', PERMISSIONS);
  const made = [];
  for (let index = 0; index < 6; index += 1) made.push(await register(server, key, { url: `https://hooks.example.com/${index}` }));
  const listed = await server.request('GET', '/v1/webhooks', { key });
  assert.deepEqual(listed.body.data.map((webhook: { id: string }) => webhook.id), idsInOrder(newestFirst, ...made));
  const operator = await server.admin('GET', '/admin/v1/webhooks');
  assert.deepEqual(operator.body.data.map((webhook: { id: string }) => webhook.id), idsInOrder(newestFirst, ...made));
});

test('GET /v1/webhooks pages newest first and refuses unknown parameters', async (t) => {
  const server = await start(t);
  const { key } = await server.userWithKey('member', PERMISSIONS);
  const ids: string[] = [];
  for (let index = 0; index < 3; index += 1) {
    ids.push((await register(server, key, { url: `https://hooks.example.com/${index}`, events: ['listing.created'] })).id);
    await pause(2);
  }
  const first = await server.request('GET', '/v1/webhooks?limit=2', { key });
  assert.deepEqual(first.body.data.map((webhook: { id: string }) => webhook.id), [ids[2], ids[1]]);
  assert.deepEqual(first.body.pagination, { page: 1, limit: 2, total: 3, total_pages: 2 });
  const second = await server.request('GET', '/v1/webhooks?limit=2&page=2', { key });
  assert.deepEqual(second.body.data.map((webhook: { id: string }) => webhook.id), [ids[0]]);
  assert.equal((await server.request('GET', '/v1/webhooks?limit=0', { key })).status, 400);
  assert.equal((await server.request('GET', '/v1/webhooks?active=true', { key })).status, 400);
});
