// Whether hundreds of open event streams slow other clients: a cached GET /v1/listings?limit=20
// driven for a few seconds with no stream open, then with --streams GET /v1/events/stream open
// (each one a connection of its own, held by this process), in alternating rounds on one server,
// so a machine that gets busier mid-run weighs on both alike. The streams are not idle: their
// owner's profile changes every --event-every-ms in both kinds of round (a `user.updated` event,
// which every one of the streams sends), so the rounds differ only by the open streams.
// Prints each round and the medians (req/s, p99) with the ratio streams / none; the server runs on
// one CPU and the load generator with this process on the others (taskset), as the other benches.
// Usage: npm run bench:event-streams -- [--streams 300] [--rounds 5] [--seconds 5]
//          [--connections 10] [--event-every-ms 1000] [--pin auto|on|off] [--generator wrk|node]

import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest, type ClientRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { request } from './api.ts';
import { chooseGenerator, drive, type Measurement } from './drive.ts';
import { choosePinning, freePort, pinTargetsTo, startChild } from './processes.ts';
import { median } from './rounds.ts';
import { LIST_PATH } from './scenarios.ts';

const { values: options } = parseArgs({
  options: {
    streams: { type: 'string', default: '300' },
    rounds: { type: 'string', default: '5' },
    seconds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '10' },
    'event-every-ms': { type: 'string', default: '1000' },
    pin: { type: 'string', default: 'auto' },
    generator: { type: 'string' },
  },
});
const STREAMS = Number(options.streams);
const ROUNDS = Number(options.rounds);
const SECONDS = Number(options.seconds);
const CONNECTIONS = Number(options.connections);
const EVENT_EVERY_MS = Number(options['event-every-ms']);
/** A key holds at most this many streams (EventStreamLimits.perKey by default): the streams are spread over keys. */
const STREAMS_PER_KEY = 5;
const ADMIN_TOKEN = 'bench-operator-token-0123456789';
const REPO_DIR = join(import.meta.dirname, '..');
const RESULTS_DIR = join(import.meta.dirname, 'results');

function log(line: string): void {
  process.stderr.write(`${line}\n`);
}

const pinning = choosePinning(options.pin!);
const generator = chooseGenerator(options.generator);
if (pinning !== null) {
  // This process holds the streams' client ends: on the generator's CPUs, never the server's.
  execFileSync('taskset', ['-a', '-p', '-c', pinning.generatorCpus, String(process.pid)], { stdio: 'ignore' });
  pinTargetsTo(pinning.targetCpus);
}

const workDir = mkdtempSync(join(tmpdir(), 'bench-event-streams-'));
const port = await freePort();
const server = await startChild({
  name: 'server',
  args: ['--import', 'tsx', 'src/main.ts'],
  env: { PORT: String(port), HOST: '127.0.0.1', DATA_DIR: join(workDir, 'data'), MARKETPLACE_DEMO: '0', MARKETPLACE_ADMIN_TOKEN: ADMIN_TOKEN, ACCESS_LOG: '0', NODE_ENV: 'production' },
  cwd: REPO_DIR,
  logFile: join(workDir, 'server.log'),
  readyTimeoutMs: 120_000,
});
const base = `http://127.0.0.1:${port}`;
const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };

