// Analytics over real HTTP: each key sees only its own usage, per endpoint and per hour; the
// operator sees any key's; listing views and impressions (cached pages included) reach only
// the listings' owner; bad queries are 400; counters survive a graceful restart.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { startServer, temporaryDir, type TestServer } from '../helpers/server.ts';

const HOUR = 3_600_000;
const TEN_FIFTEEN = Date.UTC(2026, 0, 1, 10, 15);
const ANALYTICS = ['read:analytics'];
const READER = ['read:listings', 'GET /v1/listings/:id', 'read:analytics'];
const CREATOR = ['read:listings', 'GET /v1/listings/:id', 'write:listings', 'read:analytics'];
const MORNING = 'from=2026-01-01T09:00:00Z&to=2026-01-01T12:00:00Z';

async function createListing(server: TestServer, key: string, clock: ManualClock, title: string): Promise<string> {
  clock.advance(1_000); // distinct created_at, so list order is known
  const response = await server.request('POST', '/v1/listings', { key, body: { title, type: 'SKILL', price: 0 } });
  assert.equal(response.status, 201, response.text);
  return response.body.data.id;
}

async function repeat(times: number, send: () => Promise<{ status: number }>, expectedStatus: number): Promise<void> {
  for (let index = 0; index < times; index += 1) assert.equal((await send()).status, expectedStatus);
}

const pick = (endpoints: Array<{ endpoint: string }>) =>
  Object.fromEntries(endpoints.map(({ endpoint, ...counts }: any) => [endpoint, [counts.requests, counts.by_status['2xx'], counts.by_status['4xx'], counts.rate_limited]]));

test('GET /v1/analytics/usage: each key sees only its own requests, per endpoint and per hour', async (t) => {
  const clock = new ManualClock(TEN_FIFTEEN);
  const server = await startServer(t, { clock });
  const alice = await server.userWithKey('creator', CREATOR);
  const bob = await server.userWithKey('member', READER, 3);

  // 10:xx — Alice: one create, two list pages, three reads (one of an unknown id).
  const listingId = await createListing(server, alice.key, clock, 'Vector search agent');
  await repeat(2, () => server.request('GET', '/v1/listings', { key: alice.key }), 200);
  await repeat(2, () => server.request('GET', `/v1/listings/${listingId}`, { key: alice.key }), 200);
  assert.equal((await server.request('GET', '/v1/listings/lst_missing', { key: alice.key })).status, 404);
  // Bob (3 per minute): two reads, a forbidden call, then a 429.
  await repeat(2, () => server.request('GET', `/v1/listings/${listingId}`, { key: bob.key }), 200);
  assert.equal((await server.request('GET', '/v1/users/me', { key: bob.key })).status, 403);
  assert.equal((await server.request('GET', '/v1/listings', { key: bob.key })).status, 429);

  // 11:xx — Alice again, plus a path no route knows.
  clock.advance(HOUR);
  await repeat(3, () => server.request('GET', `/v1/listings/${listingId}`, { key: alice.key }), 200);
  assert.equal((await server.request('GET', `/v1/nothing/${listingId}`, { key: alice.key })).status, 404);

  const aliceUsage = await server.request('GET', `/v1/analytics/usage?${MORNING}`, { key: alice.key });
  assert.equal(aliceUsage.status, 200, aliceUsage.text);
  const usage = aliceUsage.body.data;
  assert.equal(usage.key_id, alice.keyId);
  assert.equal(usage.granularity, 'hour');
  assert.deepEqual([usage.from, usage.to], ['2026-01-01T09:00:00.000Z', '2026-01-01T12:00:00.000Z']);
  assert.deepEqual(usage.totals, { requests: 10, by_status: { '2xx': 8, '3xx': 0, '4xx': 2, '5xx': 0 }, rate_limited: 0 });
  assert.deepEqual(pick(usage.endpoints), {
    'GET /v1/listings/:id': [6, 5, 1, 0],
    'GET /v1/listings': [2, 2, 0, 0],
    'POST /v1/listings': [1, 1, 0, 0],
    'GET (unknown route)': [1, 0, 1, 0],
  });
  assert.ok(!JSON.stringify(usage.endpoints).includes(listingId), 'never a raw path with an id');
  assert.deepEqual(usage.endpoints[0], { endpoint: 'GET /v1/listings/:id', method: 'GET', route: '/v1/listings/:id', requests: 6, by_status: { '2xx': 5, '3xx': 0, '4xx': 1, '5xx': 0 }, rate_limited: 0 });
  assert.equal(usage.series.granularity, 'hour');
  assert.deepEqual(
    usage.series.points.map((point: any) => [point.start, point.requests, point.errors]),
    [
      ['2026-01-01T09:00:00.000Z', 0, 0],
      ['2026-01-01T10:00:00.000Z', 6, 1],
      ['2026-01-01T11:00:00.000Z', 4, 1],
    ],
  );
  // The window is the one the rate-limit headers of this very answer describe.
  assert.deepEqual(usage.window, {
    limit: 1000,
    remaining: Number(aliceUsage.headers.get('x-ratelimit-remaining')),
    reset: Number(aliceUsage.headers.get('x-ratelimit-reset')),
  });

  // Bob's window has room again a minute later; his usage holds only his four requests.
  clock.advance(61_000);
  const bobUsage = (await server.request('GET', `/v1/analytics/usage?${MORNING}`, { key: bob.key })).body.data;
  assert.deepEqual(bobUsage.totals, { requests: 4, by_status: { '2xx': 2, '3xx': 0, '4xx': 2, '5xx': 0 }, rate_limited: 1 });
  assert.deepEqual(pick(bobUsage.endpoints), { 'GET /v1/listings/:id': [2, 2, 0, 0], 'GET /v1/users/me': [1, 0, 1, 0], 'GET /v1/listings': [1, 0, 1, 1] });
  assert.deepEqual(bobUsage.series.points.map((point: any) => [point.requests, point.rate_limited, point.errors]), [[0, 0, 0], [4, 1, 1], [0, 0, 0]]);
  assert.deepEqual(bobUsage.window, { limit: 3, remaining: 2, reset: Math.ceil((clock.now() + 60_000) / 1000) });

  // Day granularity: one bucket per UTC day; Alice's first usage call now counts too.
  const days = (await server.request('GET', '/v1/analytics/usage?granularity=day&from=2025-12-31&to=2026-01-02', { key: alice.key })).body.data;
  assert.deepEqual(days.series.points.map((point: any) => [point.start, point.requests]), [['2025-12-31T00:00:00.000Z', 0], ['2026-01-01T00:00:00.000Z', 11]]);
});

