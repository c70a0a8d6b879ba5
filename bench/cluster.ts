// `npm run bench:cluster`: the figures of many instances, all in one run so they compare.
//
//   reads   the cached page GET /v1/listings?limit=20 through nginx (round-robin) in front of
//           1, 2 and 3 instances sharing one PostgreSQL and one Redis;
//   writes  durable POST /v1/listings on one instance on PostgreSQL (+ Redis) versus one
//           file-backed instance (group commit, fsync): alone on its database, and one of three
//           (each write waits until the other two have applied it); and 3 instances via nginx.
//
// Targets are measured in alternating rounds (each round visits every target, in a rotated
// order), so a machine that gets busier mid-run weighs on every target alike. With taskset the
// load generator runs on the last CPU and the instances on the others. PostgreSQL, Redis and
// nginx are started on temporary directories and free ports (test/helpers/services.ts).
// Results: bench/results/cluster.json and cluster.md.

import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, platform, release, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { request } from './api.ts';
import { chooseGenerator, drive, type GeneratorName, type Measurement } from './drive.ts';
import { freePort, pinTargetsTo, startChild } from './processes.ts';
import { median } from './rounds.ts';
import { cpuSpentByProgram, readProcessCpu } from './process-cpu.ts';
import { busiestProfile, profileMarkdown } from './profile-summary.ts';
import { startNginx, startPostgres, startRedis, type NginxService } from '../test/helpers/services.ts';

const USAGE = `npm run bench:cluster [-- options]
  --rounds N               rounds (each visits every target once; default 3)
  --duration S             seconds per measurement (default 5)   --warmup S  seconds before each (default 1)
  --connections N          connections for the reads (default 32)
  --write-connections N    connections for the writes (default 16)
  --listings N             listings seeded before the reads (default 200)
  --only reads|writes      one half only
  --generator wrk|node     load generator (default wrk when installed)
  --pin auto|off           taskset: generator on the last CPU, everything else on the others (default auto)
  --profile                the write instances run under node --cpu-prof; each one's hot spots go to
                           bench/results/profile-cluster-<instance>.md (every round of that instance together)
  --spread                 the write instances each on a CPU of their own (1st, 2nd, 3rd of the
                           instances' CPUs, round robin): what 3 instances reach where cores allow`;

const REPO_DIR = join(import.meta.dirname, '..');
const RESULTS_DIR = join(import.meta.dirname, 'results');
const PROFILES_DIR = join(RESULTS_DIR, 'profiles');
const ADMIN_TOKEN = 'bench-cluster-operator-token-0123456789';
const READ_PATH = '/v1/listings?limit=20';

interface Target {
  name: string;
  baseUrl: string;
  requestsFile: string;
  connections: number;
  /**
   * Makes the API key sent with a round's requests. Every round gets a fresh one: a key's limit
   * counts a minute of requests, and rounds at tens of thousands of requests per second would
   * use it up and measure cheap 429s instead.
   */
  newKey: () => Promise<string>;
  /** A target on PostgreSQL: its database, whose statistics are read around each measured round. */
  databaseUrl?: string;
}

interface TargetResult {
  name: string;
  rounds: Measurement[];
  median_rps: number;
  median_p99_ms: number;
  non2xx: number;
  socket_errors: number;
  /** On PostgreSQL: what its database did per acknowledged write during the measured rounds. */
  database?: DatabaseFigures;
  /** CPU µs per answered request during the measured rounds, by program (the processes this bench started). */
  cpu_us_per_request: Record<string, number>;
}

function log(line: string): void {
  process.stdout.write(`${line}\n`);
}

