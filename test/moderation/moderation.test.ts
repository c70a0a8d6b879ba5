// The operator's moderation routes over HTTP: one user with counts, suspension and its effect
// on keys, lists, look-ups by id and webhooks, unsuspension, listing removal and restore, and
// the list of every listing with its filters.

import assert from 'node:assert/strict';
import test, { type TestContext } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { idsInOrder, newestFirst } from '../helpers/creation-order.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { answer, pause, startReceiver, waitFor } from '../webhooks/fixtures.ts';

const EVERYTHING = ['read:listings', 'write:listings', 'read:users', 'write:users', 'read:webhooks', 'write:webhooks'];
const LOCAL_WEBHOOKS = { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_DELAYS_MS: '10,20' };

async function start(t: TestContext): Promise<TestServer> {
  return startServer(t, { dataDir: null, env: LOCAL_WEBHOOKS });
}

async function createListing(server: TestServer, key: string, title: string, extra: Record<string, unknown> = {}): Promise<{ id: string; created_at: string; [field: string]: unknown }> {
  const response = await server.request('POST', '/v1/listings', { key, body: { title, type: 'PROMPT', price: 5, ...extra } });
  assert.equal(response.status, 201, response.text);
  return response.body.data;
}

async function listedIds(server: TestServer, key: string): Promise<string[]> {
  const response = await server.request('GET', '/v1/listings?limit=100', { key });
  assert.equal(response.status, 200, response.text);
  return response.body.data.map((listing: { id: string }) => listing.id);
}

test('GET /admin/v1/users/:id → the full user with counts of listings, keys and webhooks; unknown id → 404', async (t) => {
  const server = await start(t);
  const creator = await server.userWithKey('creator', EVERYTHING);
  await server.createKey(creator.userId);
  await createListing(server, creator.key, 'One');
  await createListing(server, creator.key, 'Two');
  const receiver = await startReceiver(t, answer(200));
  assert.equal((await server.request('POST', '/v1/webhooks', { key: creator.key, body: { url: receiver.url } })).status, 201);

  const shown = await server.admin('GET', `/admin/v1/users/${creator.userId}`);
  assert.equal(shown.status, 200, shown.text);
  assert.equal(shown.body.data.id, creator.userId);
  assert.equal(shown.body.data.status, 'active');
  assert.equal(shown.body.data.suspended_at, null);
  assert.equal(typeof shown.body.data.email, 'string');
  assert.deepEqual(shown.body.data.counts, { listings: 2, keys: 2, active_keys: 2, webhooks: 1 });

  const missing = await server.admin('GET', '/admin/v1/users/usr_doesnotexist');
  assert.equal(missing.status, 404);
  assert.match(missing.body.error, /User not found/);
});