test('defaults: the last 24 hours by hour, or the last 30 days by day, the current bucket included', async (t) => {
  const clock = new ManualClock(TEN_FIFTEEN);
  const server = await startServer(t, { clock });
  const { key } = await server.userWithKey('member', ANALYTICS);
  assert.equal((await server.request('GET', '/v1/analytics/usage', { key })).status, 200);

  const hourly = (await server.request('GET', '/v1/analytics/usage', { key })).body.data;
  assert.deepEqual([hourly.granularity, hourly.from, hourly.to], ['hour', '2025-12-31T11:00:00.000Z', '2026-01-01T11:00:00.000Z']);
  assert.equal(hourly.series.points.length, 24);
  assert.equal(hourly.series.points.at(-1).requests, 1, 'the request of a moment ago is in the last point');

  const daily = (await server.request('GET', '/v1/analytics/usage?granularity=day', { key })).body.data;
  assert.deepEqual([daily.from, daily.to], ['2025-12-03T00:00:00.000Z', '2026-01-02T00:00:00.000Z']);
  assert.equal(daily.series.points.length, 30);
  assert.equal(daily.totals.requests, 2);
});

test('bad usage queries are 400 with a message naming the parameter', async (t) => {
  const server = await startServer(t);
  const { key } = await server.userWithKey('member', ANALYTICS);
  const cases: Array<[string, RegExp]> = [
    ['granularity=week', /granularity/],
    ['granularity=', /granularity/],
    ['from=yesterday', /"from"/],
    ['to=2026-13-01', /"to"/],
    ['from=2026-02-30T00:00:00Z', /"from"/],
    ['from=2026-01-01T10:00:00', /"from"/], // no zone: ambiguous
    ['from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z', /earlier/],
    ['from=2026-01-01T00:00:00Z&to=2026-01-01T00:00:00Z', /earlier/],
    ['from=2026-01-01&to=2026-03-01', /31 days/],
    ['granularity=day&from=2024-01-01&to=2026-01-01', /366 days/],
    ['page=2', /Unknown query parameter "page"/],
    ['from=2026-01-01&from=2026-01-02', /more than once/],
  ];
  for (const [query, message] of cases) {
    await t.test(`?${query} → 400`, async () => {
      const response = await server.request('GET', `/v1/analytics/usage?${query}`, { key });
      assert.equal(response.status, 400, `${query} → 400`);
      assert.match(response.body.error, message, query);
    });
  }
  // An offset is fine (an unencoded "+" arrives as a space, and is understood).
  const offset = await server.request('GET', '/v1/analytics/usage?from=2026-01-01T12:00:00+02:00&to=2026-01-01T14:00:00%2B02:00', { key });
  assert.equal(offset.status, 200, offset.text);
  assert.deepEqual([offset.body.data.from, offset.body.data.to], ['2026-01-01T10:00:00.000Z', '2026-01-01T12:00:00.000Z']);
});