async function main(): Promise<void> {
  const { values: options } = parseArgs({
    options: {
      rounds: { type: 'string', default: '3' },
      duration: { type: 'string', default: '5' },
      warmup: { type: 'string', default: '1' },
      connections: { type: 'string', default: '32' },
      'write-connections': { type: 'string', default: '16' },
      listings: { type: 'string', default: '200' },
      only: { type: 'string' },
      generator: { type: 'string' },
      pin: { type: 'string', default: 'auto' },
      spread: { type: 'boolean', default: false },
      profile: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (options.help) {
    log(USAGE);
    return;
  }
  const settings = {
    rounds: positive(options.rounds, 'rounds'),
    durationS: positive(options.duration, 'duration'),
    warmupS: Number(options.warmup),
    readConnections: positive(options.connections, 'connections'),
    writeConnections: positive(options['write-connections'], 'write-connections'),
    listings: positive(options.listings, 'listings'),
  };
  const generator = chooseGenerator(options.generator);
  const pinning = choosePinning(options.pin);
  pinTargetsTo(pinning?.instances ?? null);
  const work = mkdtempSync(join(tmpdir(), 'marketplace-bench-cluster-'));
  mkdirSync(RESULTS_DIR, { recursive: true });
  const cleanups: Array<() => Promise<void>> = [];
  const profiled: string[] = [];
  const measure = (targets: Target[]) => runRounds(targets, settings, generator.name, pinning?.generator ?? null);
  const results: { reads: TargetResult[] | null; writes: TargetResult[] | null } = { reads: null, writes: null };
  try {
    log('Starting PostgreSQL and Redis…');
    const postgres = await startPostgres();
    cleanups.push(() => postgres.destroy());
    const redis = await startRedis();
    cleanups.push(() => redis.destroy());
    const startOn = async (name: string, env: Record<string, string>, cpu?: string): Promise<string> => {
      const port = await freePort();
      const profileDir = options.profile === true && name.startsWith('write-') ? join(PROFILES_DIR, name) : null;
      if (profileDir !== null) {
        rmSync(profileDir, { recursive: true, force: true });
        mkdirSync(profileDir, { recursive: true });
        profiled.push(name);
      }
      const child = await startChild({
        ...(cpu === undefined ? {} : { cpus: cpu }),
        name,
        args: [...(profileDir === null ? [] : ['--cpu-prof', `--cpu-prof-dir=${profileDir}`]), '--import', 'tsx', join(REPO_DIR, 'src/main.ts')],
        env: { PORT: String(port), HOST: '127.0.0.1', MARKETPLACE_ADMIN_TOKEN: ADMIN_TOKEN, MARKETPLACE_DEMO: '0', ...env },
        cwd: REPO_DIR,
        logFile: join(work, `${name}.log`),
        readyTimeoutMs: 60_000,
      });
      cleanups.push(() => child.stop());
      return `http://127.0.0.1:${port}`;
    };
    const onDatabase = (url: string) => ({ DATABASE_URL: url, REDIS_URL: redis.url, DATA_DIR: ':memory:' });
    const balance = async (upstreams: string[]): Promise<NginxService> => {
      const nginx = await startNginx(upstreams.map((url) => url.replace('http://', '')));
      cleanups.push(() => nginx.destroy());
      return nginx;
    };

    if (options.only !== 'writes') {
      log('Reads: 3 instances on one database, nginx in front of 1, 2 and 3 of them…');
      const url = postgres.createDatabase('bench_reads');
      const instances: string[] = [];
      for (let index = 1; index <= 3; index += 1) instances.push(await startOn(`read-instance-${index}`, onDatabase(url)));
      await seedReads(instances, settings.listings);
      const newKey = () => keyOnEvery(instances);
      const readsFile = join(work, 'reads.txt');
      writeFileSync(readsFile, `GET\t${READ_PATH}\n`);
      const targets: Target[] = [];
      for (const count of [1, 2, 3]) {
        const nginx = await balance(instances.slice(0, count));
        targets.push({ name: `${count} instance${count === 1 ? '' : 's'}`, baseUrl: nginx.url, requestsFile: readsFile, connections: settings.readConnections, newKey });
      }
      results.reads = await measure(targets);
    }

    if (options.only !== 'reads') {
      log('Writes: POST /v1/listings on the file store, on PostgreSQL, and on 3 PostgreSQL instances via nginx…');
      const fileDir = join(work, 'file-store');
      const fileUrl = await startOn('write-file', { DATA_DIR: fileDir });
      const databaseUrl = postgres.createDatabase('bench_writes');
      // One instance with no other on its database: no other instance to wait for before a write is acknowledged.
      const cpuOf = spreadCpus(options.spread === true ? (pinning?.instances ?? null) : null);
      const aloneDatabaseUrl = postgres.createDatabase('bench_writes_alone');
      const aloneUrl = await startOn('write-postgres-alone', onDatabase(aloneDatabaseUrl), cpuOf(0));
      const pgUrl = await startOn('write-postgres-1', onDatabase(databaseUrl), cpuOf(0));
      const more = [await startOn('write-postgres-2', onDatabase(databaseUrl), cpuOf(1)), await startOn('write-postgres-3', onDatabase(databaseUrl), cpuOf(2))];
      const nginx = await balance([pgUrl, ...more]);
      const writesFile = join(work, 'writes.txt');
      writeFileSync(
        writesFile,
        Array.from({ length: 100 }, (_unused, index) => `POST\t/v1/listings\t${JSON.stringify({ title: `Bench listing ${index}`, description: 'Written by the cluster benchmark.', type: 'TOOL', price: index, tags: ['bench'] })}\n`).join(''),
      );
      const target = (name: string, baseUrl: string, instances: string[], databaseUrl?: string): Target => ({
        name,
        ...(databaseUrl === undefined ? {} : { databaseUrl }),
        baseUrl,
        requestsFile: writesFile,
        connections: settings.writeConnections,
        newKey: () => keyOnEvery(instances),
      });
      results.writes = await measure([
        target('file store, 1 instance', fileUrl, [fileUrl]),
        target('PostgreSQL, 1 instance alone', aloneUrl, [aloneUrl], aloneDatabaseUrl),
        target('PostgreSQL, 1 of 3 instances', pgUrl, [pgUrl], databaseUrl),
        target('PostgreSQL, 3 instances via nginx', nginx.url, [pgUrl, ...more], databaseUrl),
      ]);
    }
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
    rmSync(work, { recursive: true, force: true });
  }
  for (const name of profiled) summariseInstanceProfile(name);

  const report = {
    kind: 'cluster',
    started_at: new Date().toISOString(),
    machine: { cpus: cpus().length, cpu_model: cpus()[0]?.model.trim() ?? 'unknown', memory_gib: Math.round(totalmem() / 1073741824), node: process.version, platform: `${platform()} ${release()}`, load_average: loadavg() },
    generator,
    settings: { ...settings, pinning, spread: options.spread === true },
    git_commit: gitCommit(),
    reads: results.reads,
    writes: results.writes,
  };
  writeFileSync(join(RESULTS_DIR, 'cluster.json'), `${JSON.stringify(report, null, 2)}\n`);
  const markdown = clusterMarkdown(report);
  writeFileSync(join(RESULTS_DIR, 'cluster.md'), markdown);
  log(`\n${markdown}\nWritten: bench/results/cluster.json and cluster.md`);
}

/** A creator and a key made on the first instance; resolves once every instance accepts the key. */
async function keyOnEvery(instances: string[]): Promise<string> {
  const key = await userKey(instances[0]!);
  await waitUntil(async () => (await Promise.all(instances.map((base) => request(`${base}/v1/listings?limit=1`, { headers: bearer(key) })))).every((answer) => answer.status === 200));
  return key;
}

/** A creator, a key and `count` listings made on the first instance; resolves once every instance serves them. */
async function seedReads(instances: string[], count: number): Promise<void> {
  const key = await userKey(instances[0]!);
  for (let index = 0; index < count; index += 1) {
    const made = await request(`${instances[0]}/v1/listings`, {
      method: 'POST',
      headers: bearer(key),
      body: { title: `Seeded listing ${index}`, description: 'A listing for the cluster benchmark.', type: 'TOOL', price: index % 50, tags: ['bench', `tag${index % 7}`] },
    });
    if (made.status !== 201) throw new Error(`seeding: POST /v1/listings answered ${made.status}: ${made.body.slice(0, 200)}`);
  }
  await waitUntil(async () => {
    const answers = await Promise.all(instances.map((base) => request(`${base}${READ_PATH}`, { headers: bearer(key) })));
    return answers.every((answer) => answer.status === 200 && (JSON.parse(answer.body) as { pagination: { total: number } }).pagination.total === count);
  });
}

async function userKey(baseUrl: string): Promise<string> {
  const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };
  const user = await request(`${baseUrl}/admin/v1/users`, { method: 'POST', headers: admin, body: { name: 'Bench creator', role: 'creator' } });
  if (user.status !== 201) throw new Error(`POST /admin/v1/users answered ${user.status}: ${user.body.slice(0, 200)}`);
  const userId = (JSON.parse(user.body) as { data: { id: string } }).data.id;
  const key = await request(`${baseUrl}/admin/v1/keys`, {
    method: 'POST',
    headers: admin,
    body: { user_id: userId, name: 'bench', permissions: ['read:listings', 'write:listings'], rate_limit: 1_000_000, prefix: 'mk' },
  });
  if (key.status !== 201) throw new Error(`POST /admin/v1/keys answered ${key.status}: ${key.body.slice(0, 200)}`);
  return (JSON.parse(key.body) as { data: { key: string } }).data.key;
}

/** Every round measures every target once, starting one target later each round. */
async function runRounds(targets: Target[], settings: { rounds: number; durationS: number; warmupS: number }, generator: GeneratorName, generatorCpus: string | null): Promise<TargetResult[]> {
  const rounds = new Map<string, Measurement[]>(targets.map((target) => [target.name, []]));
  const database = new Map<string, DatabaseCounters>();
  const cpuSeconds = new Map<string, Record<string, number>>(targets.map((target) => [target.name, {}]));
  for (let round = 0; round < settings.rounds; round += 1) {
    for (let step = 0; step < targets.length; step += 1) {
      const target = targets[(round + step) % targets.length]!;
      const key = await target.newKey();
      const common = { generator, baseUrl: target.baseUrl, requestsFile: target.requestsFile, headers: [`Authorization: Bearer ${key}`], connections: target.connections, cpus: generatorCpus };
      if (settings.warmupS > 0) await drive({ ...common, durationS: settings.warmupS });
      const before = target.databaseUrl === undefined ? null : await databaseCounters(target.databaseUrl);
      const cpuBefore = readProcessCpu();
      const measured = await drive({ ...common, durationS: settings.durationS });
      const spent = cpuSpentByProgram(cpuBefore, readProcessCpu());
      const sums = cpuSeconds.get(target.name)!;
      for (const [program, seconds] of Object.entries(spent)) sums[program] = (sums[program] ?? 0) + seconds;
      rounds.get(target.name)!.push(measured);
      if (before !== null) addDatabaseRound(database, target.name, before, await databaseCounters(target.databaseUrl!));
      log(`  round ${round + 1}, ${target.name}: ${measured.rps} req/s, p99 ${measured.p99Ms.toFixed(1)} ms${measured.non2xx + measured.socketErrors > 0 ? `, ${measured.non2xx} non-2xx, ${measured.socketErrors} socket errors` : ''}`);
    }
  }
  return targets.map((target) => {
    const measured = rounds.get(target.name)!;
    return {
      name: target.name,
      rounds: measured,
      median_rps: median(measured.map((one) => one.rps)),
      median_p99_ms: median(measured.map((one) => one.p99Ms)),
      non2xx: measured.reduce((sum, one) => sum + one.non2xx, 0),
      socket_errors: measured.reduce((sum, one) => sum + one.socketErrors, 0),
      cpu_us_per_request: perRequest(cpuSeconds.get(target.name)!, measured.reduce((sum, one) => sum + one.requests, 0)),
      ...(database.has(target.name) ? { database: perWrite(database.get(target.name)!) } : {}),
    };
  });
}

function clusterMarkdown(report: { machine: { cpus: number; cpu_model: string; load_average: number[] }; generator: { version: string }; settings: { rounds: number; durationS: number; readConnections: number; writeConnections: number; pinning: { instances: string; generator: string } | null; spread: boolean }; git_commit: string | null; reads: TargetResult[] | null; writes: TargetResult[] | null }): string {
  const table = (title: string, rows: TargetResult[], connections: number) => {
    const base = rows[0]!.median_rps;
    return [
      `### ${title} (${connections} connections, median of ${report.settings.rounds} rounds of ${report.settings.durationS} s)`,
      '',
      `| target | req/s (median) | × ${rows[0]!.name} | p99 ms (median) | req/s per round | non-2xx | socket errors | CPU µs per request, by program |`,
      '|---|---:|---:|---:|---|---:|---:|---|',
      ...rows.map((row) => `| ${row.name} | ${Math.round(row.median_rps)} | ${(row.median_rps / base).toFixed(2)} | ${row.median_p99_ms.toFixed(1)} | ${row.rounds.map((one) => one.rps).join(', ')} | ${row.non2xx} | ${row.socket_errors} | ${cpuCell(row.cpu_us_per_request)} |`),
      '',
    ].join('\n');
  };
  const lines = [
    '## Many instances: cached reads through nginx, durable writes',
    '',
    `${report.machine.cpus} × ${report.machine.cpu_model}, load average at the end ${report.machine.load_average.map((value) => value.toFixed(2)).join(' / ')}; ` +
      `${report.generator.version}; pinning: ${report.settings.pinning === null ? 'off' : `instances on CPUs ${report.settings.pinning.instances}, generator on ${report.settings.pinning.generator}`}; commit ${report.git_commit?.slice(0, 12) ?? 'unknown'}.`,
    '',
  ];
  if (report.reads) lines.push(table(`GET ${READ_PATH} (cached page) through nginx round-robin`, report.reads, report.settings.readConnections));
  if (report.writes) lines.push(table('POST /v1/listings (durable: fsync / PostgreSQL commit before the answer)', report.writes, report.settings.writeConnections));
  const onDatabase = (report.writes ?? []).filter((row) => row.database !== undefined);
  if (onDatabase.length > 0) {
    lines.push(
      '| PostgreSQL, during the measured rounds | writes acknowledged | statements per write | WAL flushes per write | writes to marketplace_instances per second |',
      '|---|---:|---:|---:|---:|',
      ...onDatabase.map((row) => {
        const figures = row.database!;
        return `| ${row.name} | ${figures.writes} | ${figures.statementsPerWrite.toFixed(2)} | ${figures.walFlushesPerWrite.toFixed(2)} | ${figures.instanceRowWritesPerSecond.toFixed(2)} |`;
      }),
      '',
    );
  }
  lines.push(
    report.settings.spread
      ? 'The write instances each ran on a CPU of their own (--spread), sharing them with PostgreSQL, Redis and nginx.'
      : 'Every instance of a run shares the same CPUs as PostgreSQL, Redis and nginx: more instances help only where there are cores to spare.',
    '',
  );
  return lines.join('\n');
}

/** One instance's profile, summarised beside the results. */
function summariseInstanceProfile(name: string): void {
  const busiest = busiestProfile(join(PROFILES_DIR, name));
  if (busiest === null) return log(`  (no profile of ${name}: it did not exit cleanly)`);
  const target = join(RESULTS_DIR, `profile-cluster-${name}.md`);
  writeFileSync(target, profileMarkdown(`Instance ${name} (${busiest.file})`, busiest.summary));
  log(`  profile of ${name}: ${target}`);
}

/** "node 310, postgres 120 (total 470)": the measured rounds' CPU per request. */
function cpuCell(figures: Record<string, number>): string {
  const entries = Object.entries(figures);
  if (entries.length === 0) return 'n/a';
  const total = entries.reduce((sum, [, us]) => sum + us, 0);
  return `${entries.map(([program, us]) => `${program} ${us}`).join(', ')} (total ${total})`;
}

/** CPU seconds by program → µs per request, the programs that used at least 1 µs each. */
function perRequest(seconds: Record<string, number>, requests: number): Record<string, number> {
  const figures: Record<string, number> = {};
  for (const [program, spent] of Object.entries(seconds).sort((a, b) => b[1] - a[1])) {
    const us = (spent * 1e6) / Math.max(1, requests);
    if (us >= 1) figures[program] = Math.round(us);
  }
  return figures;
}

/** With --spread, instance n's CPU (round robin over the instances' CPUs, e.g. "0-2"); undefined: the instances' CPUs. */
function spreadCpus(instanceCpus: string | null): (index: number) => string | undefined {
  if (instanceCpus === null) return () => undefined;
  const range = /^(\d+)-(\d+)$/.exec(instanceCpus);
  const list = range === null ? instanceCpus.split(',') : Array.from({ length: Number(range[2]) - Number(range[1]) + 1 }, (_unused, index) => String(Number(range[1]) + index));
  return (index) => list[index % list.length];
}

/** What a target's database did during its measured rounds, read from PostgreSQL's statistics. */
interface DatabaseCounters {
  transactions: number;
  walSyncs: number;
  instanceRowWrites: number;
  listings: number;
  seconds: number;
}

export interface DatabaseFigures {
  /** Transactions (each query is one) per acknowledged write, every instance on the database together. */
  statementsPerWrite: number;
  /** WAL flushes per acknowledged write (the server's: nothing else writes during the round). */
  walFlushesPerWrite: number;
  /** Rows written to marketplace_instances per second, every instance on the database together. */
  instanceRowWritesPerSecond: number;
  writes: number;
}

async function databaseCounters(url: string): Promise<DatabaseCounters> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    // Each backend reports its statistics now and then (at most every second): give them time to.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    await client.query('SELECT pg_stat_clear_snapshot()');
    const row = (
      await client.query(`SELECT (SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()) AS transactions,
              (SELECT wal_sync FROM pg_stat_wal) AS wal_syncs,
              (SELECT n_tup_ins + n_tup_upd FROM pg_stat_user_tables WHERE relname = 'marketplace_instances') AS instance_rows,
              (SELECT count(*) FROM marketplace_records WHERE collection = 'listings') AS listings`)
    ).rows[0];
    return { transactions: Number(row.transactions), walSyncs: Number(row.wal_syncs), instanceRowWrites: Number(row.instance_rows), listings: Number(row.listings), seconds: performance.now() / 1000 };
  } finally {
    await client.end();
  }
}

