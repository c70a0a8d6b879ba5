// The crash harness: runs the real server as a child process, lets concurrent clients write
// while it SIGKILLs the server at random moments (sometimes during its start, sometimes during
// a compaction or a backup), restarts it, and checks that every acknowledged write is there
// exactly as acknowledged and that a write cut off by a kill is there whole or not at all.
//   tsx test/crash/harness.ts --loops 200 [--clients 4] [--seed 123] [--max-run-ms 700] [--keep]
//     [--hold-compaction-at afterSnapshot,writingRecords,carryingWrites,beforeRename,afterRename]
//   (with --hold-compaction-at, each loop's server holds its compactions at the next of those
//   phases and is killed there: test/crash/phase-server.ts)

import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { ServerProcess } from './server-process.ts';
import { CrashClient, newTally, NoAnswerError, Random, request, type Json, type Tally } from './workload.ts';

export interface CrashRunOptions {
  loops: number;
  clients?: number;
  /** Each loop's load runs this long (a random span) before the kill. */
  minRunMs?: number;
  maxRunMs?: number;
  seed?: number;
  /** Chance that a loop also kills the next server while it starts. */
  startupKillChance?: number;
  /** Listings a client makes before it only updates them. */
  listingCap?: number;
  /** Older listings re-checked per client after each restart (those written in the loop always are). */
  sample?: number;
  /** Kept after the run when given; a fresh temporary directory (removed) otherwise. */
  dataDir?: string;
  /**
   * Compaction phases (the store's CompactionHooks) to kill in: loop i runs a server that holds
   * its compactions for good at phase i (taking turns), asks for a compaction, and is killed
   * while it stands there, with the clients writing on (or waiting, in the switch).
   */
  holdCompactionAt?: readonly string[];
  log?: (line: string) => void;
}

export interface CrashReport {
  seed: number;
  /** Older listings re-checked per client after each restart. */
  sample: number;
  loops: number;
  kills: number;
  killsDuringStartup: number;
  restarts: number;
  slowestStartMs: number;
  acknowledged: Tally['acknowledged'] & { total: number };
  inFlightAtKill: number;
  inFlightApplied: number;
  inFlightNotApplied: number;
  /** Listings read back after restarts and compared with their latest acknowledged state. */
  listingsChecked: number;
  /** Webhooks found as acknowledged (or absent after an acknowledged removal) after restarts. */
  webhooksChecked: number;
  finalListings: number;
  finalWebhooks: number;
  tornTailsDropped: number;
  tempFilesDiscarded: number;
  compactionsRequested: number;
  compactionsCutByKill: number;
  /** Compactions the servers reported done (requested or automatic), read just before each kill. */
  compactionsDone: number;
  backupsVerified: number;
  /** Kills made while a compaction was held at a phase, by phase. */
  killsInCompactionPhase: Record<string, number>;
  /** Writes acknowledged while a compaction was held at a phase (before the kill), by phase. */
  acknowledgedWhileHeld: Record<string, number>;
  logBytes: number;
  gracefulStop: boolean;
  durationMs: number;
  serverStderr: string[];
  failures: string[];
}

const PERMISSIONS = ['read:listings', 'write:listings', 'read:webhooks', 'write:webhooks'];
const KNOWN_WARNINGS = [/Dropped an incomplete last record/, /Discarded .*\.tmp/, /Log compaction/, /^\s*$/];

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/**
 * Runs `loops` kill-and-restart cycles and reports the figures; failures are listed, not thrown.
 * @example
 * const report = await runCrashHarness({ loops: 3 });
 * assert.deepEqual(report.failures, []);
 */