async function call(method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<any> {
  const answer = await request(`${base}${path}`, { method, headers, body });
  if (answer.status >= 300) throw new Error(`${method} ${path} answered ${answer.status}: ${answer.body.slice(0, 300)}`);
  return answer.body === '' ? null : JSON.parse(answer.body);
}

async function newKey(userId: string, permissions: string[]): Promise<string> {
  return (await call('POST', '/admin/v1/keys', admin, { user_id: userId, permissions, rate_limit: 1_000_000 })).data.key;
}

/** GET /metrics' count of open streams on the server. */
async function openOnServer(): Promise<number> {
  const answer = await request(`${base}/metrics`, { headers: admin });
  return Number(/^marketplace_event_streams_open (\d+)$/m.exec(answer.body)?.[1] ?? NaN);
}

async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  const started = performance.now();
  while (!(await check())) {
    if (performance.now() - started > 60_000) throw new Error(`${what}: not so within 60 s`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

// The reader's listings (the cached page) and the streams' owner, apart.
const reader = (await call('POST', '/admin/v1/users', admin, { name: 'Bench reader', role: 'creator' })).data;
const readerKey = await newKey(reader.id, ['read:listings', 'write:listings']);
for (let index = 0; index < 100; index += 1) await call('POST', '/v1/listings', { Authorization: `Bearer ${readerKey}` }, { title: `Listing ${index}`, type: 'TOOL', price: index });
const owner = (await call('POST', '/admin/v1/users', admin, { name: 'Bench streams', role: 'member' })).data;
const ownerWriteKey = await newKey(owner.id, ['read:users', 'write:users']);
const streamKeys: string[] = [];
for (let index = 0; index < Math.ceil(STREAMS / STREAMS_PER_KEY); index += 1) streamKeys.push(await newKey(owner.id, ['read:webhooks']));

/** Opens the streams; resolves once each has its answer's head, with what closes them all. */
async function openStreams(): Promise<() => Promise<void>> {
  const requests: ClientRequest[] = [];
  await Promise.all(
    Array.from({ length: STREAMS }, (_unused, index) =>
      new Promise<void>((resolve, reject) => {
        const outgoing = httpRequest(`${base}/v1/events/stream`, { agent: false, headers: { Authorization: `Bearer ${streamKeys[Math.floor(index / STREAMS_PER_KEY)]}` } }, (response) => {
          if (response.statusCode !== 200) reject(new Error(`a stream answered ${response.statusCode}`));
          response.resume();
          resolve();
        });
        outgoing.on('error', () => {});
        requests.push(outgoing);
        outgoing.end();
      }),
    ),
  );
  return async () => {
    for (const outgoing of requests) outgoing.destroy();
    await until('the streams closed on the server', async () => (await openOnServer()) === 0);
  };
}

/** Changes the owner's profile every EVENT_EVERY_MS (a user.updated event to every stream), until stopped. */
function startEvents(): () => Promise<void> {
  let running = true;
  let count = 0;
  const loop = (async () => {
    while (running && EVENT_EVERY_MS > 0) {
      count += 1;
      await call('PUT', '/v1/users/me', { Authorization: `Bearer ${ownerWriteKey}` }, { name: `Bench streams ${count}` });
      await new Promise((resolve) => setTimeout(resolve, EVENT_EVERY_MS));
    }
  })();
  return async () => {
    running = false;
    await loop;
  };
}

const requestsFile = join(workDir, 'requests.txt');
writeFileSync(requestsFile, `GET\t${LIST_PATH}\n`);
const measure = (): Promise<Measurement> =>
  drive({ generator: generator.name, baseUrl: base, requestsFile, headers: [`Authorization: Bearer ${readerKey}`], connections: CONNECTIONS, durationS: SECONDS, cpus: pinning?.generatorCpus ?? null });

interface Round {
  streams: number;
  rps: number;
  p50_ms: number;
  p99_ms: number;
  non_2xx: number;
}
const rounds: Round[] = [];
const stopEvents = startEvents();
try {
  log(`${generator.version}; pinning: ${pinning === null ? 'off' : `server on CPU ${pinning.targetCpus}, generator and streams on ${pinning.generatorCpus}`}`);
  await measure(); // warm-up: the cache filled, the code optimised
  for (let round = 0; round < ROUNDS; round += 1) {
    // Alternating which goes first, so a drift within a pair weighs on both.
    for (const streams of round % 2 === 0 ? [0, STREAMS] : [STREAMS, 0]) {
      const close = streams > 0 ? await openStreams() : null;
      if (close !== null) await until('every stream counted on the server', async () => (await openOnServer()) === STREAMS);
      const measured = await measure();
      await close?.();
      const entry = { streams, rps: measured.rps, p50_ms: round2(measured.p50Ms), p99_ms: round2(measured.p99Ms), non_2xx: measured.non2xx };
      rounds.push(entry);
      log(`round ${round + 1}: ${String(streams).padStart(4)} streams open: ${measured.rps} req/s, p50 ${entry.p50_ms} ms, p99 ${entry.p99_ms} ms${measured.non2xx > 0 ? `, ${measured.non2xx} non-2xx` : ''}`);
    }
  }
} finally {
  await stopEvents();
  await server.stop();
  rmSync(workDir, { recursive: true, force: true });
}

function round2(value: number): number {
  return Math.round(value * 100) / 100;
}

const summary = (streams: number) => {
  const mine = rounds.filter((round) => round.streams === streams);
  return { streams, median_rps: Math.round(median(mine.map((round) => round.rps))), median_p50_ms: round2(median(mine.map((round) => round.p50_ms))), median_p99_ms: round2(median(mine.map((round) => round.p99_ms))) };
};
const without = summary(0);
const withStreams = summary(STREAMS);
// Each pair of rounds (one of each, back to back) as its own ratio: steadier on a machine whose load changes.
const pairRatios = Array.from({ length: ROUNDS }, (_unused, index) => {
  const pair = rounds.slice(index * 2, index * 2 + 2);
  return pair.find((round) => round.streams > 0)!.rps / pair.find((round) => round.streams === 0)!.rps;
});
const result = {
  generator: generator.version,
  pinned: pinning !== null,
  connections: CONNECTIONS,
  seconds_per_round: SECONDS,
  event_every_ms: EVENT_EVERY_MS,
  without,
  with: withStreams,
  rps_ratio: Math.round((withStreams.median_rps / without.median_rps) * 1000) / 1000,
  median_pair_ratio: Math.round(median(pairRatios) * 1000) / 1000,
  rounds,
};
log(`median: ${without.median_rps} req/s (p99 ${without.median_p99_ms} ms) with no stream, ${withStreams.median_rps} req/s (p99 ${withStreams.median_p99_ms} ms) with ${STREAMS} open: ratio ${result.rps_ratio} (median of the rounds' pairs ${result.median_pair_ratio})`);
mkdirSync(RESULTS_DIR, { recursive: true });
writeFileSync(join(RESULTS_DIR, 'event-streams.json'), `${JSON.stringify(result, null, 2)}\n`);
process.stdout.write(`${JSON.stringify(result)}\n`);
