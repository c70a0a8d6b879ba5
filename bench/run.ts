// `npm run bench`: seeds a temporary data dir, starts the real server and the two baselines as
// child processes, drives them from a separate load generator, and writes bench/results/latest.json
// and latest.md. `-- --scale` repeats A-C over 1k…1M listings; `-- --startup` times a 1M-listing
// load; `-- --calibrate` measures the load generators themselves against the ceiling.

import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { describeMachine } from './machine.ts';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createKey, readStats, request } from './api.ts';
import { chooseGenerator, drive, WRK_INSTALL_HINT, type GeneratorName } from './drive.ts';
import { choosePinning, freePort, peakRssBytes, pinTargetsTo, rssBytes, startChild, type Pinning, type RunningChild } from './processes.ts';
import { mainMarkdown, scaleMarkdown, startupMarkdown, type MainResults, type RunContext, type ScaleResults, type StartupResults } from './report.ts';
import { BUSY_MACHINE_PERCENT, median, runScenario, type RoundSettings, type ScenarioResult, type Target } from './rounds.ts';
import { captureAnswer, type CapturedAnswers } from './capture.ts';
import {
  durableWriteBodies,
  FILTERED_PATH,
  LIST_PATH,
  MISS_SAMPLE_PATHS,
  otherScenarios,
  readScenarios,
  UNCACHED_SAMPLE_PATH,
  WRITE_PATH,
  type Scenario,
  type ScenarioInputs,
} from './scenarios.ts';
import { FILTER_WORD, writeSeedLog, type SeedResult } from './seed.ts';
import { busiestProfile, profileMarkdown } from './profile-summary.ts';
import { measureWritesPerRequest, writesPerRequestMarkdown } from './writes-per-request.ts';

const USAGE = `npm run bench [-- options]
  (no mode)            scenarios A, B1-B4, C, E, D on 10,000 listings, with the ceiling and naive baselines
  --scale              A, B1-B4, C on 1,000 / 10,000 / 100,000 / 1,000,000 listings (--sizes to change)
  --startup            time to ready and RSS for a server loading 1,000,000 listings (--listings to change)
  --calibrate          how fast the load generators themselves go against the ceiling server
  --writes             what a read and a write cost the log (bytes and store operations per request) on
                       10,000 listings (--listings to change); also with a webhook delivered
  --generator wrk|node load generator (default: wrk when installed, else bench/loadgen.ts)
  --rounds N           rounds per target (default 3)          --duration S  seconds per round (default 4; 2 for --scale)
  --warmup S           warm-up seconds before each round (1)  --listings N  listings in the data set
  --connections N      connections for reads (default 10)     --write-connections N  for D (default 64)
  --only A,C,D         run only these scenarios               --sizes 1000,10000     listing counts for --scale
  --entry FILE         server entry (default dist/main.js, built first by npm run build: what users run;
                       a .ts entry runs through tsx)          --keep        keep the temporary data dir
  --server-env N=V     extra environment for the server (repeatable), e.g. --server-env MARKETPLACE_ANALYTICS=0;
                       the server otherwise runs with its shipped defaults (access log and analytics on)
  --variant N=V[,N=V]  also run a second server with this extra environment, in the same alternating
                       rounds, and compare it with the first (e.g. --only A --variant MARKETPLACE_ANALYTICS=0)
  --variant-entry FILE the second server's entry instead (e.g. another checkout's src/main.ts), to
                       compare two versions of the code; combine with --variant or use alone
  --profile            run the server under node --cpu-prof; hot spots go to bench/results/profile-*.md
  --pin auto|on|off    servers on CPU 0, load generator on the others (default auto: when there are
                       2+ CPUs and taskset); steadier figures
wrk is used when installed (apt-get install wrk); otherwise bench/loadgen.ts drives the load.
Results go to bench/results/ (git-ignored); npm run bench:publish copies them into the committed
docs/performance-results*.json and rewrites the figures in README.md and docs/performance.md.`;

const DEFAULT_ENTRY = 'dist/main.js';