export async function runCrashHarness(options: CrashRunOptions): Promise<CrashReport> {
  const startedAt = Date.now();
  const seed = options.seed ?? randomBytes(4).readUInt32LE(0);
  const random = new Random(seed);
  const clientCount = options.clients ?? 4;
  const minRunMs = options.minRunMs ?? 30;
  const maxRunMs = options.maxRunMs ?? 700;
  const startupKillChance = options.startupKillChance ?? 0.1;
  const sample = options.sample ?? 25;
  const log = options.log ?? (() => {});
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'mkt-crash-'));
  const operatorToken = randomBytes(24).toString('hex');
  const tally = newTally();
  const report: CrashReport = {
    seed,
    sample,
    loops: 0,
    kills: 0,
    killsDuringStartup: 0,
    restarts: 0,
    slowestStartMs: 0,
    acknowledged: { ...tally.acknowledged, total: 0 },
    inFlightAtKill: 0,
    inFlightApplied: 0,
    inFlightNotApplied: 0,
    listingsChecked: 0,
    webhooksChecked: 0,
    finalListings: 0,
    finalWebhooks: 0,
    tornTailsDropped: 0,
    tempFilesDiscarded: 0,
    compactionsRequested: 0,
    compactionsCutByKill: 0,
    compactionsDone: 0,
    backupsVerified: 0,
    killsInCompactionPhase: {},
    acknowledgedWhileHeld: {},
    logBytes: 0,
    gracefulStop: false,
    durationMs: 0,
    serverStderr: [],
    failures: tally.failures,
  };

  const noteStderr = (server: ServerProcess) => {
    report.tornTailsDropped += (server.stderr.match(/Dropped an incomplete last record/g) ?? []).length;
    report.tempFilesDiscarded += (server.stderr.match(/Discarded .*\.tmp/g) ?? []).length;
    for (const line of server.stderr.split('\n')) {
      if (!KNOWN_WARNINGS.some((known) => known.test(line)) && report.serverStderr.length < 20) report.serverStderr.push(line.slice(0, 500));
    }
  };
  const holdPhases = options.holdCompactionAt ?? [];
  /** The phase loop `loop` holds compactions at, or null (the plain server; always after the last loop). */
  const phaseOf = (loop: number): string | null => (holdPhases.length === 0 || loop > options.loops ? null : holdPhases[(loop - 1) % holdPhases.length]!);
  const start = async (loop: number): Promise<{ server: ServerProcess; url: string }> => {
    const began = Date.now();
    const server = new ServerProcess({ dataDir, operatorToken, holdCompactionAt: phaseOf(loop) });
    const url = await server.ready();
    report.slowestStartMs = Math.max(report.slowestStartMs, Date.now() - began);
    return { server, url };
  };

  let { server, url } = await start(1);
  try {
    const clients: CrashClient[] = [];
    for (let index = 0; index < clientCount; index += 1) {
      const user = await request(url, operatorToken, 'POST', '/admin/v1/users', { name: `crash client ${index}`, role: 'creator' });
      const userId = String((user.body.data as Json | undefined)?.id);
      const key = await request(url, operatorToken, 'POST', '/admin/v1/keys', { user_id: userId, permissions: PERMISSIONS, rate_limit: 1_000_000 });
      const plainKey = (key.body.data as Json | undefined)?.key;
      if (user.status !== 201 || key.status !== 201 || typeof plainKey !== 'string') {
        throw new Error(`cannot set up client ${index}: ${user.status} ${JSON.stringify(user.body)} / ${key.status} ${JSON.stringify(key.body)}`);
      }
      clients.push(new CrashClient({ name: `c${index}`, userId, key: plainKey, random: new Random(random.integer(0, 2 ** 31)), tally, listingCap: options.listingCap ?? 1500 }));
    }

    for (let loop = 1; loop <= options.loops; loop += 1) {
      // 1. Load, then a kill at a random moment.
      const runMs = random.integer(minRunMs, maxRunMs);
      let stopped = false;
      const runs = clients.map((client) => client.run(url, () => stopped));
      const phase = phaseOf(loop);
      let acknowledgedAtHold = 0;
      const operator = operatorDuring(url, operatorToken, random, runMs, clients, report, phase !== null);
      await sleep(runMs);
      if (phase !== null) {
        // Killed while the compaction stands at its phase, after the clients wrote on a while.
        const held = `compaction held at ${phase}`;
        const deadline = Date.now() + 60_000;
        while (!server.stdout.includes(held) && Date.now() < deadline && server.running) await sleep(10);
        if (!server.stdout.includes(held)) tally.failures.push(`loop ${loop}: the compaction never reached ${phase}: ${server.stderr.slice(-500)}`);
        else report.killsInCompactionPhase[phase] = (report.killsInCompactionPhase[phase] ?? 0) + 1;
        acknowledgedAtHold = acknowledgedTotal(tally);
        await sleep(random.integer(100, 400));
      }
      report.compactionsDone += await compactionsSoFar(url, operatorToken);
      stopped = true;
      await server.kill();
      report.kills += 1;
      await Promise.all([...runs, operator]);
      if (phase !== null) report.acknowledgedWhileHeld[phase] = (report.acknowledgedWhileHeld[phase] ?? 0) + acknowledgedTotal(tally) - acknowledgedAtHold;
      noteStderr(server);

      // 2. Sometimes a kill while the next server starts (loading its log).
      if (random.next() < startupKillChance) {
        const starting = new ServerProcess({ dataDir, operatorToken });
        await sleep(random.integer(0, 900));
        if (starting.url === null && !/listening on/.test(starting.stdout)) report.killsDuringStartup += 1;
        await starting.kill();
        report.kills += 1;
        noteStderr(starting);
      }

      // 3. The restart must always succeed.
      try {
        ({ server, url } = await start(loop + 1));
      } catch (error) {
        tally.failures.push(`loop ${loop}: the server did not restart: ${(error as Error).message}`);
        break;
      }
      report.restarts += 1;

      // 4. Every acknowledged state is there; the cut-off writes are whole or absent.
      const last = loop === options.loops;
      for (const client of clients) await client.check(url, random, last ? Infinity : sample);
      report.loops = loop;
      const acknowledgedSoFar = Object.values(tally.acknowledged).reduce((sum, count) => sum + count, 0);
      log(
        `loop ${loop}/${options.loops}: ran ${runMs} ms, ${acknowledgedSoFar} writes acknowledged so far, ` +
          `${tally.listingsChecked} listings and ${tally.webhooksChecked} webhooks checked, ${tally.failures.length} failures`,
      );
      if (tally.failures.length > 0) break;
    }
    report.finalListings = clients.reduce((sum, client) => sum + client.listings.size, 0);
    report.finalWebhooks = clients.reduce((sum, client) => sum + client.webhooks.size, 0);
    report.compactionsDone += await compactionsSoFar(url, operatorToken);
  } finally {
    // A clean stop at the end, after all the kills.
    if (server.running) {
      server.child.kill('SIGTERM');
      const exitCode = await new Promise<number | null>((done) => server.child.once('exit', (code) => done(code)));
      report.gracefulStop = exitCode === 0;
      if (!report.gracefulStop) tally.failures.push(`the final SIGTERM stop exited with ${exitCode}: ${server.stderr.slice(-1000)}`);
    }
    noteStderr(server);
    try {
      report.logBytes = statSync(join(dataDir, 'marketplace.log')).size;
    } catch {
      report.logBytes = 0;
    }
    if (options.dataDir === undefined) rmSync(dataDir, { recursive: true, force: true });
  }
  report.acknowledged = { ...tally.acknowledged, total: Object.values(tally.acknowledged).reduce((sum, count) => sum + count, 0) };
  report.inFlightAtKill = tally.inFlight;
  report.inFlightApplied = tally.inFlightApplied;
  report.inFlightNotApplied = tally.inFlightNotApplied;
  report.listingsChecked = tally.listingsChecked;
  report.webhooksChecked = tally.webhooksChecked;
  report.durationMs = Date.now() - startedAt;
  return report;
}

