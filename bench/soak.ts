// Does the server's memory level off under steady traffic? A server process on a seeded data
// directory gets a steady mix for `--minutes` — reads by id and list pages, creates with an
// Idempotency-Key, updates, archives, a webhook delivered to a receiver here, and an operator
// creating and revoking a key (audit entries, ended keys) — while its RSS is sampled every
// `--sample-s` seconds. Then it is stopped and a fresh process loads the same data directory,
// and its RSS once ready (and after a minute of the same traffic) is the comparison.
// `--steady-data`: no creates and no archives; the writes are updates of 500 listings the soak's
// user makes first, each delivered to the webhook, so the records stay as many while the log,
// the outcomes, the idempotency-free writes and the key churn go on.
// Usage: node --import tsx bench/soak.ts [--minutes 20] [--sample-s 30] [--rate 200] [--listings 20000] [--create-share 0.08] [--steady-data]
// Writes bench/results/soak.json and prints a markdown table.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createKey, readStats, request as rawRequest } from './api.ts';
import { freePort, rssBytes, startChild, type RunningChild } from './processes.ts';
import { writeSeedLog } from './seed.ts';

const { values: options } = parseArgs({
  options: {
    minutes: { type: 'string', default: '20' },
    'sample-s': { type: 'string', default: '30' },
    rate: { type: 'string', default: '200' },
    listings: { type: 'string', default: '20000' },
    entry: { type: 'string', default: 'src/main.ts' },
    /** Share of requests that create a listing (updates, archives and reads share the rest). */
    'create-share': { type: 'string', default: '0.08' },
    'steady-data': { type: 'boolean', default: false },
  },
});
const MINUTES = Number(options.minutes);
const SAMPLE_S = Number(options['sample-s']);
const RATE = Number(options.rate);
const LISTINGS = Number(options.listings);
const STEADY_DATA = options['steady-data'] === true;
const CREATE_SHARE = STEADY_DATA ? 0 : Number(options['create-share']);
/** Listings the soak's user makes before the clock starts, for `--steady-data`'s updates. */
const STEADY_POOL = 500;
const REPO_DIR = join(dirname(fileURLToPath(import.meta.url)), '..');
const RESULTS_DIR = join(REPO_DIR, 'bench', 'results');
const ADMIN_TOKEN = 'bench-operator-token-0123456789';
const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };
const CONNECTIONS = 16;

interface Sample {
  minute: number;
  rss_mib: number;
  live_records: number | null;
  log_mib: number | null;
  compactions: number | null;
  requests: number;
  errors_5xx: number;
}

/** One call, its body parsed as JSON (null when it is not). */
async function request(url: string, init: { method?: string; headers?: Record<string, string>; body?: unknown } = {}): Promise<{ status: number; body: any }> {
  const answer = await rawRequest(url, init);
  let body: unknown = null;
  try {
    body = JSON.parse(answer.body);
  } catch {
    body = null;
  }
  return { status: answer.status, body };
}

const mib = (bytes: number | null | undefined) => (bytes == null ? null : Math.round((bytes / 1048576) * 10) / 10);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function startServer(dataDir: string, label: string): Promise<{ child: RunningChild; baseUrl: string }> {
  const port = await freePort();
  mkdirSync(join(RESULTS_DIR, 'logs'), { recursive: true });
  const entryArgs = options.entry.endsWith('.ts') ? ['--import', 'tsx', options.entry] : [options.entry];
  const child = await startChild({
    name: `soak server (${label})`,
    args: entryArgs,
    env: { PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, MARKETPLACE_DEMO: '0', MARKETPLACE_ADMIN_TOKEN: ADMIN_TOKEN, NODE_ENV: 'production', ACCESS_LOG: '0', WEBHOOK_ALLOW_PRIVATE: '1' },
    cwd: REPO_DIR,
    logFile: join(RESULTS_DIR, 'logs', `soak-${label}.log`),
    readyTimeoutMs: 300_000,
  });
  return { child, baseUrl: `http://127.0.0.1:${port}` };
}