const { values: options } = parseArgs({
  options: {
    scale: { type: 'boolean', default: false },
    startup: { type: 'boolean', default: false },
    calibrate: { type: 'boolean', default: false },
    writes: { type: 'boolean', default: false },
    generator: { type: 'string' },
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string' },
    warmup: { type: 'string', default: '1' },
    listings: { type: 'string' },
    connections: { type: 'string', default: '10' },
    'write-connections': { type: 'string', default: '64' },
    only: { type: 'string' },
    sizes: { type: 'string', default: '1000,10000,100000,1000000' },
    entry: { type: 'string', default: DEFAULT_ENTRY },
    'server-env': { type: 'string', multiple: true, default: [] },
    variant: { type: 'string' },
    'variant-entry': { type: 'string' },
    profile: { type: 'boolean', default: false },
    pin: { type: 'string', default: 'auto' },
    keep: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});

const REPO_DIR = join(import.meta.dirname, '..');
const RESULTS_DIR = join(import.meta.dirname, 'results');
const LOGS_DIR = join(RESULTS_DIR, 'logs');
const PROFILES_DIR = join(RESULTS_DIR, 'profiles');
const ADMIN_TOKEN = randomBytes(24).toString('hex');
/** Baselines get an Authorization header of the same length as a real key, so requests weigh the same. */
const WARM_UP_S = 2;
const DUMMY_AUTH = `Authorization: Bearer mk_${'x'.repeat(36)}`;

function positiveNumber(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} must be a positive number, got "${raw}"`);
  return value;
}

function log(line: string): void {
  process.stdout.write(`${line}\n`);
}

function gitCommit(): string | null {
  try {
    return execFileSync('git', ['rev-parse', 'HEAD'], { cwd: REPO_DIR, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
}

function context(settings: RoundSettings, generatorVersion: string, readConnections: number, writeConnections: number, pinning: Pinning | null): RunContext {
  return {
    started_at: new Date().toISOString(),
    machine: describeMachine(),
    generator: { name: settings.generator, version: generatorVersion },
    settings: {
      rounds: settings.rounds,
      duration_s: settings.durationS,
      warmup_s: settings.warmupS,
      read_connections: readConnections,
      write_connections: writeConnections,
      pinning: pinning === null ? null : { target_cpus: pinning.targetCpus, generator_cpus: pinning.generatorCpus },
    },
    git_commit: gitCommit(),
  };
}

function mib(bytes: number | null): number | null {
  return bytes === null ? null : Math.round(bytes / 1048576);
}

function sleep(milliseconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, milliseconds));
}

interface StartedServer {
  child: RunningChild;
  baseUrl: string;
  healthzMs: number;
}

/** --server-env NAME=VALUE pairs as an environment object. */
function extraServerEnv(pairs: string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const pair of pairs) {
    const equals = pair.indexOf('=');
    if (equals < 1) throw new Error(`--server-env wants NAME=VALUE, got "${pair}"`);
    env[pair.slice(0, equals)] = pair.slice(equals + 1);
  }
  return env;
}

async function startServer(
  dataDir: string,
  label: string,
  extraEnv: Record<string, string> = extraServerEnv(options['server-env']),
  entry: string = options.entry,
): Promise<StartedServer> {
  const port = await freePort();
  const started = performance.now();
  const profileDir = options.profile ? join(PROFILES_DIR, label) : null;
  if (profileDir !== null) {
    rmSync(profileDir, { recursive: true, force: true });
    mkdirSync(profileDir, { recursive: true });
  }
  const child = await startChild({
    name: `server (${entry})`,
    args: [...(profileDir === null ? [] : ['--cpu-prof', `--cpu-prof-dir=${profileDir}`]), ...entryArgs(entry)],
    env: {
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      MARKETPLACE_DEMO: '0',
      MARKETPLACE_ADMIN_TOKEN: ADMIN_TOKEN,
      NODE_ENV: 'production',
      ...extraEnv,
    },
    cwd: REPO_DIR,
    logFile: join(LOGS_DIR, `server-${label}.log`),
    readyTimeoutMs: 180_000,
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  for (let attempt = 0; ; attempt++) {
    const answer = await request(`${baseUrl}/healthz`).catch(() => null);
    if (answer?.status === 200) break;
    if (attempt > 100) throw new Error(`GET /healthz did not answer 200 (last: ${answer?.status ?? 'no answer'})`);
    await sleep(50);
  }
  const stop = async (): Promise<void> => {
    await child.stop();
    if (profileDir !== null) summariseProfiles(profileDir, label);
  };
  return { child: { ...child, stop }, baseUrl, healthzMs: performance.now() - started };
}

/** A built .js entry runs as users run it; a .ts one through tsx (e.g. another checkout's sources). */
function entryArgs(entry: string): string[] {
  return entry.endsWith('.ts') ? ['--import', 'tsx', entry] : [entry];
}

/** The built entries come from the sources of this checkout: build them first so they are current. */
function buildIfNeeded(entries: Array<string | undefined>): void {
  if (!entries.some((entry) => entry !== undefined && entry.startsWith('dist/'))) return;
  log('Building dist/ (npm run build)…');
  execFileSync(process.execPath, ['--import', 'tsx', join(REPO_DIR, 'src/build/build.ts')], { cwd: REPO_DIR, stdio: ['ignore', 'ignore', 'inherit'] });
}

/** After a profiled server stops: its .cpuprofile summarised into bench/results/profile-<label>.md. */
function summariseProfiles(profileDir: string, label: string): void {
  const busiest = busiestProfile(profileDir);
  if (busiest === null) {
    log(`  (no .cpuprofile in ${profileDir}: the server did not exit cleanly)`);
    return;
  }
  const { file: name, summary } = busiest;
  const markdown = profileMarkdown(`Server profile ${label} (${name})`, summary);
  const target = join(RESULTS_DIR, `profile-${label}.md`);
  writeFileSync(target, markdown);
  log(`  profile: ${relativeToRepo(join(profileDir, name))} (open in Chrome DevTools), summary in ${relativeToRepo(target)}`);
}

function relativeToRepo(path: string): string {
  return path.startsWith(`${REPO_DIR}/`) ? path.slice(REPO_DIR.length + 1) : path;
}

async function startBaseline(kind: 'ceiling' | 'naive' | 'same-bytes' | 'group-commit', args: string[], label: string): Promise<{ child: RunningChild; baseUrl: string }> {
  const port = await freePort();
  const child = await startChild({
    name: `${kind} baseline`,
    args: ['--import', 'tsx', join(import.meta.dirname, `baseline-${kind}.ts`), '--port', String(port), ...args],
    cwd: REPO_DIR,
    logFile: join(LOGS_DIR, `${kind}-${label}.log`),
    readyTimeoutMs: 180_000,
  });
  return { child, baseUrl: `http://127.0.0.1:${port}` };
}

