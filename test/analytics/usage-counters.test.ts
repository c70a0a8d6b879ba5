// UsageCounters without HTTP: hourly buckets and their day roll-up, per-endpoint tallies,
// views and impressions (cached pages included), snapshots flushed to the store and read back
// by a new instance, retention, and a store that refuses or is closed.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { DAY_MS, HOUR_MS } from '../../src/analytics/buckets.ts';
import type { SeriesRange } from '../../src/analytics/reader.ts';
import { UsageCounters } from '../../src/analytics/usage-counters.ts';
import { ManualClock } from '../../src/clock.ts';
import { USAGE } from '../../src/domain/records.ts';
import { nodeFileSystem, type FileSystem } from '../../src/store/files.ts';
import { Store, type StoredRecord } from '../../src/store/store.ts';

const START = Date.UTC(2026, 0, 1); // midnight UTC
const at = (hours: number, minutes = 0) => START + hours * HOUR_MS + minutes * 60_000;
const hourRange = (fromHour: number, toHour: number): SeriesRange => ({ granularity: 'hour', fromMs: at(fromHour), toMs: at(toHour) });

async function memoryCounters(options: { retentionDays?: number; clock?: ManualClock } = {}) {
  const clock = options.clock ?? new ManualClock(at(10));
  const store = await Store.open({ dataDir: null });
  const warnings: string[] = [];
  const counters = new UsageCounters({ store, clock, retentionDays: options.retentionDays, warn: (message) => warnings.push(message) });
  return { clock, store, counters, warnings };
}

function tempDir(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'usage-counters-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function usageRecords(store: Store): StoredRecord[] {
  return [...store.values<StoredRecord>(USAGE)].sort((left, right) => (left.id < right.id ? -1 : 1));
}

/** The record ids with the random part of a listing-counts id left out: `listings@<hour>/…`. */
function recordNames(store: Store): string[] {
  return usageRecords(store).map((record) => record.id.replace(/^(listings@[^/]+\/).*$/, '$1…'));
}

/** What the listing-counts records of `hour` (ISO) hold, as "<views>/<impressions>" → ids. */
function listingCountsOf(store: Store, hour: string): Array<Record<string, string>> {
  return usageRecords(store)
    .filter((record) => record.id.startsWith(`listings@${hour}/`))
    .map((record) => (record as StoredRecord & { counts: Record<string, string> }).counts);
}

test('requests land in the UTC hour they were made in; empty hours of the range are zero', async () => {
  const { counters } = await memoryCounters();
  counters.recordRequest('key_a', 'GET /v1/listings', 200, at(10, 5));
  counters.recordRequest('key_a', 'GET /v1/listings', 304, at(10, 59));
  counters.recordRequest('key_a', 'GET /v1/listings/:id', 404, at(11, 0));
  counters.recordRequest('key_a', 'GET /v1/listings', 429, at(11, 30));
  counters.recordRequest('key_a', 'POST /v1/listings', 500, at(13, 1));

  const report = counters.keyUsage('key_a', hourRange(9, 14));
  assert.deepEqual(
    report.points.map((point) => [point.start, point.requests, point.rate_limited, point.errors]),
    [
      ['2026-01-01T09:00:00.000Z', 0, 0, 0],
      ['2026-01-01T10:00:00.000Z', 2, 0, 0],
      ['2026-01-01T11:00:00.000Z', 2, 1, 1],
      ['2026-01-01T12:00:00.000Z', 0, 0, 0],
      ['2026-01-01T13:00:00.000Z', 1, 0, 1],
    ],
  );
  assert.deepEqual(report.points[1]!.by_status, { '2xx': 1, '3xx': 1, '4xx': 0, '5xx': 0 });
  assert.deepEqual(report.totals, { requests: 5, by_status: { '2xx': 1, '3xx': 1, '4xx': 2, '5xx': 1 }, rate_limited: 1 });

  // A narrower range counts only its own hours.
  assert.equal(counters.keyUsage('key_a', hourRange(11, 12)).totals.requests, 2);
});

