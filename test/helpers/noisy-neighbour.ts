// The noisy-neighbour scenario, shared by its test (test/listings/cpu-budget-neighbour.test.ts:
// who is refused) and its benchmark (bench/timings.ts: the quiet key's latency): a data dir of
// 30,000 listings whose words make every search match thousands; one key sends costly searches
// (thirty word prefixes each, every one a new query, so no cached page) sixteen at a time from a
// client process of its own, up to its rate limit; another key asks for pages one after another.

import { spawn } from 'node:child_process';
import { LISTINGS, LISTING_TYPES, USERS, type ListingRecord, type UserRecord } from '../../src/domain/records.ts';
import { Store } from '../../src/store/store.ts';
import { call, CLUSTER_ADMIN_TOKEN, userWithKey, type Instance } from './cluster.ts';
import { startMain } from './main-process.ts';

export const LISTING_COUNT = 30_000;
const OWNER_ID = 'usr_neighbour_owner';
/** 40 two-letter word starts, each common in the listings below. */
export const PREFIXES = Array.from({ length: 40 }, (_, index) => String.fromCharCode(97 + (index % 20)) + String.fromCharCode(97 + Math.floor(index / 20) * 5 + (index % 5)));
export const HAMMER_RATE_LIMIT = 600;
const HAMMER_CONCURRENCY = 16;
export const QUIET_REQUESTS = 300;

export async function seed(dataDir: string): Promise<void> {
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

export interface Hammered {
  served: number;
  refusedForCpu: number;
  firstRefusal: { retryAfter: string | null; error: string } | null;
  other: string | null;
}

export function hammer(url: string, key: string): Promise<Hammered> {
  const child = spawn(process.execPath, ['-e', HAMMER_SCRIPT, url, key, String(HAMMER_RATE_LIMIT), String(HAMMER_CONCURRENCY), PREFIXES.join(',')], { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(output) as Hammered) : reject(new Error(`the hammering client exited with ${code}: ${output}`))));
  });
}

/** What the quiet key saw: each answer's time, and every answer that was not a 200. */
export interface QuietPages {
  latencies: number[];
  refusals: string[];
}

/**
 * The quiet key's pages, asked one after another: at least QUIET_REQUESTS of them, and for as
 * long as `during` runs. One page (kept after its second request): the quiet key's own use
 * stays far within its budget.
 */
export async function quietPages(url: string, key: string, during: Promise<unknown> | null): Promise<QuietPages> {
  const latencies: number[] = [];
  const refusals: string[] = [];
  let ended = false;
  void during?.finally(() => (ended = true));
  for (let number = 0; number < QUIET_REQUESTS || (during !== null && !ended); number += 1) {
    const began = performance.now();
    const answer = await call(url, 'GET', '/v1/listings?limit=10', key);
    latencies.push(performance.now() - began);
    if (answer.status !== 200) refusals.push(`${answer.status} ${JSON.stringify(answer.body)}`);
  }
  return { latencies, refusals };
}

export interface Neighbours {
  url: string;
  hammeringKey: string;
  quietKey: string;
  stop: () => void;
}

/**
 * The real server (src/main.ts, its own process) on `dataDir` with KEY_CPU_BUDGET_MS=`budgetMs`
 * and both keys: the hammering one allowed HAMMER_RATE_LIMIT requests a minute, the quiet one
 * 100,000; resolves once the search index is full.
 */
export async function startNeighbours(dataDir: string, budgetMs: number): Promise<Neighbours> {
  const running = await startMain({ DATA_DIR: dataDir, MARKETPLACE_DEMO: '0', MARKETPLACE_ADMIN_TOKEN: CLUSTER_ADMIN_TOKEN, KEY_CPU_BUDGET_MS: String(budgetMs) });
  const stop = (): void => void running.child.kill('SIGKILL');
  try {
    const instances = [{ url: running.url } as Instance];
    const hammering = await userWithKey(instances, 'member', ['read:listings'], HAMMER_RATE_LIMIT);
    const quiet = await userWithKey(instances, 'member', ['read:listings'], 100_000);
    // The first search waits for the search index to be full.
    const first = await call(running.url, 'GET', `/v1/listings?q=${PREFIXES[0]}`, quiet.key);
    if (first.status !== 200) throw new Error(`the first search: ${first.status} ${JSON.stringify(first.body)}`);
    return { url: running.url, hammeringKey: hammering.key, quietKey: quiet.key, stop };
  } catch (error) {
    stop();
    throw error;
  }
}