/** Adds one measured round's differences to the target's sums. */
function addDatabaseRound(sums: Map<string, DatabaseCounters>, name: string, before: DatabaseCounters, after: DatabaseCounters): void {
  const sum = sums.get(name) ?? { transactions: 0, walSyncs: 0, instanceRowWrites: 0, listings: 0, seconds: 0 };
  sums.set(name, {
    transactions: sum.transactions + after.transactions - before.transactions,
    walSyncs: sum.walSyncs + after.walSyncs - before.walSyncs,
    instanceRowWrites: sum.instanceRowWrites + after.instanceRowWrites - before.instanceRowWrites,
    listings: sum.listings + after.listings - before.listings,
    seconds: sum.seconds + after.seconds - before.seconds,
  });
}

function perWrite(sum: DatabaseCounters): DatabaseFigures {
  const writes = Math.max(1, sum.listings);
  return {
    statementsPerWrite: sum.transactions / writes,
    walFlushesPerWrite: sum.walSyncs / writes,
    instanceRowWritesPerSecond: sum.instanceRowWrites / sum.seconds,
    writes: sum.listings,
  };
}

/** Generator on the last CPU, everything else on the others; null without taskset or with one CPU. */
function choosePinning(wanted: string | undefined): { instances: string; generator: string } | null {
  if (wanted === 'off') return null;
  const count = cpus().length;
  if (count < 2) return null;
  try {
    execFileSync('taskset', ['-c', '0', 'true'], { stdio: 'ignore' });
  } catch {
    return null;
  }
  return { instances: count === 2 ? '0' : `0-${count - 2}`, generator: String(count - 1) };
}

function bearer(key: string): Record<string, string> {
  return { Authorization: `Bearer ${key}` };
}

async function waitUntil(check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not so within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function positive(text: string | undefined, name: string): number {
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} must be a positive number, got ${JSON.stringify(text)}`);
  return value;
}

function gitCommit(): string | null {
  try {
    return execFileSync('git', ['rev-parse', 'HEAD'], { cwd: REPO_DIR, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:cluster failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