test('per-endpoint counts use the route pattern, most requests first, ties by name', async () => {
  const { counters } = await memoryCounters();
  for (let index = 0; index < 3; index += 1) counters.recordRequest('key_a', 'GET /v1/listings/:id', 200, at(10, index));
  counters.recordRequest('key_a', 'GET /v1/listings/:id', 404, at(10, 4));
  counters.recordRequest('key_a', 'POST /v1/listings', 201, at(11, 0));
  counters.recordRequest('key_a', 'GET /v1/listings', 429, at(11, 1));

  const { endpoints } = counters.keyUsage('key_a', hourRange(0, 24));
  assert.deepEqual(endpoints, [
    { endpoint: 'GET /v1/listings/:id', method: 'GET', route: '/v1/listings/:id', requests: 4, by_status: { '2xx': 3, '3xx': 0, '4xx': 1, '5xx': 0 }, rate_limited: 0 },
    { endpoint: 'GET /v1/listings', method: 'GET', route: '/v1/listings', requests: 1, by_status: { '2xx': 0, '3xx': 0, '4xx': 1, '5xx': 0 }, rate_limited: 1 },
    { endpoint: 'POST /v1/listings', method: 'POST', route: '/v1/listings', requests: 1, by_status: { '2xx': 1, '3xx': 0, '4xx': 0, '5xx': 0 }, rate_limited: 0 },
  ]);
});

test("a key's report holds only that key's requests", async () => {
  const { counters } = await memoryCounters();
  counters.recordRequest('key_a', 'GET /v1/listings', 200, at(10));
  counters.recordRequest('key_b', 'GET /v1/users/me', 200, at(10));
  counters.recordRequest('key_b', 'GET /v1/users/me', 200, at(10));
  assert.equal(counters.keyUsage('key_a', hourRange(0, 24)).totals.requests, 1);
  assert.deepEqual(counters.keyUsage('key_b', hourRange(0, 24)).endpoints.map((row) => [row.endpoint, row.requests]), [['GET /v1/users/me', 2]]);
  assert.equal(counters.keyUsage('key_unknown', hourRange(0, 24)).totals.requests, 0);
  assert.equal(counters.keyUsage('key_unknown', hourRange(0, 24)).points.length, 24);
});

test('day granularity rolls the hours up into UTC days', async () => {
  const { counters } = await memoryCounters();
  counters.recordRequest('key_a', 'GET /v1/listings', 200, at(0, 0)); // Jan 1, first instant
  counters.recordRequest('key_a', 'GET /v1/listings', 200, at(23, 59)); // Jan 1, last minute
  counters.recordRequest('key_a', 'GET /v1/listings', 429, at(24, 0)); // Jan 2
  counters.recordRequest('key_a', 'GET /v1/listings', 200, at(24 * 3 + 5)); // Jan 4

  const report = counters.keyUsage('key_a', { granularity: 'day', fromMs: START - DAY_MS, toMs: START + 4 * DAY_MS });
  assert.deepEqual(
    report.points.map((point) => [point.start.slice(0, 10), point.requests, point.rate_limited]),
    [
      ['2025-12-31', 0, 0],
      ['2026-01-01', 2, 0],
      ['2026-01-02', 1, 1],
      ['2026-01-03', 0, 0],
      ['2026-01-04', 1, 0],
    ],
  );
  assert.equal(report.totals.requests, 4);
});

test('views and impressions: a cached page served again counts again, per listing and per hour', async () => {
  const { counters } = await memoryCounters();
  const cachedPage = ['lst_1', 'lst_2'];
  for (let hit = 0; hit < 5; hit += 1) counters.recordListingImpressions(cachedPage, at(10, hit));
  counters.recordListingImpressions(['lst_2', 'lst_3'], at(10, 30)); // another page
  counters.recordListingImpressions(cachedPage, at(11, 0)); // the next hour
  counters.recordListingImpressions([], at(11, 1));
  counters.recordListingView('lst_1', at(10, 1));
  counters.recordListingView('lst_1', at(11, 2));

  const all = { fromMs: null, toMs: null };
  assert.deepEqual(counters.listingCounts('lst_1', all), { views: 2, impressions: 6 });
  assert.deepEqual(counters.listingCounts('lst_2', all), { views: 0, impressions: 7 });
  assert.deepEqual(counters.listingCounts('lst_3', all), { views: 0, impressions: 1 });
  assert.deepEqual(counters.listingCounts('lst_none', all), { views: 0, impressions: 0 });
  // Only the tenth hour, and from the eleventh on.
  assert.deepEqual(counters.listingCounts('lst_1', { fromMs: at(10), toMs: at(11) }), { views: 1, impressions: 5 });
  assert.deepEqual(counters.listingCounts('lst_2', { fromMs: at(11), toMs: null }), { views: 0, impressions: 1 });
  // Counting more after a query still adds up.
  counters.recordListingImpressions(cachedPage, at(11, 5));
  assert.deepEqual(counters.listingCounts('lst_1', all), { views: 2, impressions: 7 });
});

