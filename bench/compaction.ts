// What a compaction costs the requests around it: a server loaded with N listings of about
// 1 KB, 80% of them updated once (so the log is almost half superseded, yet the automatic
// compaction does not start during the run), steady read and write traffic from this
// process, and a window without compaction compared with the window of `POST /admin/v1/compact`
// (from the request until its answer): worst and p99 latency of reads and writes, the longest
// event-loop delay in the server (bench/loop-delay-probe.ts, loaded into it), and how long the
// compaction took, `--repeats` times per server (a window without, then one with). `--compare-entry`
// runs the same against another checkout's server (e.g. the code before compaction ran beside
// writes), each on its own copy of the same seeded data.
// Usage: npm run bench:compaction -- [--sizes 100000,1000000] [--baseline-seconds 8]
//          [--entry src/main.ts] [--compare-entry /path/to/other/src/main.ts] [--writers 4]
//          [--readers 8] [--write-rate 25] [--read-rate 50] [--repeats 2] [--warmup 5]
//          (rates per client, per second; seconds of traffic before the first window)

import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { describeMachine } from './machine.ts';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { CompactionLatency, CompactionResults, CompactionRun, CompactionWindow } from './report.ts';
import { BENCH_USER_ID, LOG_FILE_NAME, writeSeedLog } from './seed.ts';

const REPO_DIR = resolve(import.meta.dirname, '..');
const TOKEN = 'bench-operator-token-0123456789abcdef';
const PROBE = join(import.meta.dirname, 'loop-delay-probe.ts');

const { values: options } = parseArgs({
  options: {
    sizes: { type: 'string', default: '100000,1000000' },
    'baseline-seconds': { type: 'string', default: '8' },
    entry: { type: 'string', default: join(REPO_DIR, 'src/main.ts') },
    'compare-entry': { type: 'string' },
    writers: { type: 'string', default: '4' },
    readers: { type: 'string', default: '8' },
    'write-rate': { type: 'string', default: '25' },
    'read-rate': { type: 'string', default: '50' },
    repeats: { type: 'string', default: '2' },
    warmup: { type: 'string', default: '5' },
  },
});

interface Sample {
  kind: 'read' | 'write';
  sentAt: number;
  answeredAt: number;
  status: number;
}

/** One server process: its URL, and the loop-delay lines it printed (epoch ms, max ms). */
interface Server {
  url: string;
  child: ChildProcess;
  loopDelays: Array<{ at: number; maxMs: number }>;
  stop(): Promise<void>;
}