test('POST /admin/v1/users/:id/suspend: reason required; keys get 403 after the key and limit checks; listings hidden; 409 twice', async (t) => {
  const server = await start(t);
  const creator = await server.userWithKey('creator', EVERYTHING);
  const viewer = await server.userWithKey('member', ['read:listings', 'read:users']);
  const listing = await createListing(server, creator.key, 'Hidden while suspended');
  assert.ok((await listedIds(server, viewer.key)).includes(listing.id));

  for (const body of [{}, { reason: '' }, { reason: 7 }, { reason: 'x', extra: 1 }]) {
    await t.test(`suspend with ${JSON.stringify(body)} → 400`, async () => {
      const refused = await server.admin('POST', `/admin/v1/users/${creator.userId}/suspend`, body);
      assert.equal(refused.status, 400, `${JSON.stringify(body)} → ${refused.text}`);
    });
  }
  assert.equal((await server.request('GET', '/v1/users/me', { key: creator.key })).status, 200, 'a refused suspension changes nothing');

  const suspended = await server.admin('POST', `/admin/v1/users/${creator.userId}/suspend`, { reason: 'spam' });
  assert.equal(suspended.status, 200, suspended.text);
  assert.equal(suspended.body.data.status, 'suspended');
  assert.equal(suspended.body.data.suspension_reason, 'spam');
  assert.ok(!Number.isNaN(Date.parse(suspended.body.data.suspended_at)));

  // Every /v1 request of the suspended user's key: 403 naming the suspension, rate-limit headers
  // set (the limit check came first), whatever the route, known or not.
  for (const [method, path] of [['GET', '/v1/users/me'], ['GET', '/v1/listings'], ['POST', '/v1/listings'], ['GET', '/v1/no/such/route'], ['GET', `/v1/listings/${listing.id}`]]) {
    await t.test(`${method} ${path} → 403`, async () => {
      const refused = await server.request(method!, path!, { key: creator.key, body: method === 'POST' ? { title: 'x', type: 'TOOL', price: 1 } : undefined });
      assert.equal(refused.status, 403, `${method} ${path}`);
      assert.match(refused.body.error, /suspended/);
      assert.ok(refused.headers.get('x-ratelimit-remaining'), 'limit headers: the limit was checked first');
    });
  }
  // The key check still comes first.
  assert.equal((await server.request('GET', '/v1/users/me', { key: 'mk_wrong' })).status, 401);

  // Its listings leave the lists and answer 404 by id to everyone else.
  assert.ok(!(await listedIds(server, viewer.key)).includes(listing.id));
  const byOwner = await server.request('GET', `/v1/listings?owner_id=${creator.userId}`, { key: viewer.key });
  assert.deepEqual(byOwner.body.data, []);
  const byQuery = await server.request('GET', '/v1/listings?q=hidden', { key: viewer.key });
  assert.deepEqual(byQuery.body.data, []);
  const lookedUp = await server.request('GET', `/v1/listings/${listing.id}`, { key: viewer.key });
  assert.equal(lookedUp.status, 404);
  assert.match(lookedUp.body.error, /Listing not found/);

  const again = await server.admin('POST', `/admin/v1/users/${creator.userId}/suspend`, { reason: 'again' });
  assert.equal(again.status, 409);
  assert.equal((await server.admin('POST', '/admin/v1/users/usr_nobody/suspend', { reason: 'x' })).status, 404);
});

test('a suspended key over its limit gets 429, not 403 (limit before suspension)', async (t) => {
  const server = await start(t);
  const limited = await server.userWithKey('member', ['read:listings'], 2);
  await server.admin('POST', `/admin/v1/users/${limited.userId}/suspend`, { reason: 'abuse' });
  const statuses: number[] = [];
  for (let index = 0; index < 4; index += 1) statuses.push((await server.request('GET', '/v1/listings', { key: limited.key })).status);
  assert.deepEqual(statuses, [403, 403, 429, 429]);
});

test('POST /admin/v1/users/:id/unsuspend: keys work again and listings reappear; 409 when not suspended', async (t) => {
  const server = await start(t);
  const creator = await server.userWithKey('creator', EVERYTHING);
  const viewer = await server.userWithKey('member', ['read:listings']);
  const listing = await createListing(server, creator.key, 'Back again');
  assert.equal((await server.admin('POST', `/admin/v1/users/${creator.userId}/unsuspend`)).status, 409);
  await server.admin('POST', `/admin/v1/users/${creator.userId}/suspend`, { reason: 'check' });
  assert.ok(!(await listedIds(server, viewer.key)).includes(listing.id));

  const unsuspended = await server.admin('POST', `/admin/v1/users/${creator.userId}/unsuspend`);
  assert.equal(unsuspended.status, 200, unsuspended.text);
  assert.equal(unsuspended.body.data.status, 'active');
  assert.equal(unsuspended.body.data.suspended_at, null);
  assert.equal(unsuspended.body.data.suspension_reason, null);
  assert.equal((await server.request('GET', '/v1/users/me', { key: creator.key })).status, 200);
  assert.ok((await listedIds(server, viewer.key)).includes(listing.id));
  assert.equal((await server.request('GET', `/v1/listings/${listing.id}`, { key: viewer.key })).status, 200);
});