function acknowledgedTotal(tally: Tally): number {
  return Object.values(tally.acknowledged).reduce((sum, count) => sum + count, 0);
}

/** Compactions the running server has done since it started (0 if it cannot say). */
async function compactionsSoFar(url: string, token: string): Promise<number> {
  try {
    const stats = await request(url, token, 'GET', '/admin/v1/stats');
    return Number((((stats.body.data as Json | undefined)?.store ?? {}) as Json).compactions ?? 0);
  } catch {
    return 0;
  }
}

/** The operator, during the load: sometimes a compaction, sometimes a backup to verify. */
async function operatorDuring(url: string, token: string, random: Random, runMs: number, clients: CrashClient[], report: CrashReport, mustCompact: boolean): Promise<void> {
  const compactAt = mustCompact ? random.integer(0, Math.floor(runMs / 2)) : random.next() < 0.35 ? random.integer(0, runMs) : null;
  const backupAt = random.next() < 0.25 ? random.integer(0, runMs) : null;
  const tasks: Array<Promise<void>> = [];
  if (compactAt !== null) {
    tasks.push(
      (async () => {
        await sleep(compactAt);
        report.compactionsRequested += 1;
        try {
          const answer = await request(url, token, 'POST', '/admin/v1/compact');
          if (answer.status !== 200) report.failures.push(`POST /admin/v1/compact answered ${answer.status} ${JSON.stringify(answer.body)}`);
        } catch (error) {
          if (!(error instanceof NoAnswerError)) throw error;
          report.compactionsCutByKill += 1;
        }
      })(),
    );
  }
  if (backupAt !== null) {
    tasks.push(
      (async () => {
        await sleep(backupAt);
        // Every listing acknowledged before the backup was asked for must be in it.
        const required = clients.flatMap((client) => [...client.listings.keys()]);
        let text: string;
        try {
          const response = await fetch(`${url}/admin/v1/backup`, { headers: { Authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(15_000) });
          text = await response.text();
          if (response.status !== 200) {
            report.failures.push(`GET /admin/v1/backup answered ${response.status} ${text.slice(0, 300)}`);
            return;
          }
        } catch {
          return; // cut off by the kill
        }
        const problem = checkBackup(text, required);
        if (problem !== null) report.failures.push(`backup: ${problem}`);
        else report.backupsVerified += 1;
      })(),
    );
  }
  await Promise.all(tasks);
}

/** A backup is a whole log: a header, then one valid line per record, ending with a newline. */
function checkBackup(text: string, requiredListingIds: string[]): string | null {
  if (!text.endsWith('\n')) return 'does not end with a newline';
  const lines = text.slice(0, -1).split('\n');
  let header: Json;
  try {
    header = JSON.parse(lines[0]!) as Json;
  } catch {
    return 'the first line is not JSON';
  }
  if (header.format !== 'marketplace-api-log') return `the first line is not a log header: ${lines[0]}`;
  const listingIds = new Set<string>();
  for (const [index, line] of lines.slice(1).entries()) {
    let record: Json;
    try {
      record = JSON.parse(line) as Json;
    } catch {
      return `line ${index + 2} is not JSON`;
    }
    if (record.c === 'listings') listingIds.add(String(record.id));
  }
  const missing = requiredListingIds.filter((id) => !listingIds.has(id));
  return missing.length === 0 ? null : `${missing.length} acknowledged listings are missing, e.g. ${missing[0]}`;
}

export function formatReport(report: CrashReport): string {
  const acknowledged = report.acknowledged;
  return [
    `crash harness (seed ${report.seed}): ${report.loops} loops, ${report.kills} SIGKILLs (${report.killsDuringStartup} while the server was starting), ` +
      `${report.restarts} restarts, every one successful${report.restarts < report.loops ? ' — NO' : ''}; slowest start ${report.slowestStartMs} ms`,
    `acknowledged writes: ${acknowledged.total} (listing creates ${acknowledged.createListing}, updates ${acknowledged.updateListing}, ` +
      `archives ${acknowledged.archiveListing}; webhook registrations ${acknowledged.createWebhook}, removals ${acknowledged.deleteWebhook})`,
    `checked after restarts (everything written since the previous restart, plus ${report.sample} older listings per client): ` +
      `${report.listingsChecked} listing reads equal to the latest acknowledged state, ${report.webhooksChecked} webhooks present as acknowledged or absent after an acknowledged removal; ` +
      `the last restart checked all ${report.finalListings} listings and ${report.finalWebhooks} webhooks`,
    `writes cut off by a kill: ${report.inFlightAtKill} (found whole: ${report.inFlightApplied}, absent: ${report.inFlightNotApplied}, half-present: 0 allowed)`,
    `torn tails dropped at start: ${report.tornTailsDropped}; temp files discarded: ${report.tempFilesDiscarded}; ` +
      `compactions done ${report.compactionsDone} (${report.compactionsRequested} requested, ${report.compactionsCutByKill} of them cut by a kill; the rest automatic); ` +
      `backups verified ${report.backupsVerified}`,
    ...(Object.keys(report.killsInCompactionPhase).length > 0
      ? [
          `kills while a compaction was held at a phase (writes acknowledged while it was held): ` +
            Object.entries(report.killsInCompactionPhase)
              .map(([phase, kills]) => `${phase} ${kills} (${report.acknowledgedWhileHeld[phase] ?? 0})`)
              .join(', '),
        ]
      : []),
    `final log ${(report.logBytes / 1024).toFixed(0)} KiB; clean SIGTERM stop at the end: ${report.gracefulStop ? 'yes' : 'no'}; ${(report.durationMs / 1000).toFixed(1)} s`,
    ...(report.serverStderr.length > 0 ? [`other server stderr lines: ${report.serverStderr.join(' | ')}`] : []),
    report.failures.length === 0 ? 'result: PASS' : `result: FAIL (${report.failures.length})\n  ${report.failures.slice(0, 20).join('\n  ')}`,
  ].join('\n');
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      loops: { type: 'string', default: '20' },
      clients: { type: 'string' },
      seed: { type: 'string' },
      'max-run-ms': { type: 'string' },
      'data-dir': { type: 'string' },
      'hold-compaction-at': { type: 'string' },
      quiet: { type: 'boolean', default: false },
    },
  });
  const number = (text: string | undefined) => (text === undefined ? undefined : Number.parseInt(text, 10));
  const report = await runCrashHarness({
    loops: number(values.loops) ?? 20,
    clients: number(values.clients),
    seed: number(values.seed),
    maxRunMs: number(values['max-run-ms']),
    dataDir: values['data-dir'],
    holdCompactionAt: values['hold-compaction-at']?.split(','),
    log: values.quiet ? undefined : (line) => process.stdout.write(`${line}\n`),
  });
  process.stdout.write(`${formatReport(report)}\n`);
  process.exitCode = report.failures.length === 0 ? 0 : 1;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    process.stderr.write(`crash harness error: ${(error as Error).stack ?? String(error)}\n`);
    process.exitCode = 2;
  });
}