test('lastUsedAt is the time of the latest request, null before any', async () => {
  const { counters } = await memoryCounters();
  assert.equal(counters.lastUsedAt('key_a'), null);
  counters.recordRequest('key_a', 'GET /v1/listings', 200, at(10, 7));
  counters.recordRequest('key_a', 'GET /v1/listings', 200, at(10, 3)); // an older stamp does not win
  assert.equal(counters.lastUsedAt('key_a'), '2026-01-01T10:07:00.000Z');
});

test('flush writes one snapshot per changed (key, hour), one record of what the listings of an hour gained, and only what changed', async () => {
  const { clock, store, counters } = await memoryCounters();
  counters.recordRequest('key_a', 'GET /v1/listings', 200, at(10, 1));
  counters.recordRequest('key_a', 'GET /v1/listings', 429, at(11, 1));
  counters.recordListingView('lst_1', at(10, 2));
  counters.recordListingImpressions(['lst_1', 'lst_2'], at(10, 3));
  await counters.flush();

  assert.deepEqual(recordNames(store), ['key:key_a@2026-01-01T10:00:00.000Z', 'key:key_a@2026-01-01T11:00:00.000Z', 'key:key_a@last_used', 'listings@2026-01-01T10:00:00.000Z/…']);
  assert.deepEqual(store.get(USAGE, 'key:key_a@2026-01-01T11:00:00.000Z'), {
    id: 'key:key_a@2026-01-01T11:00:00.000Z',
    kind: 'key_hour',
    key_id: 'key_a',
    hour: '2026-01-01T11:00:00.000Z',
    requests: 1,
    by_status: { '2xx': 0, '3xx': 0, '4xx': 1, '5xx': 0 },
    rate_limited: 1,
    endpoints: { 'GET /v1/listings': { requests: 1, by_status: { '2xx': 0, '3xx': 0, '4xx': 1, '5xx': 0 }, rate_limited: 1 } },
  });
  assert.deepEqual(listingCountsOf(store, '2026-01-01T10:00:00.000Z'), [{ '1/1': 'lst_1', '0/1': 'lst_2' }]);

  // Nothing changed: nothing written. One more view: one record of just that addition.
  const writesBefore = store.stats().writes;
  await counters.flush();
  assert.equal(store.stats().writes, writesBefore);
  counters.recordListingView('lst_2', at(10, 9));
  await counters.flush();
  assert.equal(store.stats().writes, writesBefore + 1);
  assert.deepEqual(
    listingCountsOf(store, '2026-01-01T10:00:00.000Z').sort((left, right) => Object.keys(left).length - Object.keys(right).length),
    [{ '1/0': 'lst_2' }, { '1/1': 'lst_1', '0/1': 'lst_2' }],
  );

  // Once the hour is over its records are merged into one of whole counts.
  clock.advance(HOUR_MS);
  await counters.flush();
  assert.deepEqual(listingCountsOf(store, '2026-01-01T10:00:00.000Z'), [{ '1/1': 'lst_1 lst_2' }]);
  assert.deepEqual(counters.listingCounts('lst_2', { fromMs: null, toMs: null }), { views: 1, impressions: 1 });
});