test("a suspended user's webhooks receive nothing: no event is sent while suspended, and sending resumes after", async (t) => {
  const server = await start(t);
  const creator = await server.userWithKey('creator', EVERYTHING);
  const receiver = await startReceiver(t, answer(200));
  const registered = await server.request('POST', '/v1/webhooks', { key: creator.key, body: { url: receiver.url } });
  assert.equal(registered.status, 201);
  await waitFor('the ping', () => receiver.received.length === 1);
  const listing = await createListing(server, creator.key, 'Watched');
  await waitFor('listing.created', () => receiver.received.length === 2);

  await server.admin('POST', `/admin/v1/users/${creator.userId}/suspend`, { reason: 'quiet please' });
  // Operator actions that would produce events for this user while suspended.
  assert.equal((await server.admin('PATCH', `/admin/v1/users/${creator.userId}`, { bio: 'changed while suspended' })).status, 200);
  assert.equal((await server.admin('POST', `/admin/v1/listings/${listing.id}/remove`, { reason: 'while suspended' })).status, 200);
  assert.equal((await server.admin('POST', `/admin/v1/listings/${listing.id}/restore`)).status, 200);
  await pause(300);
  assert.equal(receiver.received.length, 2, `nothing more arrived: ${receiver.received.map((request) => request.body).join('\n')}`);

  await server.admin('POST', `/admin/v1/users/${creator.userId}/unsuspend`);
  assert.equal((await server.request('PUT', `/v1/listings/${listing.id}`, { key: creator.key, body: { price: 9 } })).status, 200);
  await waitFor('listing.updated after the suspension', () => receiver.received.length === 3);
  assert.equal(JSON.parse(receiver.received[2]!.body).type, 'listing.updated');
});

test("a delivery pending when its owner is suspended is dropped, not sent", async (t) => {
  const server = await startServer(t, { dataDir: null, env: { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_DELAYS_MS: '400' } });
  const creator = await server.userWithKey('creator', EVERYTHING);
  // The first attempt is answered 500 only once the suspension is in place, so the retry is
  // scheduled (400 ms later) after it however slowly the machine runs.
  let suspended!: () => void;
  const suspension = new Promise<void>((resolve) => (suspended = resolve));
  let failFirst = true;
  const receiver = await startReceiver(t, (_request, response) => {
    const status = failFirst ? 500 : 200;
    const answerWith = () => response.writeHead(status).end();
    if (failFirst) void suspension.then(answerWith);
    else answerWith();
    failFirst = false;
  });
  const registered = await server.request('POST', '/v1/webhooks', { key: creator.key, body: { url: receiver.url, events: ['listing.created'] } });
  assert.equal(registered.status, 201);
  await createListing(server, creator.key, 'Retried');
  await waitFor('the first attempt', () => receiver.received.length === 1);
  await server.admin('POST', `/admin/v1/users/${creator.userId}/suspend`, { reason: 'mid-retry' });
  suspended();
  await pause(900);
  assert.equal(receiver.received.length, 1, 'the retry was not sent');
});

test('POST /admin/v1/listings/:id/remove and /restore: lists, look-ups, owner PUT 409, listing.removed event', async (t) => {
  const server = await start(t);
  const creator = await server.userWithKey('creator', EVERYTHING);
  const viewer = await server.userWithKey('member', ['read:listings']);
  const receiver = await startReceiver(t, answer(200));
  assert.equal((await server.request('POST', '/v1/webhooks', { key: creator.key, body: { url: receiver.url, events: ['listing.removed'] } })).status, 201);
  const listing = await createListing(server, creator.key, 'Trademark trouble');

  for (const body of [{}, { reason: '   ' }, { reason: 'x'.repeat(501) }]) {
    await t.test(`remove with ${JSON.stringify(body).slice(0, 40)} → 400`, async () => {
      assert.equal((await server.admin('POST', `/admin/v1/listings/${listing.id}/remove`, body)).status, 400, JSON.stringify(body).slice(0, 40));
    });
  }
  assert.equal((await server.admin('POST', '/admin/v1/listings/lst_nothing/remove', { reason: 'x' })).status, 404);

  const removed = await server.admin('POST', `/admin/v1/listings/${listing.id}/remove`, { reason: 'infringes a trademark' });
  assert.equal(removed.status, 200, removed.text);
  assert.equal(removed.body.data.status, 'removed');
  assert.equal(removed.body.data.removal_reason, 'infringes a trademark');
  assert.ok(!Number.isNaN(Date.parse(removed.body.data.removed_at)));

  assert.ok(!(await listedIds(server, viewer.key)).includes(listing.id));
  assert.ok(!(await listedIds(server, creator.key)).includes(listing.id), 'gone from lists for the owner too');
  assert.equal((await server.request('GET', `/v1/listings/${listing.id}`, { key: viewer.key })).status, 404);
  const ownView = await server.request('GET', `/v1/listings/${listing.id}`, { key: creator.key });
  assert.equal(ownView.status, 200);
  assert.equal(ownView.body.data.status, 'removed');
  assert.equal(ownView.body.data.removal_reason, 'infringes a trademark');
  const put = await server.request('PUT', `/v1/listings/${listing.id}`, { key: creator.key, body: { title: 'Renamed' } });
  assert.equal(put.status, 409);
  assert.match(put.body.error, /removed/);
  assert.equal((await server.request('DELETE', `/v1/listings/${listing.id}`, { key: creator.key })).status, 409);
  assert.equal((await server.admin('POST', `/admin/v1/listings/${listing.id}/remove`, { reason: 'twice' })).status, 409);

  await waitFor('listing.removed', () => receiver.received.length === 1);
  const event = JSON.parse(receiver.received[0]!.body);
  assert.equal(event.type, 'listing.removed');
  assert.equal(event.data.id, listing.id);
  assert.equal(event.data.status, 'removed');

  const restored = await server.admin('POST', `/admin/v1/listings/${listing.id}/restore`);
  assert.equal(restored.status, 200, restored.text);
  assert.equal(restored.body.data.status, 'active');
  assert.equal('removal_reason' in restored.body.data, false);
  assert.equal('removed_at' in restored.body.data, false);
  assert.ok((await listedIds(server, viewer.key)).includes(listing.id));
  assert.equal((await server.request('GET', `/v1/listings/${listing.id}`, { key: viewer.key })).status, 200);
  assert.equal((await server.request('PUT', `/v1/listings/${listing.id}`, { key: creator.key, body: { title: 'Renamed' } })).status, 200);
  assert.equal((await server.admin('POST', `/admin/v1/listings/${listing.id}/restore`)).status, 409);
});

