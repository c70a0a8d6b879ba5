// A key's share of the event loop: a key hammering distinct searches (each a fresh answer, no
// cached page) is refused with 429 and Retry-After once its work in the last minute passes its
// budget, before its rate limit would stop it, while another key goes on being served; the
// refusals are counted in /metrics, and once the minute has passed the key is admitted again.
// The budget is set tiny here (KEY_CPU_BUDGET_MS=5) so a few searches over 3,000 listings pass it;
// without the cpu-budget module the same searches are all served.
// The clock-to-CPU share is checked on its own with made-up usage figures.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { LISTINGS, LISTING_TYPES, type ListingRecord } from '../../src/domain/records.ts';
import { CpuBudget } from '../../src/modules/cpu-budget/cpu-budget.ts';
import { OnCpuShare, type ProcessUsage } from '../../src/modules/cpu-budget/on-cpu-share.ts';
import { ADMIN_TOKEN, startServer } from '../helpers/server.ts';
import { VOCABULARY } from './search-reference.ts';
import { vocabularyListingOps } from './vocabulary-listings.ts';

test('a key past its CPU budget gets 429 with Retry-After while another key is served; counted in /metrics; admitted again a minute later', async (t) => {
  const clock = new ManualClock();
  const server = await startServer(t, { clock, config: { keyCpuBudgetMs: 5 } });
  const creator = await server.userWithKey('creator', ['read:listings', 'write:listings'], 100);
  const other = await server.userWithKey('member', ['read:listings'], 100);
  const at = new Date(clock.now()).toISOString();
  const ops = vocabularyListingOps(3_000, creator.userId, at);
  await server.app.store.write(ops);

  // Distinct searches, each sorted over thousands of matches: none is a cached page.
  let refused: Awaited<ReturnType<typeof server.request>> | null = null;
  let served = 0;
  let lowestRemaining = 100;
  for (let number = 1; number <= 100 && refused === null; number += 1) {
    const response = await server.request('GET', `/v1/listings?sort=title&limit=${1 + (number % 100)}&page=${1 + Math.floor(number / 100)}&max_price=${1000 - number}`, { key: creator.key });
    if (response.status === 429) refused = response;
    else {
      assert.equal(response.status, 200, response.text);
      served += 1;
      lowestRemaining = Number(response.headers.get('x-ratelimit-remaining'));
    }
  }
  assert.ok(refused !== null, 'the hammering key was refused within its rate limit of 100');
  assert.ok(lowestRemaining > 0, `refused for CPU, not by the rate limit (${lowestRemaining} requests were left after ${served} served)`);
  assert.match(refused.body.error, /CPU/);
  const retryAfter = Number(refused.headers.get('retry-after'));
  assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
  assert.equal(refused.headers.get('x-ratelimit-remaining'), '0');
  assert.equal(Number(refused.headers.get('x-ratelimit-reset')), Math.ceil(clock.now() / 1000) + retryAfter, 'Reset says the same wait');

  // Held: it stays refused, whatever it asks (a cached page included), while the other key is served.
  assert.equal((await server.request('GET', '/v1/listings', { key: creator.key })).status, 429);
  const served2 = await server.request('GET', '/v1/listings?q=zeb&sort=price', { key: other.key });
  assert.equal(served2.status, 200, served2.text);

  const metrics = await server.request('GET', '/metrics', { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  const counted = /^marketplace_http_cpu_budget_refused_total (\d+)$/m.exec(metrics.text);
  assert.ok(counted !== null && Number(counted[1]) >= 2, `refusals counted: ${counted?.[0]}`);

  // Waiting as told is enough: once the charges are a minute old, the key is admitted.
  clock.advance(retryAfter * 1000);
  assert.equal((await server.request('GET', '/v1/listings', { key: creator.key })).status, 200);
});

test('without the cpu-budget module a key is held to its rate limit alone, however much CPU its searches use', async (t) => {
  const clock = new ManualClock();
  const server = await startServer(t, { clock, env: { MARKETPLACE_MODULES: 'none' }, config: { keyCpuBudgetMs: 5 } });
  const creator = await server.userWithKey('creator', ['read:listings', 'write:listings'], 100);
  await server.app.store.write(vocabularyListingOps(3_000, creator.userId, new Date(clock.now()).toISOString()));
  for (let number = 1; number <= 30; number += 1) {
    const response = await server.request('GET', `/v1/listings?sort=title&limit=${number}&max_price=${1000 - number}`, { key: creator.key });
    assert.equal(response.status, 200, `search ${number}: ${response.text}`);
  }
});

test('the budget: charges in the last minute against budgetMs × rate limit / 100; the wait ends when enough of them are a minute old', () => {
  let now = 0;
  const budget = new CpuBudget({ budgetMs: 100, monotonicNow: () => now });
  assert.equal(budget.budgetOf(100), 100);
  assert.equal(budget.budgetOf(10), 100, 'lower limits keep the whole budget');
  assert.equal(budget.budgetOf(200), 200, 'higher limits get it in proportion');
  assert.equal(budget.budgetOf(1_000), 400, 'up to four times the budget');
  assert.equal(budget.budgetOf(1_000_000), 400, 'whatever the limit');
  budget.charge('key', 60);
  now = 20_000;
  budget.charge('key', 50);
  assert.equal(budget.waitSeconds('other', 100), 0);
  assert.equal(budget.waitSeconds('key', 200), 0, 'within a larger budget');
  // 110 ms > 100: the first 60 ms leave the window 60 s after their 5-second bucket began (at 0).
  assert.equal(budget.waitSeconds('key', 100), 40);
  now = 60_000;
  assert.equal(budget.waitSeconds('key', 100), 0);
  now = 200_000;
  budget.charge('fresh', 1);
  assert.equal(budget.trackedKeys(), 1, 'keys idle for a minute are forgotten');
});

test('the time a worker thread spends compressing a large answer is charged to the key that asked for it', async (t) => {
  const server = await startServer(t, { config: { keyCpuBudgetMs: 20 } });
  const creator = await server.userWithKey('creator', ['read:listings'], 100);
  const at = new Date().toISOString();
  // Long descriptions of varied words: a page of 40 is about 250 KiB, compressed in the thread pool.
  const ops = Array.from({ length: 400 }, (_, number) => {
    const listing: ListingRecord = {
      id: `lst_${number.toString().padStart(8, '0')}`,
      title: `Listing ${number}`,
      description: Array.from({ length: 900 }, (_, word) => VOCABULARY[(number * 31 + word * 17) % VOCABULARY.length]).join(' ').slice(0, 5_000),
      type: LISTING_TYPES[number % LISTING_TYPES.length]!,
      price: number,
      tags: [],
      status: 'active',
      owner_id: creator.userId,
      created_at: at,
      updated_at: at,
    };
    return { op: 'put' as const, collection: LISTINGS, id: listing.id, data: listing };
  });
  await server.app.store.write(ops);

  // Each query is new (no cached page) but shows the same 40 listings, whose JSON is kept after
  // the first: a page's own work on the event loop is then copying kept bytes, well under 1 ms,
  // and the brotli compression of its 250 KiB several ms. Twelve of them pass the budget of
  // 20 ms only if the compression counts.
  let refusedAfter: number | null = null;
  for (let number = 0; number < 12 && refusedAfter === null; number += 1) {
    const response = await server.request('GET', `/v1/listings?limit=40&max_price=${1000 - number}`, { key: creator.key, headers: { 'accept-encoding': 'br' } });
    if (response.status === 429) refusedAfter = number;
    else {
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('content-encoding'), 'br');
    }
  }
  assert.ok(refusedAfter !== null, 'refused within 12 large compressed pages');
});

test("work timed with the clock is charged as CPU time: scaled by the share of the loop's busy time its thread was on a processor, measured every 250 ms and after any work of 1 ms or more, never above 1", () => {
  let usage: ProcessUsage = { cpuMs: 0, activeMs: 0 };
  const share = new OnCpuShare(() => usage, 0);
  assert.equal(share.cpuOf(0.5, 100), 0.5, 'until measured, the time on the clock');
  // A quarter of a second in which the loop was busy 200 ms but on a processor only 50 ms of them.
  usage = { cpuMs: 50, activeMs: 200 };
  assert.equal(share.cpuOf(0.5, 249), 0.5, 'short work: measured again only after 250 ms');
  assert.equal(share.cpuOf(0.5, 250), 0.125);
  assert.equal(share.current(), 0.25);
  // Threads beside the loop used more than the loop's busy time (where only the process's time can be read).
  usage = { cpuMs: 500, activeMs: 300 };
  assert.equal(share.cpuOf(0.5, 500), 0.5, 'capped at the time on the clock');
  // An all but idle interval says nothing: the share before it is kept.
  usage = { cpuMs: 500.4, activeMs: 300.5 };
  assert.equal(share.cpuOf(0.5, 750), 0.5);
  // Long work (40 ms on the clock, 10 of them on a processor) is measured at its end, not 250 ms later.
  usage = { cpuMs: 510.4, activeMs: 340.5 };
  assert.equal(share.cpuOf(40, 760), 10);

  let now = 0;
  const budget = new CpuBudget({ budgetMs: 100, monotonicNow: () => now, onCpu: share });
  budget.chargeTimed('key_a', 400, 760);
  assert.equal(budget.waitSeconds('key_a', 100), 0, '400 ms on the clock at a share of 1/4 is 100 ms of CPU: within the budget');
  budget.chargeTimed('key_a', 4, 760);
  assert.ok(budget.waitSeconds('key_a', 100) > 0, 'past it');
  now = 60_000;
  assert.equal(budget.waitSeconds('key_a', 100), 0);
});