/** The steady mix, paced to RATE requests a second over CONNECTIONS loops, until `until()` says stop. */
async function traffic(baseUrl: string, key: string, sampleIds: string[], until: () => boolean, counts: { requests: number; errors5xx: number }, pool: readonly string[] = []): Promise<void> {
  const auth = { Authorization: `Bearer ${key}` };
  const own: string[] = [...pool];
  let sequence = 0;
  const intervalMs = (1000 * CONNECTIONS) / RATE;
  const loop = async (): Promise<void> => {
    let next = performance.now();
    while (!until()) {
      const roll = Math.random();
      let answer: { status: number; body: any } | null;
      if (roll < 0.55) answer = await request(`${baseUrl}/v1/listings/${sampleIds[Math.floor(Math.random() * sampleIds.length)]}`, { headers: auth }).catch(() => null);
      else if (roll < 0.8) answer = await request(`${baseUrl}/v1/listings?limit=20&page=${1 + Math.floor(Math.random() * 200)}`, { headers: auth }).catch(() => null);
      else if (roll < 0.8 + CREATE_SHARE) {
        answer = await request(`${baseUrl}/v1/listings`, { method: 'POST', headers: { ...auth, 'Idempotency-Key': `soak-${process.pid}-${sequence++}` }, body: { title: `Soak ${sequence}`, type: 'TOOL', price: 1, description: 'x'.repeat(400) } }).catch(() => null);
        if (answer?.status === 201) own.push(answer.body.data.id);
      } else if ((roll < 0.97 || STEADY_DATA) && own.length > 0) {
        answer = await request(`${baseUrl}/v1/listings/${own[Math.floor(Math.random() * own.length)]}`, { method: 'PUT', headers: auth, body: { price: Math.floor(Math.random() * 1000) } }).catch(() => null);
      } else if (own.length > 0) {
        // Archived listings leave the working set, so the data grows about as fast as a busy
        // marketplace's does, not by every create.
        answer = await request(`${baseUrl}/v1/listings/${own.splice(Math.floor(Math.random() * own.length), 1)[0]}`, { method: 'DELETE', headers: auth }).catch(() => null);
      } else continue;
      counts.requests += 1;
      if (answer === null || answer.status >= 500) counts.errors5xx += 1;
      next += intervalMs;
      const wait = next - performance.now();
      if (wait > 0) await sleep(wait);
      else next = performance.now();
    }
  };
  // The operator's side: a key made and revoked every few seconds (audit entries, ended keys).
  const operator = async (): Promise<void> => {
    while (!until()) {
      const made = await request(`${baseUrl}/admin/v1/keys`, { method: 'POST', headers: admin, body: { user_id: (await userId)!, name: 'soak churn' } }).catch(() => null);
      if (made?.status === 201) await request(`${baseUrl}/admin/v1/keys/${made.body.data.id}`, { method: 'DELETE', headers: admin }).catch(() => null);
      await sleep(3_000);
    }
  };
  await Promise.all([...Array.from({ length: CONNECTIONS }, loop), operator()]);
}

let userId: Promise<string> | null = null;