test('the analytics routes need read:analytics', async (t) => {
  const server = await startServer(t);
  const { key } = await server.userWithKey('creator', ['read:listings']);
  for (const path of ['/v1/analytics/usage', '/v1/analytics/listings']) {
    await t.test(`GET ${path} → 403`, async () => {
      const response = await server.request('GET', path, { key });
      assert.equal(response.status, 403);
      assert.ok(response.body.required.includes('read:analytics'));
    });
  }
});

test('GET /admin/v1/keys/:id/usage: any key, the same shape; last_used_at in the key list', async (t) => {
  const clock = new ManualClock(TEN_FIFTEEN);
  const server = await startServer(t, { clock });
  const carol = await server.userWithKey('member', READER, 50);
  await repeat(3, () => server.request('GET', '/v1/listings', { key: carol.key }), 200);
  clock.advance(5_000);
  await server.request('GET', '/v1/listings/lst_missing', { key: carol.key });

  const viaAdmin = await server.admin('GET', `/admin/v1/keys/${carol.keyId}/usage?${MORNING}`);
  assert.equal(viaAdmin.status, 200, viaAdmin.text);
  const viaKey = await server.request('GET', `/v1/analytics/usage?${MORNING}`, { key: carol.key });
  // The same answer, except that the key's own call now also sits in its window.
  assert.deepEqual({ ...viaAdmin.body.data, window: null }, { ...viaKey.body.data, window: null });
  assert.deepEqual(viaAdmin.body.data.window, { limit: 50, remaining: 46, reset: Math.ceil((TEN_FIFTEEN + 60_000) / 1000) });
  assert.equal(viaAdmin.body.data.totals.requests, 4);

  // The fields the dashboard's usage panel reads.
  const data = viaAdmin.body.data;
  for (const field of ['totals', 'window', 'series', 'endpoints']) assert.ok(field in data, field);
  assert.deepEqual(Object.keys(data.series).sort(), ['from', 'granularity', 'points', 'to']);
  assert.deepEqual(Object.keys(data.series.points[0]).sort(), ['by_status', 'errors', 'rate_limited', 'requests', 'start']);
  assert.deepEqual(Object.keys(data.endpoints[0]).sort(), ['by_status', 'endpoint', 'method', 'rate_limited', 'requests', 'route']);

  const keys = await server.admin('GET', '/admin/v1/keys');
  const listed = keys.body.data.find((key: { id: string }) => key.id === carol.keyId);
  assert.equal(listed.last_used_at, new Date(TEN_FIFTEEN + 5_000).toISOString());

  const unknown = await server.admin('GET', '/admin/v1/keys/key_nope/usage');
  assert.equal(unknown.status, 404);
  assert.equal(unknown.body.error, 'Key not found');
  assert.equal((await server.admin('GET', `/admin/v1/keys/${carol.keyId}/usage?granularity=minute`)).status, 400);
  assert.equal((await server.request('GET', `/admin/v1/keys/${carol.keyId}/usage`)).status, 401);
});