/**
 * Ms from the server's start until a text search answered: a search waits for the search
 * index, which fills after the server listens.
 */
async function waitForSearchIndex(server: StartedServer): Promise<number> {
  const key = await createKey(server.baseUrl, ADMIN_TOKEN, 'bench-search-ready', 100);
  const began = performance.now();
  const answer = await request(`${server.baseUrl}/v1/listings?q=${FILTER_WORD}&limit=1`, { headers: { Authorization: `Bearer ${key}` } });
  if (answer.status !== 200) throw new Error(`The first search answered ${answer.status}`);
  return server.child.readyMs + performance.now() - began;
}

/** The server as a benchmark target: a fresh key per round keeps each key far below its limit. */
function serverTarget(server: StartedServer, warnings: string[], name: 'server' | 'variant' = 'server'): Target {
  let keyNumber = 0;
  return {
    name,
    baseUrl: server.baseUrl,
    pid: server.child.pid,
    async prepare(scenario: Scenario): Promise<string[]> {
      keyNumber++;
      if (scenario.key === 'main') {
        const key = await createKey(server.baseUrl, ADMIN_TOKEN, `bench-${keyNumber}`, 1_000_000);
        return [`Authorization: Bearer ${key}`, ...(scenario.extraHeaders ?? [])];
      }
      const key = await createKey(server.baseUrl, ADMIN_TOKEN, `bench-limited-${keyNumber}`, 1);
      const headers = { Authorization: `Bearer ${key}` };
      const first = await request(`${server.baseUrl}${LIST_PATH}`, { headers });
      const second = await request(`${server.baseUrl}${LIST_PATH}`, { headers });
      if (first.status !== 200 || second.status !== 429) {
        warnings.push(`E: a rate_limit-1 key answered ${first.status} then ${second.status} (expected 200 then 429)`);
      }
      return [`Authorization: Bearer ${key}`];
    },
    stats: () => readStats(server.baseUrl, ADMIN_TOKEN),
  };
}

function baselineTarget(name: 'ceiling' | 'headers' | 'naive' | 'same', started: { child: RunningChild; baseUrl: string }): Target {
  return { name, baseUrl: started.baseUrl, pid: started.child.pid, prepare: async () => [DUMMY_AUTH] };
}

/** The group-commit writer: it answers GET /admin/v1/stats with its counters, as the server does. */
function groupCommitTarget(started: { child: RunningChild; baseUrl: string }): Target {
  return { name: 'group', baseUrl: started.baseUrl, pid: started.child.pid, prepare: async () => [DUMMY_AUTH], stats: () => readStats(started.baseUrl, '') };
}

/**
 * Scenario D's baseline: one POST of D's own bodies to the server, its answer, and the log line
 * the server appended for it (the last line of its log, read once the 201 says it is durable).
 */
