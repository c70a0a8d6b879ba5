// A noisy neighbour held to its share: the real server (src/main.ts, its own process) with
// 30,000 listings; one key sends costly searches (thirty word prefixes each, every one a new
// query, so no cached page) sixteen at a time from a client process of its own, up to its rate
// limit, while another key asks for pages one after another and times each answer. The
// hammering key is refused with 429 and Retry-After once its work passes its budget, long
// before its rate limit; the other key's p99 stays under 20 ms. With the budget off
// (KEY_CPU_BUDGET_MS=0) the same searches are all served and the other key's p99 goes past
// that: the run that shows this test can fail is made here too, on the same machine at the
// same time. The budget is set small (KEY_CPU_BUDGET_MS=100: 400 ms a minute for either key,
// both past 400 requests a minute) so that it is reached in seconds. A p99 is a wall-clock
// figure, and on a shared machine a burst of other work can fill one run's worst 1%, so the
// run with the budget is made up to three times, each on a fresh server, and one must hold;
// without the budget every run is far past the bound (91-182 ms measured), so all three fail.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { LISTINGS, LISTING_TYPES, USERS, type ListingRecord, type UserRecord } from '../../src/domain/records.ts';
import { Store } from '../../src/store/store.ts';
import { call, CLUSTER_ADMIN_TOKEN, percentile, userWithKey, type Instance } from '../helpers/cluster.ts';
import { startMain } from '../helpers/main-process.ts';
import { temporaryDir } from '../helpers/server.ts';

const LISTING_COUNT = 30_000;
const OWNER_ID = 'usr_neighbour_owner';
/** 40 two-letter word starts, each common in the listings below. */
const PREFIXES = Array.from({ length: 40 }, (_, index) => String.fromCharCode(97 + (index % 20)) + String.fromCharCode(97 + Math.floor(index / 20) * 5 + (index % 5)));
const HAMMER_RATE_LIMIT = 600;
const HAMMER_CONCURRENCY = 16;
const QUIET_REQUESTS = 300;
/** Runs with the budget made before the quiet key's p99 must have held in one of them. */
const HELD_ATTEMPTS = 3;

async function seed(dataDir: string): Promise<void> {
  const store = await Store.open({ dataDir, warn: () => {} });
  const at = new Date(Date.UTC(2026, 0, 1)).toISOString();
  const owner: UserRecord = { id: OWNER_ID, name: 'Owner', email: 'owner@example.com', bio: '', website: '', avatar_url: '', role: 'creator', created_at: at, updated_at: at, status: 'active' };
  await store.write([{ op: 'put', collection: USERS, id: OWNER_ID, data: owner }]);
  const ops = Array.from({ length: LISTING_COUNT }, (_, number) => {
    // Each listing holds words starting with most of the prefixes, so every one matches thousands.
    const words = PREFIXES.filter((_, index) => (number + index) % 4 !== 0).map((prefix, index) => `${prefix}${(number * 7 + index) % 97}x`);
    const listing: ListingRecord = {
      id: `lst_${number.toString().padStart(10, '0')}`,
      title: words.slice(0, 3).join(' '),
      description: words.join(' '),
      type: LISTING_TYPES[number % LISTING_TYPES.length]!,
      price: number % 1000,
      tags: [],
      status: 'active',
      owner_id: OWNER_ID,
      created_at: new Date(Date.UTC(2026, 0, 1) + number * 1000).toISOString(),
      updated_at: at,
    };
    return { op: 'put' as const, collection: LISTINGS, id: listing.id, data: listing };
  });
  await store.write(ops);
  await store.close();
}

/**
 * The hammering key's client, in a process of its own (so its work does not delay the quiet
 * key's timing here): `count` searches, `concurrency` at a time, each a different set of thirty
 * prefixes and page; prints how many were served and the first refusal.
 */
const HAMMER_SCRIPT = `
const [url, key, count, concurrency, prefixes] = process.argv.slice(1);
const words = prefixes.split(',');
let sent = 0, served = 0, refusedForCpu = 0, firstRefusal = null, other = null;
async function worker() {
  while (sent < Number(count)) {
    const number = sent++;
    const q = words.filter((_, index) => (index * 7 + number) % 4 !== 0).slice(0, 30).join('+');
    const response = await fetch(url + '/v1/listings?q=' + q + '&limit=' + (50 + (number % 50)) + '&page=' + (1 + (number % 3)), { headers: { authorization: 'Bearer ' + key } });
    const body = await response.json();
    if (response.status === 200) served += 1;
    else if (response.status === 429 && /CPU/.test(body.error)) {
      refusedForCpu += 1;
      firstRefusal ??= { retryAfter: response.headers.get('retry-after'), error: body.error };
    } else other ??= response.status + ' ' + JSON.stringify(body);
  }
}
Promise.all(Array.from({ length: Number(concurrency) }, worker)).then(() => console.log(JSON.stringify({ served, refusedForCpu, firstRefusal, other })));
`;