test('a new UsageCounters over the reopened store restores every count and the last use', async (t) => {
  const dataDir = tempDir(t);
  const clock = new ManualClock(at(10));
  let store = await Store.open({ dataDir });
  const first = new UsageCounters({ store, clock });
  first.recordRequest('key_a', 'GET /v1/listings', 200, at(10, 1));
  first.recordRequest('key_a', 'GET /v1/listings/:id', 404, at(12, 30));
  first.recordListingView('lst_1', at(10, 2));
  first.recordListingImpressions(['lst_1', 'lst_2'], at(12, 3));
  const before = first.keyUsage('key_a', hourRange(0, 24));
  await first.stop();
  await store.close();

  store = await Store.open({ dataDir });
  t.after(() => store.close());
  const second = new UsageCounters({ store, clock });
  assert.deepEqual(second.keyUsage('key_a', hourRange(0, 24)), before);
  assert.equal(second.lastUsedAt('key_a'), '2026-01-01T12:30:00.000Z');
  assert.deepEqual(second.listingCounts('lst_1', { fromMs: null, toMs: null }), { views: 1, impressions: 1 });
  assert.deepEqual(second.listingCounts('lst_1', { fromMs: at(12), toMs: null }), { views: 0, impressions: 1 });

  // Counting goes on from the restored totals, in the restored hour too.
  second.recordRequest('key_a', 'GET /v1/listings', 200, at(12, 45));
  await second.stop();
  assert.equal(second.keyUsage('key_a', hourRange(12, 13)).totals.requests, 2);
  const stored = (store.get(USAGE, 'key:key_a@2026-01-01T12:00:00.000Z') as (StoredRecord & { requests: number }) | undefined);
  assert.equal(stored?.requests, 2);
});

test('buckets older than the retention leave memory and the store; the last use stays', async () => {
  const { clock, store, counters } = await memoryCounters({ retentionDays: 2 });
  counters.recordRequest('key_a', 'GET /v1/listings', 200, at(10));
  counters.recordListingView('lst_1', at(10));
  counters.recordListingImpressions(['lst_1'], at(10));
  await counters.flush();
  clock.advance(DAY_MS);
  counters.recordRequest('key_a', 'GET /v1/listings', 200, clock.now());
  counters.recordListingView('lst_1', clock.now());
  await counters.flush();
  assert.equal(usageRecords(store).length, 5);

  // Two days and one hour after the first hour: it is past the retention, the second is not.
  clock.advance(DAY_MS + HOUR_MS);
  await counters.flush();
  assert.deepEqual(recordNames(store), ['key:key_a@2026-01-02T10:00:00.000Z', 'key:key_a@last_used', 'listings@2026-01-02T10:00:00.000Z/…']);
  assert.equal(counters.keyUsage('key_a', hourRange(0, 48)).totals.requests, 1);
  assert.deepEqual(counters.listingCounts('lst_1', { fromMs: null, toMs: null }), { views: 1, impressions: 0 });

  clock.advance(DAY_MS);
  await counters.flush();
  assert.deepEqual(usageRecords(store).map((record) => record.id), ['key:key_a@last_used']);
  assert.deepEqual(counters.listingCounts('lst_1', { fromMs: null, toMs: null }), { views: 0, impressions: 0 });
  assert.equal(counters.lastUsedAt('key_a'), '2026-01-02T10:00:00.000Z');
});

test('snapshots already past the retention are dropped when loaded', async () => {
  const clock = new ManualClock(at(10));
  const store = await Store.open({ dataDir: null });
  const old = new UsageCounters({ store, clock, retentionDays: 1 });
  old.recordRequest('key_a', 'GET /v1/listings', 200, at(10));
  await old.stop();

  clock.advance(3 * DAY_MS);
  const fresh = new UsageCounters({ store, clock, retentionDays: 1 });
  assert.equal(fresh.keyUsage('key_a', { granularity: 'day', fromMs: START, toMs: START + 5 * DAY_MS }).totals.requests, 0);
  await fresh.flush();
  assert.deepEqual(usageRecords(store).map((record) => record.id), ['key:key_a@last_used']);
});

test('a refused write keeps the counts in memory and the next flush saves them', async (t) => {
  let failing = false;
  const flakyFileSystem: FileSystem = {
    ...nodeFileSystem,
    async open(path) {
      const handle = await nodeFileSystem.open(path);
      return {
        write: (data, position) => (failing ? Promise.reject(new Error('ENOSPC: no space left on device')) : handle.write(data, position)),
        sync: () => handle.sync(),
        truncate: (length) => handle.truncate(length),
        close: () => handle.close(),
      };
    },
  };
  const store = await Store.open({ dataDir: tempDir(t), fileSystem: flakyFileSystem });
  t.after(() => store.close());
  const warnings: string[] = [];
  const counters = new UsageCounters({ store, clock: new ManualClock(at(10)), warn: (message) => warnings.push(message) });

  counters.recordRequest('key_a', 'GET /v1/listings', 200, at(10));
  failing = true;
  await counters.flush(); // resolves: a failing disk never breaks the caller
  assert.equal(usageRecords(store).length, 0);
  assert.match(warnings.join('\n'), /could not be saved.*ENOSPC/);

  failing = false;
  await counters.flush();
  assert.equal((store.get(USAGE, 'key:key_a@2026-01-01T10:00:00.000Z') as (StoredRecord & { requests: number }) | undefined)?.requests, 1);
});