test('GET /v1/analytics/listings: views and impressions of your own listings only, cached pages included', async (t) => {
  const clock = new ManualClock(TEN_FIFTEEN);
  const server = await startServer(t, { clock });
  const creator = await server.userWithKey('creator', CREATOR);
  const rival = await server.userWithKey('creator', CREATOR);
  const reader = await server.userWithKey('member', READER);
  const first = await createListing(server, creator.key, clock, 'First');
  const second = await createListing(server, creator.key, clock, 'Second');
  const third = await createListing(server, creator.key, clock, 'Third');
  const rivals = await createListing(server, rival.key, clock, 'Rival');

  // k = 3 views of the first; an unknown id and a list page are not views.
  await repeat(3, () => server.request('GET', `/v1/listings/${first}`, { key: reader.key }), 200);
  await server.request('GET', '/v1/listings/lst_missing', { key: reader.key });
  // m = 4 servings of the page with all four (the first builds it, the next three come from
  // the cache), then 2 of the creator's newest two only.
  const pages: string[] = [];
  for (let serving = 0; serving < 4; serving += 1) pages.push((await server.request('GET', '/v1/listings', { key: reader.key })).text);
  assert.equal(new Set(pages).size, 1, 'the same page each time');
  await repeat(2, () => server.request('GET', `/v1/listings?owner_id=${creator.userId}&limit=2`, { key: reader.key }), 200);
  // A page that comes back 304 was still shown.
  const etag = (await server.request('GET', '/v1/listings?limit=1', { key: reader.key })).headers.get('etag')!;
  assert.equal((await server.request('GET', '/v1/listings?limit=1', { key: reader.key, headers: { 'if-none-match': etag } })).status, 304);

  const mine = await server.request('GET', '/v1/analytics/listings', { key: creator.key });
  assert.equal(mine.status, 200, mine.text);
  assert.deepEqual(mine.body.data, [
    { listing_id: first, title: 'First', status: 'active', views: 3, impressions: 4 },
    ...[
      { listing_id: second, title: 'Second', status: 'active', views: 0, impressions: 6 },
      { listing_id: third, title: 'Third', status: 'active', views: 0, impressions: 6 },
    ].sort((left, right) => (left.listing_id < right.listing_id ? -1 : 1)),
  ]);
  assert.deepEqual(mine.body.totals, { views: 3, impressions: 16 });
  assert.deepEqual(mine.body.pagination, { page: 1, limit: 20, total: 3, total_pages: 1 });
  assert.ok(!mine.text.includes(rivals), "another creator's listing never appears");

  const byImpressions = await server.request('GET', '/v1/analytics/listings?sort=impressions&limit=1&page=1', { key: creator.key });
  assert.deepEqual(byImpressions.body.data.map((row: any) => row.listing_id), [first]);
  assert.deepEqual(byImpressions.body.totals, { views: 3, impressions: 16 }, 'totals cover every listing, not the page');
  assert.deepEqual(byImpressions.body.pagination, { page: 1, limit: 1, total: 3, total_pages: 3 });

  const theirs = await server.request('GET', '/v1/analytics/listings', { key: rival.key });
  assert.deepEqual(theirs.body.data, [{ listing_id: rivals, title: 'Rival', status: 'active', views: 0, impressions: 6 }]);
  const none = await server.request('GET', '/v1/analytics/listings', { key: reader.key });
  assert.deepEqual([none.body.data, none.body.totals], [[], { views: 0, impressions: 0 }]);

  // An hour later: one more view; from/to pick the hours; an archived listing keeps its counts.
  clock.advance(HOUR);
  await server.request('GET', `/v1/listings/${first}`, { key: reader.key });
  assert.equal((await server.request('DELETE', `/v1/listings/${first}`, { key: creator.key })).status, 200);
  const lastHour = await server.request('GET', '/v1/analytics/listings?from=2026-01-01T11:00:00Z', { key: creator.key });
  assert.deepEqual(lastHour.body.data[0], { listing_id: first, title: 'First', status: 'archived', views: 1, impressions: 0 });
  assert.deepEqual(lastHour.body.totals, { views: 1, impressions: 0 });
  const allTime = await server.request('GET', '/v1/analytics/listings', { key: creator.key });
  assert.deepEqual(allTime.body.data[0], { listing_id: first, title: 'First', status: 'archived', views: 4, impressions: 4 });

  for (const query of ['sort=price', 'limit=0', 'q=x', 'from=soon', 'from=2026-01-02&to=2026-01-01']) {
    await t.test(`GET /v1/analytics/listings?${query} → 400`, async () => {
      assert.equal((await server.request('GET', `/v1/analytics/listings?${query}`, { key: creator.key })).status, 400, query);
    });
  }
});