async function startServer(entry: string, dataDir: string): Promise<Server> {
  const args = ['--max-old-space-size=12288', ...(entry.endsWith('.ts') ? ['--import', 'tsx'] : []), '--import', PROBE, entry];
  const child = spawn(process.execPath, args, {
    cwd: REPO_DIR,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, MARKETPLACE_DEMO: '0', MARKETPLACE_ADMIN_TOKEN: TOKEN, ACCESS_LOG: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const loopDelays: Server['loopDelays'] = [];
  let stdout = '';
  let stderr = '';
  const url = await new Promise<string>((done, fail) => {
    child.stdout!.setEncoding('utf8').on('data', (text: string) => {
      stdout += text;
      let newline = stdout.indexOf('\n');
      while (newline !== -1) {
        const line = stdout.slice(0, newline);
        stdout = stdout.slice(newline + 1);
        const delay = /^loop-delay (\d+) ([\d.]+)$/.exec(line);
        if (delay) loopDelays.push({ at: Number(delay[1]), maxMs: Number(delay[2]) });
        const listening = /listening on (http:\/\/\S+)/.exec(line);
        if (listening) done(listening[1]!);
        newline = stdout.indexOf('\n');
      }
    });
    child.stderr!.setEncoding('utf8').on('data', (text: string) => {
      stderr += text;
    });
    child.once('exit', (code) => fail(new Error(`the server exited (${code}) before listening: ${stderr.slice(-2000)}`)));
  });
  return {
    url,
    child,
    loopDelays,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((done) => child.once('exit', done));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

function call(agent: Agent, url: string, method: string, path: string, auth: string, body?: unknown): Promise<{ status: number; text: string }> {
  return new Promise((done, fail) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const outgoing = request(
      new URL(path, url),
      { method, agent, headers: { authorization: `Bearer ${auth}`, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) } },
      (response) => {
        let text = '';
        response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        response.on('end', () => done({ status: response.statusCode ?? 0, text }));
      },
    );
    outgoing.on('error', fail);
    outgoing.end(payload);
  });
}

/** Closed-loop clients at a steady pace: each sends, waits for the answer, then waits for its next slot. */
function startTraffic(server: Server, key: string, ids: string[], samples: Sample[]): () => Promise<void> {
  let stopped = false;
  const client = async (kind: Sample['kind'], perSecond: number, index: number) => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const interval = 1000 / perSecond;
    let next = performance.now() + Math.random() * interval;
    let serial = index * 1_000_000;
    while (!stopped) {
      const wait = next - performance.now();
      if (wait > 0) await new Promise((done) => setTimeout(done, wait));
      next = Math.max(next + interval, performance.now());
      const id = ids[Math.floor(Math.random() * ids.length)]!;
      const sentAt = Date.now();
      serial += 1;
      try {
        const answer =
          kind === 'read'
            ? await call(agent, server.url, 'GET', `/v1/listings/${id}`, key)
            : await call(agent, server.url, 'PUT', `/v1/listings/${id}`, key, { price: serial % 100_000 });
        samples.push({ kind, sentAt, answeredAt: Date.now(), status: answer.status });
      } catch {
        samples.push({ kind, sentAt, answeredAt: Date.now(), status: 0 });
      }
    }
    agent.destroy();
  };
  const clients = [
    ...Array.from({ length: Number(options.writers) }, (_, index) => client('write', Number(options['write-rate']), index)),
    ...Array.from({ length: Number(options.readers) }, (_, index) => client('read', Number(options['read-rate']), 100 + index)),
  ];
  return async () => {
    stopped = true;
    await Promise.all(clients);
  };
}

/** Figures for the requests in flight at any moment of [from, to] (so one held through it counts). */
function windowFigures(samples: Sample[], server: Server, from: number, to: number): CompactionWindow {
  const figures = (kind: Sample['kind']): CompactionLatency => {
    const inWindow = samples.filter((sample) => sample.kind === kind && sample.answeredAt >= from && sample.sentAt <= to);
    const latencies = inWindow.map((sample) => sample.answeredAt - sample.sentAt).sort((left, right) => left - right);
    const failed = inWindow.filter((sample) => sample.status < 200 || sample.status >= 300);
    const errorStatuses: Record<string, number> = {};
    for (const sample of failed) errorStatuses[sample.status] = (errorStatuses[sample.status] ?? 0) + 1;
    return {
      count: latencies.length,
      errors: failed.length,
      errorStatuses,
      p99Ms: latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * 0.99))] ?? NaN,
      maxMs: latencies.at(-1) ?? NaN,
    };
  };
  // A probe line covers the 100 ms before it; one printed up to 100 ms after the window still covers it.
  const delays = server.loopDelays.filter((line) => line.at >= from && line.at <= to + 100).map((line) => line.maxMs);
  return { seconds: (to - from) / 1000, read: figures('read'), write: figures('write'), loopDelayMaxMs: Math.max(0, ...delays) };
}