async function startGroupCommit(server: StartedServer, logPath: string, workDir: string, auth: Record<string, string>, warnings: string[]) {
  const answer = await captureAnswer(server.baseUrl, WRITE_PATH, auth, durableWriteBodies()[0]);
  if (answer.status !== 201) warnings.push(`D: the captured POST ${WRITE_PATH} answered ${answer.status}, not 201: the group-commit baseline replays it anyway`);
  const log = readFileSync(logPath);
  const line = log.subarray(log.lastIndexOf(0x0a, log.length - 2) + 1);
  const answerFile = join(workDir, 'group-commit-answer.json');
  const lineFile = join(workDir, 'group-commit-line.txt');
  writeFileSync(answerFile, JSON.stringify(answer));
  writeFileSync(lineFile, line);
  return startBaseline('group-commit', ['--answer', answerFile, '--line', lineFile, '--log', join(workDir, 'group-commit.log')], 'main');
}

/** Compares the server's answers with the naive baseline's (same data, same query) and notes any difference. */
async function crossCheck(serverUrl: string, naiveUrl: string, key: string, sampleId: string, warnings: string[]): Promise<void> {
  const auth = { Authorization: `Bearer ${key}` };
  for (const path of [LIST_PATH, '/v1/listings?page=3&limit=20', FILTERED_PATH, ...MISS_SAMPLE_PATHS, `/v1/listings/${sampleId}`]) {
    const [fromServer, fromNaive] = await Promise.all([request(`${serverUrl}${path}`, { headers: auth }), request(`${naiveUrl}${path}`)]);
    if (fromServer.status !== 200) {
      warnings.push(`GET ${path}: the server answered ${fromServer.status}: ${fromServer.body.slice(0, 200)}`);
      continue;
    }
    const summary = (body: string): string => {
      const parsed = JSON.parse(body) as { data: unknown; pagination?: { total?: number } };
      const ids = Array.isArray(parsed.data) ? parsed.data.map((item) => (item as { id: string }).id) : [(parsed.data as { id: string }).id];
      return `${ids.join(',')} total=${parsed.pagination?.total ?? '-'}`;
    };
    if (summary(fromServer.body) !== summary(fromNaive.body)) {
      warnings.push(`GET ${path}: the server and the naive baseline list different listings (the comparison is not like for like)`);
    }
  }
}

function unexpectedStatusWarnings(results: ScenarioResult[], warnings: string[]): void {
  for (const result of results) {
    for (const [name, summary] of Object.entries(result.targets)) {
      if (summary.other_cpu_percent !== null && summary.other_cpu_percent >= BUSY_MACHINE_PERCENT) {
        warnings.push(
          `${result.id} ${name}: other processes used ${summary.other_cpu_percent}% of a core during the median round; ` +
            'the machine was not quiet, so its figures are doubtful (the CPU µs/req column is the steadier one)',
        );
      }
      if (summary.unexpected_status > 0) {
        const statuses = summary.rounds.map((round) => round.statuses).filter((value) => value !== null);
        warnings.push(
          `${result.id} ${name}: ${summary.unexpected_status} answers without the expected status` +
            (statuses.length > 0 ? ` (statuses: ${JSON.stringify(statuses)})` : ' (wrk counts them as non-2xx)'),
        );
      }
      if (summary.socket_errors > 0) warnings.push(`${result.id} ${name}: ${summary.socket_errors} socket errors or timeouts`);
    }
  }
}

function saveResults(name: string, json: unknown, markdown: string): void {
  writeFileSync(join(RESULTS_DIR, `${name}.json`), `${JSON.stringify(json, null, 2)}\n`);
  writeFileSync(join(RESULTS_DIR, `${name}.md`), markdown);
  log('');
  log(markdown);
  log(`Saved bench/results/${name}.json and bench/results/${name}.md`);
  if (name !== 'latest-calibrate' && name !== 'latest-writes') log('To make this run the one README.md and docs/performance.md show: npm run bench:publish');
}