test('counters survive a graceful restart on the same data dir', async (t) => {
  const dataDir = temporaryDir(t);
  const clock = new ManualClock(TEN_FIFTEEN);
  const before = await startServer(null, { dataDir, clock });
  const creator = await before.userWithKey('creator', CREATOR);
  const listingId = await createListing(before, creator.key, clock, 'Persistent');
  await repeat(2, () => before.request('GET', `/v1/listings/${listingId}`, { key: creator.key }), 200);
  await repeat(3, () => before.request('GET', '/v1/listings', { key: creator.key }), 200);
  const usageBefore = (await before.request('GET', `/v1/analytics/usage?${MORNING}`, { key: creator.key })).body.data;
  const listingsBefore = (await before.request('GET', '/v1/analytics/listings', { key: creator.key })).body;
  assert.deepEqual(listingsBefore.totals, { views: 2, impressions: 3 });
  // Well inside the 5 s flush interval: what is saved is saved by the close itself.
  await before.close();

  const after = await startServer(t, { dataDir, clock });
  const usageAfter = (await after.request('GET', `/v1/analytics/usage?${MORNING}`, { key: creator.key })).body.data;
  assert.deepEqual(usageAfter.totals.requests, usageBefore.totals.requests + 2, 'both analytics calls made before the restart count');
  assert.deepEqual(usageAfter.series.points[1].requests, usageBefore.series.points[1].requests + 2);
  assert.deepEqual(pick(usageAfter.endpoints)['GET /v1/listings/:id'], [2, 2, 0, 0]);
  const listingsAfter = (await after.request('GET', '/v1/analytics/listings', { key: creator.key })).body;
  assert.deepEqual(listingsAfter.data, listingsBefore.data);
  const keys = await after.admin('GET', '/admin/v1/keys');
  assert.equal(keys.body.data[0].last_used_at, new Date(clock.now()).toISOString());
  await after.close();
});

test('MARKETPLACE_ANALYTICS=0 turns counting off: requests and views are not counted, the endpoints still answer', async (t) => {
  const server = await startServer(t, { env: { MARKETPLACE_ANALYTICS: '0' } });
  const { key } = await server.userWithKey('creator', ['read:listings', 'write:listings', 'read:analytics']);
  const created = await server.request('POST', '/v1/listings', { key, body: { title: 'x', type: 'TOOL', price: 1 } });
  await server.request('GET', `/v1/listings/${created.body.data.id}`, { key });
  await server.request('GET', '/v1/listings', { key });
  const usage = await server.request('GET', '/v1/analytics/usage', { key });
  assert.equal(usage.status, 200);
  assert.equal(usage.body.data.totals.requests, 0);
  const listings = await server.request('GET', '/v1/analytics/listings', { key });
  assert.equal(listings.status, 200);
  assert.deepEqual(listings.body.totals, { views: 0, impressions: 0 });
});

test('HEAD is not a view nor an impression: only a GET shows a listing or a page', async (t) => {
  const clock = new ManualClock(TEN_FIFTEEN);
  const server = await startServer(t, { clock });
  const creator = await server.userWithKey('creator', CREATOR);
  const reader = await server.userWithKey('member', READER);
  const listing = await createListing(server, creator.key, clock, 'Headed');

  await repeat(3, () => server.request('HEAD', `/v1/listings/${listing}`, { key: reader.key }), 200);
  await repeat(2, () => server.request('HEAD', '/v1/listings', { key: reader.key }), 200);
  await server.request('GET', `/v1/listings/${listing}`, { key: reader.key });

  const mine = await server.request('GET', '/v1/analytics/listings', { key: creator.key });
  assert.equal(mine.status, 200, mine.text);
  assert.deepEqual(mine.body.totals, { views: 1, impressions: 0 }, 'one GET by id; the HEADs counted nothing');
});