async function main(): Promise<void> {
  const workDir = mkdtempSync(join(tmpdir(), 'soak-'));
  const dataDir = join(workDir, 'data');
  try {
    console.log(`Seeding ${LISTINGS.toLocaleString('en')} listings…`);
    const seed = await writeSeedLog({ dataDir, listingCount: LISTINGS });

    // A receiver for the webhook: answers 200 at once.
    const receiver = createHttpServer((incoming, answer) => {
      incoming.resume();
      incoming.on('end', () => answer.end('ok'));
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const receiverPort = (receiver.address() as AddressInfo).port;

    const server = await startServer(dataDir, 'soaked');
    const user = await request(`${server.baseUrl}/admin/v1/users`, { method: 'POST', headers: admin, body: { name: 'Soak', role: 'creator' } });
    userId = Promise.resolve(user.body.data.id as string);
    const made = await request(`${server.baseUrl}/admin/v1/keys`, { method: 'POST', headers: admin, body: { user_id: user.body.data.id, rate_limit: 1_000_000, permissions: ['read:listings', 'write:listings', 'read:webhooks', 'write:webhooks'] } });
    const key = made.body.data.key as string;
    const pool: string[] = [];
    for (let index = 0; STEADY_DATA && index < STEADY_POOL; index += 1) {
      const listing = await request(`${server.baseUrl}/v1/listings`, { method: 'POST', headers: { Authorization: `Bearer ${key}` }, body: { title: `Steady ${index}`, type: 'TOOL', price: 1, description: 'x'.repeat(400) } });
      pool.push(listing.body.data.id as string);
    }
    await request(`${server.baseUrl}/v1/webhooks`, { method: 'POST', headers: { Authorization: `Bearer ${key}` }, body: { url: `http://127.0.0.1:${receiverPort}/hook`, events: ['listing.created', 'listing.updated'] } });

    const counts = { requests: 0, errors5xx: 0 };
    const samples: Sample[] = [];
    const started = performance.now();
    const endsAt = started + MINUTES * 60_000;
    const sample = async (): Promise<void> => {
      const stats = ((await readStats(server.baseUrl, ADMIN_TOKEN).catch(() => null))?.store ?? null) as Record<string, unknown> | null;
      const entry: Sample = {
        minute: Math.round(((performance.now() - started) / 60_000) * 10) / 10,
        rss_mib: mib(rssBytes(server.child.pid))!,
        live_records: (stats?.liveRecords as number | undefined) ?? null,
        log_mib: mib(stats?.logBytes as number | undefined),
        compactions: (stats?.compactions as number | undefined) ?? null,
        requests: counts.requests,
        errors_5xx: counts.errors5xx,
      };
      samples.push(entry);
      console.log(`  ${entry.minute.toFixed(1)} min: RSS ${entry.rss_mib} MiB, ${entry.live_records} records, log ${entry.log_mib} MiB, ${entry.compactions} compactions, ${entry.requests} requests, ${entry.errors_5xx} 5xx`);
    };
    await sample();
    const sampler = setInterval(() => void sample(), SAMPLE_S * 1000);
    await traffic(server.baseUrl, key, seed.sampleIds, () => performance.now() >= endsAt, counts, pool);
    clearInterval(sampler);
    await sample();
    await server.child.stop();

    // A fresh process on the same data: what the data alone costs.
    const fresh = await startServer(dataDir, 'fresh');
    await sleep(5_000);
    const freshReadyMib = mib(rssBytes(fresh.child.pid))!;
    const warmCounts = { requests: 0, errors5xx: 0 };
    const warmEnds = performance.now() + 60_000;
    // With --steady-data, a key of the soak's user, so the same updates go on.
    const freshKey = STEADY_DATA
      ? ((await request(`${fresh.baseUrl}/admin/v1/keys`, { method: 'POST', headers: admin, body: { user_id: user.body.data.id, rate_limit: 1_000_000, permissions: ['read:listings', 'write:listings'] } })).body.data.key as string)
      : await createKey(fresh.baseUrl, ADMIN_TOKEN, 'soak-fresh', 1_000_000);
    await traffic(fresh.baseUrl, freshKey, seed.sampleIds, () => performance.now() >= warmEnds, warmCounts, pool);
    const freshWarmMib = mib(rssBytes(fresh.child.pid))!;
    await fresh.child.stop();
    receiver.close();

    const last = samples.at(-1)!;
    const halfway = samples.find((entry) => entry.minute >= MINUTES / 2) ?? samples[0]!;
    const result = {
      kind: 'soak',
      minutes: MINUTES,
      rate_per_s: RATE,
      create_share: CREATE_SHARE,
      steady_data: STEADY_DATA,
      seeded_listings: LISTINGS,
      samples,
      last_half_growth_percent: Math.round(((last.rss_mib - halfway.rss_mib) / halfway.rss_mib) * 1000) / 10,
      fresh_ready_rss_mib: freshReadyMib,
      fresh_after_a_minute_rss_mib: freshWarmMib,
      soaked_over_fresh: Math.round((last.rss_mib / freshWarmMib) * 100) / 100,
    };
    mkdirSync(RESULTS_DIR, { recursive: true });
    writeFileSync(join(RESULTS_DIR, 'soak.json'), JSON.stringify(result, null, 2) + '\n');
    console.log('');
    console.log('| minute | RSS MiB | records | log MiB | compactions | requests | 5xx |');
    console.log('|---|---|---|---|---|---|---|');
    for (const entry of samples) console.log(`| ${entry.minute} | ${entry.rss_mib} | ${entry.live_records} | ${entry.log_mib} | ${entry.compactions} | ${entry.requests} | ${entry.errors_5xx} |`);
    console.log('');
    console.log(`RSS growth over the last half: ${result.last_half_growth_percent}%; a fresh process on the same data: ${freshReadyMib} MiB ready, ${freshWarmMib} MiB after a minute of the same traffic; soaked/fresh ${result.soaked_over_fresh}`);
    console.log('Saved bench/results/soak.json');
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }
}

await main();