async function runMain(workDir: string, settings: RoundSettings, runContext: RunContext, only: Set<string> | null): Promise<void> {
  const listings = positiveNumber('listings', options.listings, 10_000);
  const warnings: string[] = [];
  const dataDir = join(workDir, 'data');
  log(`Seeding ${listings.toLocaleString('en')} listings…`);
  const seed = await writeSeedLog({ dataDir, listingCount: listings });
  log(`  ${(seed.logBytes / 1048576).toFixed(1)} MiB in ${seed.seconds.toFixed(1)} s`);

  const variantEnv =
    options.variant === undefined ? (options['variant-entry'] === undefined ? null : {}) : extraServerEnv(options.variant.split(','));
  let variant: StartedServer | null = null;
  if (variantEnv !== null) {
    // Its own copy of the data: each server locks its data dir, and D grows it.
    const variantDir = join(workDir, 'data-variant');
    cpSync(dataDir, variantDir, { recursive: true });
    variant = await startServer(variantDir, 'variant', { ...extraServerEnv(options['server-env']), ...variantEnv }, options['variant-entry']);
    log(`Variant server (${options['variant-entry'] ?? options.entry} ${options.variant ?? ''}) ready in ${Math.round(variant.child.readyMs)} ms`);
  }
  const naive = await startBaseline('naive', ['--data-dir', dataDir], 'main');
  const server = await startServer(dataDir, 'main');
  const rssAfterReady = rssBytes(server.child.pid);
  log(`Server ready in ${Math.round(server.child.readyMs)} ms (RSS ${mib(rssAfterReady)} MiB); naive baseline ready`);
  const statsEndpoint = (await readStats(server.baseUrl, ADMIN_TOKEN)) !== null;
  if (!statsEndpoint) warnings.push('GET /admin/v1/stats is not answering 200, so fsyncs per write cannot be measured');

  const probeKey = await createKey(server.baseUrl, ADMIN_TOKEN, 'bench-probe', 1_000_000);
  const auth = { Authorization: `Bearer ${probeKey}` };
  // The page is asked for before anything else asks for it, so its answer is an uncached one.
  // The list is asked for twice so the captured answer is the cache hit scenario A gets.
  const page = await captureAnswer(server.baseUrl, UNCACHED_SAMPLE_PATH, auth);
  await captureAnswer(server.baseUrl, LIST_PATH, auth);
  const captured: CapturedAnswers = {
    list: await captureAnswer(server.baseUrl, LIST_PATH, auth),
    page,
    item: await captureAnswer(server.baseUrl, `/v1/listings/${seed.sampleIds[0]}`, auth),
  };
  const answersFile = join(workDir, 'same-bytes-answers.json');
  writeFileSync(answersFile, JSON.stringify(captured));
  const bodyBytes = { list: Buffer.from(captured.list.body, 'base64').length, item: Buffer.from(captured.item.body, 'base64').length };
  await crossCheck(server.baseUrl, naive.baseUrl, probeKey, seed.sampleIds[0]!, warnings);
  const ceiling = await startBaseline('ceiling', ['--bytes', String(bodyBytes.list), '--item-bytes', String(bodyBytes.item)], 'main');
  const ceilingHeaders = await startBaseline('ceiling', ['--bytes', String(bodyBytes.list), '--item-bytes', String(bodyBytes.item), '--contract-headers'], 'headers');
  const sameBytes = await startBaseline('same-bytes', ['--answers', answersFile], 'main');
  const groupCommit = only === null || only.has('D') ? await startGroupCommit(server, seed.logPath, workDir, auth, warnings) : null;

  const inputs: ScenarioInputs = {
    dir: workDir,
    listingCount: listings,
    sampleIds: seed.sampleIds,
    readConnections: runContext.settings.read_connections,
    writeConnections: runContext.settings.write_connections,
  };
  const targets = [
    serverTarget(server, warnings),
    baselineTarget('same', sameBytes),
    baselineTarget('ceiling', ceiling),
    baselineTarget('headers', ceilingHeaders),
    baselineTarget('naive', naive),
    ...(groupCommit === null ? [] : [groupCommitTarget(groupCommit)]),
  ];
  if (variant !== null) targets.push(serverTarget(variant, warnings, 'variant'));
  const scenarios = [...readScenarios(inputs), ...otherScenarios(inputs)].filter((scenario) => only === null || only.has(scenario.id));
  if (variant !== null) for (const scenario of scenarios) scenario.targets.splice(1, 0, 'variant');
  const results: ScenarioResult[] = [];
  try {
    await warmUp(scenarios[0], targets, settings);
    for (const scenario of scenarios) {
      log(`Scenario ${scenario.id}: ${scenario.title}, ${scenario.connections} connections`);
      results.push(await runScenario(scenario, targets, settings));
    }
  } finally {
    await Promise.all([server.child.stop(), naive.child.stop(), ceiling.child.stop(), ceilingHeaders.child.stop(), sameBytes.child.stop(), groupCommit?.child.stop(), variant?.child.stop()]);
  }
  unexpectedStatusWarnings(results, warnings);

  const output: MainResults = {
    ...runContext,
    kind: 'main',
    dataset: { listings, log_bytes: seed.logBytes, seed_s: seed.seconds },
    server: { ready_ms: Math.round(server.child.readyMs), rss_after_ready_mib: mib(rssAfterReady), stats_endpoint: statsEndpoint },
    server_env: extraServerEnv(options['server-env']),
    variant_env: variantEnv,
    variant_entry: variant === null ? null : (options['variant-entry'] ?? options.entry),
    body_bytes: bodyBytes,
    warnings,
    scenarios: results,
  };
  saveResults('latest', output, mainMarkdown(output));
}

