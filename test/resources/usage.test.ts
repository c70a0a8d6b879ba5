// The usage readings (src/resources/usage.ts) as tables, without a server: a query string in,
// the usage answer for a key or a user's listing statistics, or the 400 naming the parameter.
// The counts come from the real in-memory UsageCounters over a memory store, the window from a
// real SlidingWindowLimiter, both on a clock that moves only when told.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { UsageCounters } from '../../src/analytics/usage-counters.ts';
import { meterIdOf } from '../../src/modules/plans/shared-windows.ts';
import { SlidingWindowLimiter } from '../../src/limits/sliding-window.ts';
import { listingStatsBody, usageBody } from '../../src/resources/usage.ts';
import { aKey, aListing, aUser, openRulesStore, refusalOf, seedOps } from './rules-store.ts';

const HOUR = 60 * 60 * 1000;

async function counted(t: import('node:test').TestContext) {
  const { store, clock } = await openRulesStore(t);
  clock.advance(10 * HOUR);
  const usage = new UsageCounters({ store, clock, warn: () => {} });
  const keyLimiter = new SlidingWindowLimiter({ monotonicNow: () => clock.monotonic(), windowMs: 60_000 });
  return { store, clock, usage, keyLimiter };
}

test('a key\'s usage: totals, endpoints, the series asked for and the window now; a bad query is a 400 naming it', async (t) => {
  const { clock, usage, keyLimiter } = await counted(t);
  const key = aKey('key_a', 'usr_a', { rate_limit: 100 });
  usage.recordRequest(key.id, 'GET /v1/listings', 200, clock.now());
  usage.recordRequest(key.id, 'GET /v1/listings', 200, clock.now());
  usage.recordRequest(key.id, 'POST /v1/listings', 403, clock.now());
  keyLimiter.hit(meterIdOf(key), key.rate_limit); // a key on a plan is metered with its user's other keys on it

  const body = await usageBody({ clock, usage, keyLimiter, metering: { meterOf: meterIdOf, quotas: null, plans: null } }, new URLSearchParams('granularity=hour&from=2026-01-01T09:00:00Z&to=2026-01-01T11:00:00Z'), key);
  assert.deepEqual([body.key_id, body.granularity, body.from, body.to], [key.id, 'hour', '2026-01-01T09:00:00.000Z', '2026-01-01T11:00:00.000Z']);
  assert.equal(body.series.points.length, 2);
  assert.deepEqual(body.window, { limit: 100, remaining: 99, reset: body.window.reset });
  assert.equal(body.totals.requests, 3);
  assert.deepEqual(body.endpoints.map((row) => [row.endpoint, row.requests]), [['GET /v1/listings', 2], ['POST /v1/listings', 1]], 'most requests first');

  const refused: Array<[string, string[]]> = [
    ['granularity=minute', ['granularity']],
    ['from=yesterday', ['from']],
    ['colour=red', ['colour']],
  ];
  for (const [query, fields] of refused) {
    const refusal = await refusalOf(() => usageBody({ clock, usage, keyLimiter, metering: { meterOf: meterIdOf, quotas: null, plans: null } }, new URLSearchParams(query), key));
    assert.equal(refusal?.status, 400, query);
    assert.deepEqual(refusal.fields.filter((field) => fields.includes(field)), fields, `${query}: ${JSON.stringify(refusal)}`);
  }
});

test('a user\'s listing statistics: her listings only, archived ones too, sorted as asked, with totals', async (t) => {
  const { store, clock, usage } = await counted(t);
  const listings = [aListing('lst_a', 'usr_a'), aListing('lst_b', 'usr_a', { status: 'archived' }), aListing('lst_c', 'usr_a'), aListing('lst_other', 'usr_b')];
  await store.write(seedOps({ users: [aUser('usr_a'), aUser('usr_b')], listings }));
  for (let view = 0; view < 3; view += 1) usage.recordListingView('lst_b', clock.now());
  usage.recordListingView('lst_a', clock.now());
  usage.recordListingImpressions(['lst_a', 'lst_a', 'lst_c', 'lst_other'], clock.now());

  const cases: Array<{ query: string; order?: string[]; status?: number }> = [
    { query: '', order: ['lst_b', 'lst_a', 'lst_c'] },
    { query: 'sort=views', order: ['lst_c', 'lst_a', 'lst_b'] },
    { query: 'sort=-impressions', order: ['lst_a', 'lst_c', 'lst_b'] },
    { query: 'sort=-impressions&limit=1&page=2', order: ['lst_c'] },
    { query: 'sort=price', status: 400 },
    { query: 'owner=usr_b', status: 400 },
  ];
  for (const { query, order, status } of cases) {
    const refusal = await refusalOf(() => listingStatsBody(store, usage, new URLSearchParams(query), 'usr_a'));
    if (status !== undefined) {
      assert.equal(refusal?.status, status, query);
      continue;
    }
    const body = listingStatsBody(store, usage, new URLSearchParams(query), 'usr_a');
    assert.deepEqual(body.data.map((row) => row.listing_id), order, query);
    assert.deepEqual(body.totals, { views: 4, impressions: 3 }, `${query}: totals over all of hers, not the page`);
  }
});