test('stop() after the store is closed warns instead of throwing', async () => {
  const { store, counters, warnings } = await memoryCounters();
  counters.start();
  counters.recordRequest('key_a', 'GET /v1/listings', 200, at(10));
  await store.close();
  await counters.stop();
  assert.match(warnings.join('\n'), /closed/);
});

test('start() saves on its own every flushIntervalMs', async (t) => {
  t.mock.timers.enable({ apis: ['setInterval'] });
  const store = await Store.open({ dataDir: null });
  const counters = new UsageCounters({ store, clock: new ManualClock(at(10)), flushIntervalMs: 1_000 });
  counters.start();
  t.after(() => counters.stop());
  counters.recordRequest('key_a', 'GET /v1/listings', 200, at(10));
  t.mock.timers.tick(999);
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(usageRecords(store).length, 0);
  t.mock.timers.tick(1);
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(usageRecords(store).length, 2);
});

test('stored records that are not usage snapshots are ignored with one warning', async () => {
  const store = await Store.open({ dataDir: null });
  await store.write([{ op: 'put', collection: USAGE, id: 'junk', data: { id: 'junk', kind: 'key_hour', key_id: 'key_a', hour: 'yesterday' } as StoredRecord }]);
  const warnings: string[] = [];
  const counters = new UsageCounters({ store, clock: new ManualClock(at(10)), warn: (message) => warnings.push(message) });
  assert.equal(counters.keyUsage('key_a', hourRange(0, 24)).totals.requests, 0);
  assert.deepEqual(warnings, ['Ignored 1 unreadable usage record(s) in the store.']);
});

test("records saved by other instances (a store migrated from PostgreSQL) are folded into this one's and not counted twice later", async (t) => {
  const dataDir = tempDir(t);
  const clock = new ManualClock(at(10));
  let store = await Store.open({ dataDir });
  // Two instances of a multi-instance deployment save the same hours under their own ids.
  for (const instanceTag of ['instance-a', 'instance-b']) {
    const instance = new UsageCounters({ store, clock, instanceTag });
    instance.recordRequest('key_a', 'GET /v1/listings', 200, at(10, 1));
    instance.recordListingView('lst_1', at(10, 2));
    await instance.stop();
  }
  await store.close();

  // The file-backed server that takes the store over sums them, then counts on in the same hour.
  for (const round of [1, 2, 3]) {
    store = await Store.open({ dataDir });
    const single = new UsageCounters({ store, clock });
    assert.equal(single.keyUsage('key_a', hourRange(10, 11)).totals.requests, 2 + round - 1, `requests after restart ${round}`);
    assert.deepEqual(single.listingCounts('lst_1', { fromMs: null, toMs: null }), { views: 2 + round - 1, impressions: 0 }, `views after restart ${round}`);
    single.recordRequest('key_a', 'GET /v1/listings', 200, at(10, 30));
    single.recordListingView('lst_1', at(10, 31));
    await single.stop();
    await store.close();
  }
});

test("other instances' records already past the retention are deleted, not kept forever", async (t) => {
  const dataDir = tempDir(t);
  const clock = new ManualClock(at(10));
  let store = await Store.open({ dataDir });
  const instance = new UsageCounters({ store, clock, instanceTag: 'instance-a' });
  instance.recordRequest('key_a', 'GET /v1/listings', 200, at(10, 1));
  await instance.stop();
  await store.close();

  clock.advance(3 * DAY_MS);
  store = await Store.open({ dataDir });
  t.after(() => store.close());
  const single = new UsageCounters({ store, clock, retentionDays: 1 });
  await single.stop();
  // Only the last use stays: it outlives the retention by design.
  assert.deepEqual(usageRecords(store).map((record) => record.id), ['key:key_a@last_used#instance-a']);
});