/**
 * The first round of a run came out 10-20% slower for every target, baselines included (the
 * machine and the JIT settling), so each target first takes the first scenario's load unmeasured.
 */
async function warmUp(scenario: Scenario | undefined, targets: Target[], settings: RoundSettings): Promise<void> {
  if (scenario === undefined) return;
  log(`Warming up every target for ${WARM_UP_S} s on scenario ${scenario.id}'s requests (not measured)`);
  for (const target of targets.filter((candidate) => scenario.targets.includes(candidate.name))) {
    await drive({
      generator: settings.generator,
      baseUrl: target.baseUrl,
      requestsFile: scenario.requestsFile,
      headers: await target.prepare(scenario),
      connections: scenario.connections,
      durationS: WARM_UP_S,
      cpus: settings.generatorCpus,
    });
  }
}

async function runScale(workDir: string, settings: RoundSettings, runContext: RunContext, only: Set<string> | null): Promise<void> {
  const sizes = options.sizes.split(',').map((size) => positiveNumber('sizes', size.trim(), 0));
  const warnings: string[] = [];
  const rows: ScaleResults['rows'] = [];
  for (const listings of sizes) {
    const dataDir = join(workDir, `data-${listings}`);
    log(`Seeding ${listings.toLocaleString('en')} listings…`);
    const seed = await writeSeedLog({ dataDir, listingCount: listings });
    const naive = await startBaseline('naive', ['--data-dir', dataDir], `scale-${listings}`);
    const server = await startServer(dataDir, `scale-${listings}`);
    const rssAfterReady = rssBytes(server.child.pid);
    log(`  server ready in ${Math.round(server.child.readyMs)} ms, RSS ${mib(rssAfterReady)} MiB`);
    // The search index fills after the server listens; B2-B4 are measured once it is full.
    const searchReadyMs = await waitForSearchIndex(server);
    const rssAfterSearchReady = rssBytes(server.child.pid);
    log(`  search index full ${Math.round(searchReadyMs)} ms after the start, RSS ${mib(rssAfterSearchReady)} MiB`);
    const inputs: ScenarioInputs = {
      dir: workDir,
      listingCount: listings,
      sampleIds: seed.sampleIds,
      readConnections: runContext.settings.read_connections,
      writeConnections: runContext.settings.write_connections,
    };
    const rowWarnings: string[] = [];
    const targets = [serverTarget(server, rowWarnings), baselineTarget('naive', naive)];
    const results: ScenarioResult[] = [];
    try {
      const chosen = readScenarios(inputs).filter((candidate) => only === null || only.has(candidate.id));
      await warmUp(chosen[0], targets, settings);
      for (const scenario of chosen) {
        // The ceiling does not depend on the data; A is the cache-hit case, so naive adds nothing there.
        scenario.targets = scenario.id === 'A' ? ['server'] : ['server', 'naive'];
        log(`Scenario ${scenario.id} at ${listings.toLocaleString('en')} listings`);
        results.push(await runScenario(scenario, targets, settings));
      }
    } finally {
      await Promise.all([server.child.stop(), naive.child.stop()]);
    }
    unexpectedStatusWarnings(results, rowWarnings);
    warnings.push(...rowWarnings.map((warning) => `${listings} listings: ${warning}`));
    rows.push({
      listings,
      log_bytes: seed.logBytes,
      ready_ms: Math.round(server.child.readyMs),
      rss_after_ready_mib: mib(rssAfterReady),
      search_ready_ms: Math.round(searchReadyMs),
      rss_after_search_ready_mib: mib(rssAfterSearchReady),
      scenarios: results,
    });
    rmSync(dataDir, { recursive: true, force: true });
  }
  const output: ScaleResults = { ...runContext, kind: 'scale', warnings, rows };
  saveResults('latest-scale', output, scaleMarkdown(output));
}