interface Hammered {
  served: number;
  refusedForCpu: number;
  firstRefusal: { retryAfter: string | null; error: string } | null;
  other: string | null;
}

function hammer(url: string, key: string): Promise<Hammered> {
  const child = spawn(process.execPath, ['-e', HAMMER_SCRIPT, url, key, String(HAMMER_RATE_LIMIT), String(HAMMER_CONCURRENCY), PREFIXES.join(',')], { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(output) as Hammered) : reject(new Error(`the hammering client exited with ${code}: ${output}`))));
  });
}

/** The quiet key's p99 over at least QUIET_REQUESTS pages asked one after another, and for as long as `during` runs. */
async function quietP99(url: string, key: string, during: Promise<unknown> | null): Promise<number> {
  const latencies: number[] = [];
  let ended = false;
  void during?.finally(() => (ended = true));
  for (let number = 0; number < QUIET_REQUESTS || (during !== null && !ended); number += 1) {
    const began = performance.now();
    // One page (kept after its second request): the quiet key's own use stays far within its budget.
    const answer = await call(url, 'GET', '/v1/listings?limit=10', key);
    latencies.push(performance.now() - began);
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
  }
  return percentile(latencies, 0.99);
}

interface Round {
  aloneP99: number;
  hammeredP99: number;
  hammered: Hammered;
}

/** The bound on the quiet key's p99 while hammered: 20 ms; on a machine so busy that the quiet key alone is slow, within 20 ms of that. */
function allowedP99(run: Round): number {
  return run.aloneP99 < 5 ? 20 : run.aloneP99 + 20;
}

/** The quiet key's pages alone, then while the hammering key sends its searches, against a server with `budgetMs`. */
async function round(dataDir: string, budgetMs: number): Promise<Round> {
  const running = await startMain({ DATA_DIR: dataDir, MARKETPLACE_DEMO: '0', MARKETPLACE_ADMIN_TOKEN: CLUSTER_ADMIN_TOKEN, KEY_CPU_BUDGET_MS: String(budgetMs) });
  try {
    const instances = [{ url: running.url } as Instance];
    const hammering = await userWithKey(instances, 'member', ['read:listings'], HAMMER_RATE_LIMIT);
    const quiet = await userWithKey(instances, 'member', ['read:listings'], 100_000);
    // The first search waits for the search index to be full.
    assert.equal((await call(running.url, 'GET', `/v1/listings?q=${PREFIXES[0]}`, quiet.key)).status, 200);
    const aloneP99 = await quietP99(running.url, quiet.key, null);
    const hammered = hammer(running.url, hammering.key);
    const hammeredP99 = await quietP99(running.url, quiet.key, hammered);
    return { aloneP99, hammeredP99, hammered: await hammered };
  } finally {
    running.child.kill('SIGKILL');
  }
}

test("a key hammering costly searches at its rate limit is held to its CPU budget while another key's p99 stays under 20 ms", { timeout: 300_000 }, async (t) => {
  const dataDir = temporaryDir(t);
  await seed(dataDir);

  const heldRuns: Round[] = [];
  let held: Round;
  do heldRuns.push((held = await round(dataDir, 100)));
  while (heldRuns.length < HELD_ATTEMPTS && !(held.hammeredP99 < allowedP99(held)));
  const unheld = await round(dataDir, 0);
  const runs = [...heldRuns.map((run) => ['budget 100 ms', run] as const), ['budget off', unheld] as const];
  const described = runs.map(([name, run]) => `${name}: quiet key p99 ${run.aloneP99.toFixed(1)} ms alone, ${run.hammeredP99.toFixed(1)} ms hammered; hammering key served ${run.hammered.served}, refused ${run.hammered.refusedForCpu}`);
  for (const line of described) t.diagnostic(line);

  assert.equal(held.hammered.other, null, 'the hammering key got only 200 or a CPU refusal');
  const refusal = held.hammered.firstRefusal;
  assert.ok(refusal !== null, 'the hammering key was refused for CPU');
  assert.ok(held.hammered.served < HAMMER_RATE_LIMIT / 4, `refused long before its rate limit (${held.hammered.served} of ${HAMMER_RATE_LIMIT} served)`);
  const retryAfter = Number(refusal.retryAfter);
  assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${refusal.retryAfter}`);
  assert.ok(held.hammeredP99 < allowedP99(held), `the other key's p99 with the budget, in each of ${heldRuns.length} runs, was past the bound:\n${described.join('\n')}`);
  // Without the budget the same searches are all served, and the other key waits behind them.
  assert.equal(unheld.hammered.served, HAMMER_RATE_LIMIT);
  assert.ok(unheld.hammeredP99 > allowedP99(held), `without the budget the other key's p99 is within the bound:\n${described.join('\n')}`);
});