async function measure(label: string, entry: string, seededDir: string, listings: number, logBytes: number, sampleIds: string[]): Promise<CompactionRun[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'mkt-bench-compaction-run-'));
  try {
    copyFileSync(join(seededDir, LOG_FILE_NAME), join(dataDir, LOG_FILE_NAME));
    const began = performance.now();
    const server = await startServer(entry, dataDir);
    const startSeconds = (performance.now() - began) / 1000;
    try {
      const admin = new Agent({ keepAlive: true });
      const created = await call(admin, server.url, 'POST', '/admin/v1/keys', TOKEN, { user_id: BENCH_USER_ID, permissions: ['read:listings', 'write:listings'], rate_limit: 1_000_000 });
      if (created.status !== 201) throw new Error(`creating the bench key: ${created.status} ${created.text}`);
      const key = (JSON.parse(created.text) as { data: { key: string } }).data.key;
      const samples: Sample[] = [];
      const stop = startTraffic(server, key, sampleIds, samples);
      const pause = (ms: number) => new Promise((done) => setTimeout(done, ms));
      // The first requests after a start also build caches and indexes: not part of either window.
      await pause(Number(options.warmup) * 1000);
      const runs: CompactionRun[] = [];
      for (let repeat = 1; repeat <= Number(options.repeats); repeat += 1) {
        const withoutFrom = Date.now();
        await pause(Number(options['baseline-seconds']) * 1000);
        const withoutTo = Date.now();
        const answer = await call(admin, server.url, 'POST', '/admin/v1/compact', TOKEN);
        const compactTo = Date.now();
        await pause(1_000);
        const run: CompactionRun = {
          label,
          repeat,
          listings,
          logBytesBefore: logBytes,
          startSeconds,
          compactionSeconds: (compactTo - withoutTo) / 1000,
          compactionAnswer: `${answer.status} ${answer.text.slice(0, 200)}`,
          without: windowFigures(samples, server, withoutFrom, withoutTo),
          during: windowFigures(samples, server, withoutTo, compactTo),
        };
        process.stderr.write(`${JSON.stringify(run)}\n`);
        runs.push(run);
      }
      await stop();
      admin.destroy();
      return runs;
    } finally {
      await server.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function row(run: CompactionRun): string {
  const { without, during } = run;
  const pair = (left: number, right: number) => `${left.toFixed(0)} / ${right.toFixed(0)}`;
  return (
    `| ${run.listings.toLocaleString('en')} | ${run.label} (${run.repeat}) | ${run.compactionSeconds.toFixed(2)} s | ` +
    `${pair(without.write.maxMs, during.write.maxMs)} | ${pair(without.write.p99Ms, during.write.p99Ms)} | ` +
    `${pair(without.read.maxMs, during.read.maxMs)} | ${pair(without.read.p99Ms, during.read.p99Ms)} | ` +
    `${pair(without.loopDelayMaxMs, during.loopDelayMaxMs)} | ${during.write.count} / ${during.read.count} | ${during.write.errors + during.read.errors} |`
  );
}

/** The commit checked out where `entry` lives (its checkout may be another worktree). */
function commitOf(entry: string): string | null {
  try {
    return execFileSync('git', ['rev-parse', 'HEAD'], { cwd: dirname(entry), encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
}

async function main(): Promise<void> {
  const sizes = options.sizes.split(',').map((size) => Number(size));
  const entry = resolve(options.entry);
  const compared = options['compare-entry'] === undefined ? null : resolve(options['compare-entry']);
  const results: CompactionResults = {
    kind: 'compaction',
    started_at: new Date().toISOString(),
    machine: describeMachine(),
    generator: { name: 'bench/compaction.ts', version: '' },
    settings: {
      rounds: Number(options.repeats),
      duration_s: Number(options['baseline-seconds']),
      warmup_s: Number(options.warmup),
      read_connections: Number(options.readers),
      write_connections: Number(options.writers),
      pinning: null,
    },
    git_commit: commitOf(entry),
    servers: [{ label: 'this code', entry, git_commit: commitOf(entry) }, ...(compared === null ? [] : [{ label: 'compared', entry: compared, git_commit: commitOf(compared) }])],
    traffic: {
      writers: Number(options.writers),
      readers: Number(options.readers),
      writes_per_s_each: Number(options['write-rate']),
      reads_per_s_each: Number(options['read-rate']),
      warmup_s: Number(options.warmup),
      without_s: Number(options['baseline-seconds']),
      repeats: Number(options.repeats),
    },
    runs: [],
  };
  const save = () => {
    mkdirSync(join(REPO_DIR, 'bench/results'), { recursive: true });
    writeFileSync(join(REPO_DIR, 'bench/results/latest-compaction.json'), `${JSON.stringify(results, null, 2)}\n`);
  };
  for (const listings of sizes) {
    const seededDir = mkdtempSync(join(tmpdir(), 'mkt-bench-compaction-seed-'));
    try {
      const seeded = await writeSeedLog({ dataDir: seededDir, listingCount: listings, descriptionWords: 130, updatedShare: 0.8, sampleIdCount: 10_000 });
      process.stderr.write(`seeded ${listings} listings, ${(seeded.logBytes / 1048576).toFixed(0)} MiB, in ${seeded.seconds.toFixed(1)} s\n`);
      results.runs.push(...(await measure('this code', entry, seededDir, listings, seeded.logBytes, seeded.sampleIds)));
      save();
      if (compared !== null) results.runs.push(...(await measure('compared', compared, seededDir, listings, seeded.logBytes, seeded.sampleIds)));
      save();
    } finally {
      rmSync(seededDir, { recursive: true, force: true });
    }
  }
  const table = [
    '| listings | server | compaction | worst write ms (without / during) | p99 write ms | worst read ms | p99 read ms | event-loop delay max ms | writes / reads during | errors |',
    '|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...results.runs.map(row),
  ].join('\n');
  process.stdout.write(`${table}\nwritten to bench/results/latest-compaction.json (npm run bench:publish -- --only compaction puts it in the docs)\n`);
}

await main();