async function runStartup(workDir: string, settings: RoundSettings, runContext: RunContext): Promise<void> {
  const listings = positiveNumber('listings', options.listings, 1_000_000);
  // "Empty": the seeded creator and no listings, the fixed cost of Node, tsx and the code.
  const emptyDir = join(workDir, 'empty');
  await writeSeedLog({ dataDir: emptyDir, listingCount: 0 });
  const empty = await startServer(emptyDir, 'startup-empty');
  await empty.child.stop();
  log(`Empty data dir: ready in ${Math.round(empty.child.readyMs)} ms`);

  log(`Writing a ${listings.toLocaleString('en')}-listing log…`);
  const dataDir = join(workDir, 'data');
  const seed: SeedResult = await writeSeedLog({ dataDir, listingCount: listings, sampleIdCount: 1 });
  log(`  ${(seed.logBytes / 1048576).toFixed(0)} MiB in ${seed.seconds.toFixed(1)} s`);
  const attempts: StartupResults['attempts'] = [];
  for (let attempt = 1; attempt <= settings.rounds; attempt++) {
    const server = await startServer(dataDir, `startup-${attempt}`);
    const rssAfterReady = rssBytes(server.child.pid);
    const peak = peakRssBytes(server.child.pid);
    await server.child.stop();
    attempts.push({
      ready_ms: Math.round(server.child.readyMs),
      healthz_ms: Math.round(server.healthzMs),
      rss_after_ready_mib: mib(rssAfterReady),
      rss_peak_mib: mib(peak),
      cpu_s_at_ready: server.child.readyCpuS,
    });
    log(
      `  attempt ${attempt}: ready in ${Math.round(server.child.readyMs)} ms (${server.child.readyCpuS ?? '?'} s CPU), ` +
        `RSS ${mib(rssAfterReady)} MiB (peak ${mib(peak)} MiB)`,
    );
  }
  const medianReady = median(attempts.map((attempt) => attempt.ready_ms));
  const rssValues = attempts.map((attempt) => attempt.rss_after_ready_mib).filter((value): value is number => value !== null);
  const peaks = attempts.map((attempt) => attempt.rss_peak_mib).filter((value): value is number => value !== null);
  const medianRss = rssValues.length === 0 ? null : median(rssValues);
  const worstPeak = peaks.length === 0 ? null : Math.max(...peaks);
  const output: StartupResults = {
    ...runContext,
    kind: 'startup',
    listings,
    log_bytes: seed.logBytes,
    seed_s: seed.seconds,
    empty_ready_ms: Math.round(empty.child.readyMs),
    attempts,
    median_ready_ms: medianReady,
    median_rss_after_ready_mib: medianRss,
    goals: [
      { label: 'ready ≤ 5 s', value: medianReady / 1000, ok: medianReady <= 5000 },
      { label: 'RSS ≤ 1 GiB (peak)', value: worstPeak, ok: worstPeak === null ? null : worstPeak <= 1024 },
    ],
  };
  saveResults('latest-startup', output, startupMarkdown(output));
}

/** What a read and a write cost the log: bench/writes-per-request.ts. */
async function runWrites(workDir: string, runContext: RunContext): Promise<void> {
  const listings = positiveNumber('listings', options.listings, 10_000);
  const dataDir = join(workDir, 'data');
  log(`Seeding ${listings.toLocaleString('en')} listings…`);
  const seed = await writeSeedLog({ dataDir, listingCount: listings });
  let round = 0;
  const results = await measureWritesPerRequest({
    dataDir,
    sampleIds: seed.sampleIds,
    adminToken: ADMIN_TOKEN,
    listings,
    start: async () => {
      // The webhook phase's receiver listens on this machine.
      const server = await startServer(dataDir, `writes-${(round += 1)}`, { ...extraServerEnv(options['server-env']), WEBHOOK_ALLOW_PRIVATE: '1' });
      return { baseUrl: server.baseUrl, stop: () => server.child.stop() };
    },
  });
  for (const phase of results.phases) log(`  ${phase.phase}: ${phase.bytes_per_request} log bytes and ${phase.ops_per_request} store ops per request`);
  saveResults('latest-writes', { ...runContext, kind: 'writes', ...results }, writesPerRequestMarkdown(results));
}