test('GET /admin/v1/listings: every status, filters status, owner_id and q, paginated, bad query → 400', async (t) => {
  // The clock stands still, so all three listings share one millisecond: their ids decide the
  // order, as on a fast machine (where the order they were made in once made this test flaky).
  const server = await startServer(t, { dataDir: null, clock: new ManualClock(Date.UTC(2026, 0, 1, 12)) });
  const alice = await server.userWithKey('creator', EVERYTHING);
  const bob = await server.userWithKey('creator', EVERYTHING);
  const active = await createListing(server, alice.key, 'Alpha prompt', { tags: ['needle'] });
  const archived = await createListing(server, alice.key, 'Beta prompt');
  const removed = await createListing(server, bob.key, 'Gamma tool', { description: 'has the NEEDLE inside' });
  assert.ok(active.created_at === removed.created_at, 'one millisecond');
  await server.request('DELETE', `/v1/listings/${archived.id}`, { key: alice.key });
  await server.admin('POST', `/admin/v1/listings/${removed.id}/remove`, { reason: 'spam' });
  const inOrder = (...listings: { id: string; created_at: string }[]) => idsInOrder(newestFirst, ...listings);

  const all = await server.admin('GET', '/admin/v1/listings');
  assert.equal(all.status, 200);
  assert.deepEqual(all.body.data.map((listing: { id: string }) => listing.id), inOrder(removed, archived, active), 'newest first, ties by id');
  assert.equal(all.body.pagination.total, 3);

  const ids = async (query: string) => (await server.admin('GET', `/admin/v1/listings?${query}`)).body.data.map((listing: { id: string }) => listing.id);
  assert.deepEqual(await ids('status=removed'), [removed.id]);
  assert.deepEqual(await ids('status=archived'), [archived.id]);
  assert.deepEqual(await ids(`owner_id=${alice.userId}`), inOrder(archived, active));
  assert.deepEqual(await ids('q=needle'), inOrder(removed, active));
  assert.deepEqual(await ids(`q=needle&owner_id=${bob.userId}&status=removed`), [removed.id]);
  const page = await server.admin('GET', '/admin/v1/listings?limit=2&page=2');
  assert.deepEqual(page.body.data.map((listing: { id: string }) => listing.id), inOrder(removed, archived, active).slice(2));
  assert.deepEqual(page.body.pagination, { page: 2, limit: 2, total: 3, total_pages: 2 });

  for (const query of ['status=deleted', 'limit=0', 'sort=price', `q=${'x'.repeat(201)}`]) {
    await t.test(`GET /admin/v1/listings?${query.slice(0, 30)} → 400`, async () => {
      const refused = await server.admin('GET', `/admin/v1/listings?${query}`);
      assert.equal(refused.status, 400, query.slice(0, 30));
    });
  }
  assert.equal((await server.request('GET', '/admin/v1/listings')).status, 401, 'operator token required');
});