/** How many req/s each load generator reaches against the ceiling (the most the server side can give). */
async function runCalibrate(workDir: string, settings: RoundSettings, runContext: RunContext): Promise<void> {
  const ceiling = await startBaseline('ceiling', ['--bytes', '8500', '--item-bytes', '430'], 'calibrate');
  const generators: GeneratorName[] = chooseGenerator(undefined).name === 'wrk' ? ['wrk', 'node'] : ['node'];
  const files = { list: join(workDir, 'calibrate-list.txt'), item: join(workDir, 'calibrate-item.txt') };
  writeFileSync(files.list, `GET\t${LIST_PATH}\n`);
  writeFileSync(files.item, 'GET\t/v1/listings/lst_calibrate\n');
  const rows: Array<{ generator: GeneratorName; body: string; connections: number; rps: number[]; p99_ms: number[]; generator_cpu: number[] }> = [];
  try {
    for (const [body, file] of Object.entries(files)) {
      for (const connections of [runContext.settings.read_connections, runContext.settings.write_connections]) {
        const entries = generators.map((generator) => ({
          generator,
          body,
          connections,
          rps: [] as number[],
          p99_ms: [] as number[],
          generator_cpu: [] as number[],
        }));
        for (let round = 0; round < settings.rounds; round++) {
          for (const entry of entries) {
            const measured = await drive({
              generator: entry.generator,
              baseUrl: ceiling.baseUrl,
              requestsFile: file,
              headers: [DUMMY_AUTH],
              connections,
              durationS: settings.durationS,
              cpus: settings.generatorCpus,
            });
            entry.rps.push(measured.rps);
            entry.p99_ms.push(measured.p99Ms);
            if (measured.generatorCpuPercent !== null) entry.generator_cpu.push(measured.generatorCpuPercent);
            log(`  ${entry.generator.padEnd(4)} ${body} body, ${connections} conns: ${measured.rps} req/s, p99 ${measured.p99Ms.toFixed(2)} ms`);
          }
        }
        rows.push(...entries);
      }
    }
  } finally {
    await ceiling.child.stop();
  }
  const markdown = [
    '# Load generator calibration against the ceiling server',
    '',
    `${runContext.settings.rounds} rounds of ${runContext.settings.duration_s} s each, alternating generators; median req/s.`,
    '',
    'The ceiling server runs at about 100% of one core in every row, so it is the limit; the generator CPU column',
    '(bench/loadgen.ts only; wrk does not report it) says how much of a core the generator needed for that rate.',
    '',
    '| generator | body | conns | median req/s | median p99 ms | generator CPU % |',
    '| --- | --- | --- | --- | --- | --- |',
    ...rows.map(
      (row) =>
        `| ${row.generator} | ${row.body === 'list' ? '8,500 B' : '430 B'} | ${row.connections} | ${Math.round(median(row.rps)).toLocaleString('en')} | ` +
        `${median(row.p99_ms).toFixed(2)} | ${row.generator_cpu.length === 0 ? '–' : Math.round(median(row.generator_cpu))} |`,
    ),
    '',
  ].join('\n');
  saveResults('latest-calibrate', { ...runContext, kind: 'calibrate', rows }, markdown);
}

async function main(): Promise<void> {
  if (options.help) {
    log(USAGE);
    return;
  }
  const generator = chooseGenerator(options.generator);
  if (generator.name === 'node') log(`Using bench/loadgen.ts as the load generator; ${WRK_INSTALL_HINT}`);
  const pinning = choosePinning(options.pin);
  pinTargetsTo(pinning?.targetCpus ?? null);
  const settings: RoundSettings = {
    generatorCpus: pinning?.generatorCpus ?? null,
    generator: generator.name,
    rounds: Math.round(positiveNumber('rounds', options.rounds, 3)),
    durationS: positiveNumber('duration', options.duration, options.scale ? 2 : 4),
    warmupS: Number(options.warmup),
    log,
  };
  const readConnections = Math.round(positiveNumber('connections', options.connections, 10));
  const writeConnections = Math.round(positiveNumber('write-connections', options['write-connections'], 64));
  const runContext = context(settings, generator.version, readConnections, writeConnections, pinning);
  const only = options.only === undefined ? null : new Set(options.only.toUpperCase().split(',').map((id) => id.trim()));

  mkdirSync(LOGS_DIR, { recursive: true });
  const workDir = mkdtempSync(join(tmpdir(), 'marketplace-bench-'));
  const cleanUp = (): void => {
    if (!options.keep) rmSync(workDir, { recursive: true, force: true });
  };
  process.on('exit', cleanUp);
  log(`Working in ${workDir}${options.keep ? ' (kept)' : ''}; child logs in bench/results/logs/`);
  buildIfNeeded([options.entry, options['variant-entry']]);
  if (options.startup) {
    // Start-up is not a load test: the server gets the whole machine (GC helper threads included).
    pinTargetsTo(null);
    await runStartup(workDir, settings, { ...runContext, settings: { ...runContext.settings, pinning: null } });
  }
  else if (options.scale) await runScale(workDir, settings, runContext, only);
  else if (options.calibrate) await runCalibrate(workDir, settings, runContext);
  else if (options.writes) await runWrites(workDir, runContext);
  else await runMain(workDir, settings, runContext, only);
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(130));

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(`bench: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
