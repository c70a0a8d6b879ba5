// `npm test` (every test file, under c8 for coverage) and `npm run test:unit` (`--unit`: only
// the files that start no child process and no browser, judged by what they import, and that
// do not say "// Not in test:unit" in their header; without coverage, for a quick run). On a
// terminal node's spec reporter shows each test; otherwise (CI, a pipe)
// test/reporters/summary.mjs prints failures in full, one line per file and node's counts. The
// last line is always "N passed, N failed, N skipped in T s".
//
// `npm test` runs each file in a process of its own. The quick run loads its files into
// UNIT_PROCESSES processes instead, all running at once (each imports its share, in order, and
// runs their tests one after another), because starting Node, tsx and the server's modules
// costs about a second of CPU per process, which is most of the work for ~90 small files on two
// cores. The price: files of one group share module state, so a test file must leave no global
// change behind (none does; `npm test` would still catch one that relies on a fresh process).
// The groups are dealt by how long each file took in the last quick run (kept in
// node_modules/.cache/), longest first, each to the group with the least so far, so they end
// together (dealt in turn, the groups once took 9 to 19 s of tests); a file never timed counts
// as the average. Its files are compiled ahead into JavaScript (test/unit-bundle.ts), so its
// processes load a few dozen modules, without tsx; and its temporary files sit in memory when
// the machine allows (memoryTmpdir below).
// Usage: tsx test/run.ts [--unit] [test files…]

import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isRunning } from '../src/store/lock.ts';
import { compileUnitFiles } from './unit-bundle.ts';

const ROOT = resolve(dirname(new URL(import.meta.url).pathname), '..');
/** What marks a file (or anything it imports from the project) as needing another process or a browser. */
const NEEDS_PROCESS = /node:child_process|playwright|chromium/;
/** A slow file's own opt-out from the quick run, with its reason. */
const NOT_UNIT = /^\/\/ Not in test:unit/m;
/**
 * Processes of the quick run: two per core, so the waits of one group (timers, the scrypt queue,
 * fsyncs) overlap the work of the others, and no one group of slow files sets the time alone
 * (2 groups took 137 s, 4 groups 106 s, at load 10-12 on a shared two-core machine).
 */
const UNIT_PROCESSES = 4;

const args = process.argv.slice(2);
const unit = args.includes('--unit');
const named = args.filter((arg) => !arg.startsWith('--'));
let files = named.length > 0 ? named : testFiles(join(ROOT, 'test'));
if (unit) files = files.filter((file) => !NOT_UNIT.test(readFileSync(resolve(ROOT, file), 'utf8')) && !needsProcess(resolve(ROOT, file), new Set()));

/** The quick run's own files that outlive it, or are rebuilt each time, inside node_modules. */
const CACHE_DIR = join(ROOT, 'node_modules/.cache/marketplace-api');
const runDir = mkdtempSync(join(tmpdir(), 'marketplace-test-run-'));
const countsFile = join(runDir, 'counts.json');
/** Each file's test time in the last quick run, and where this run's is written before it replaces it. */
const DURATIONS_FILE = join(CACHE_DIR, 'unit-durations.json');
const durationsFile = join(runDir, 'durations.json');
/** Where the quick run's files are compiled to (see unit-bundle.ts): inside node_modules, so packages are found from it. */
const UNIT_BUNDLE_DIR = join(CACHE_DIR, `unit-bundle-${process.pid}`);
/** The quick run's temporary files (its servers' data directories) in memory, when the machine has room there. */
const MEMORY_TMPDIR = `/dev/shm/marketplace-unit-${process.pid}`;
if (unit) removeLeftovers();
const unitTmpdir = unit ? memoryTmpdir() : null;
const reporter = process.stdout.isTTY ? 'spec' : './test/reporters/summary.mjs';
const nodeArgs = [
  // The quick run's groups all at once, compiled ahead; the full run's files two at a time (one
  // per core), through tsx, so that coverage maps to the sources.
  ...(unit ? ['--enable-source-maps'] : ['--import', 'tsx']),
  '--test', `--test-concurrency=${unit ? UNIT_PROCESSES : 2}`,
  `--test-reporter=${reporter}`, '--test-reporter-destination=stdout',
  '--test-reporter=./test/reporters/counts.mjs', `--test-reporter-destination=${countsFile}`,
  ...(unit ? ['--test-reporter=./test/reporters/durations.mjs', `--test-reporter-destination=${durationsFile}`] : []),
  ...(unit ? groupEntries(await compileUnitFiles(ROOT, files, UNIT_BUNDLE_DIR), UNIT_PROCESSES) : files),
];
const coverage = ['--reporter=lcov', '--reporter=json-summary', '--report-dir=coverage', '--all', '--src=src', "--include=src/**/*.ts", '--exclude=src/dashboard/**', '--exclude=src/build/**'];
const [command, commandArgs] = unit ? [process.execPath, nodeArgs] : [join(ROOT, 'node_modules/.bin/c8'), [...coverage, process.execPath, ...nodeArgs]];

if (!unit && named.length === 0) {
  console.log(`${files.length} test files: real servers, PostgreSQL, Redis, nginx and Chromium where installed; about 12 minutes on two cores, 17 beside two busy processes.`);
  await buildExecutableForCi();
}

const startedAt = performance.now();
const env = unitTmpdir === null ? process.env : { ...process.env, TMPDIR: unitTmpdir };
const child = spawn(command, commandArgs, { cwd: ROOT, stdio: 'inherit', env });
const exitCode = await new Promise<number>((done) => child.on('close', (code, signal) => done(code ?? (signal ? 1 : 0))));
const seconds = ((performance.now() - startedAt) / 1000).toFixed(1);

if (!unit) console.log(coverageLine());
if (unit) keepDurations();
const counts = readCounts();
for (const dir of [runDir, unitTmpdir, unit ? UNIT_BUNDLE_DIR : null]) if (dir !== null) rmSync(dir, { recursive: true, force: true });
const skipped = (counts.skipped ?? 0) + (counts.todo ?? 0);
console.log(`${counts.pass ?? 0} passed, ${counts.fail ?? 0} failed, ${skipped} skipped (${files.length} files${unit ? ', unit tests only' : ''}) in ${seconds} s`);
process.exit(exitCode);

/**
 * Under CI the single executable's test must not skip, so a full run builds dist/marketplace
 * first when it is missing (about a minute); elsewhere that test says how to build it and skips.
 */
async function buildExecutableForCi(): Promise<void> {
  const inCi = process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false';
  if (!inCi || existsSync(join(ROOT, 'dist/marketplace'))) return;
  console.log('CI is set and dist/marketplace is missing: building it first (npm run build:binary).');
  const build = spawn('npm', ['run', 'build:binary'], { cwd: ROOT, stdio: 'inherit' });
  const code = await new Promise<number>((done) => build.on('close', (exit) => done(exit ?? 1)));
  if (code !== 0) {
    console.log('building the single executable failed; its test will fail');
  }
}

/**
 * Writes `count` entry modules that import the files between them (longest first, each to the
 * group with the least test time so far) and returns their paths. Node's reporters still name
 * each test's own file; a file that cannot even be loaded becomes one failing test named after
 * it, and the rest of its group still runs.
 */
function groupEntries(compiled: Map<string, string>, count: number): string[] {
  const unitFiles = [...compiled.keys()];
  const groups = Array.from({ length: Math.min(count, unitFiles.length) }, () => ({ files: [] as string[], ms: 0 }));
  const known = readDurations();
  const knownTimes = unitFiles.map((file) => known[file]).filter((ms): ms is number => ms !== undefined);
  const average = knownTimes.length > 0 ? knownTimes.reduce((sum, ms) => sum + ms, 0) / knownTimes.length : 1;
  const timeOf = (file: string) => known[file] ?? average;
  // Ties (no times known yet) keep the files' order, so they are dealt in turn.
  const longestFirst = unitFiles.map((file, order) => ({ file, order })).sort((a, b) => timeOf(b.file) - timeOf(a.file) || a.order - b.order);
  for (const { file } of longestFirst) {
    const least = groups.reduce((best, group) => (group.ms < best.ms ? group : best));
    least.files.push(file);
    least.ms += timeOf(file);
  }
  return groups.map(({ files: group }, index) => {
    const entry = join(runDir, `unit-group-${index + 1}.mjs`);
    const urls = group.map((file) => pathToFileURL(compiled.get(file)!).href);
    writeFileSync(entry, [
      "import { test } from 'node:test';",
      `for (const url of ${JSON.stringify(urls)}) {`,
      '  try {',
      '    await import(url);',
      '  } catch (error) {',
      "    test(`${url} could not be loaded`, () => { throw error; });",
      '  }',
      '}',
      '',
    ].join('\n'));
    return entry;
  });
}

/**
 * A directory in /dev/shm (memory) when it has a gigabyte free: there the quick run's thousands
 * of small durable writes cost no disk flushes (about 15% of its time). Null elsewhere: the
 * system's temporary directory. The full run keeps the disk, as a deployment does.
 */
function memoryTmpdir(): string | null {
  try {
    const room = statfsSync('/dev/shm');
    if (room.bavail * room.bsize < 2 ** 30) return null;
    mkdirSync(MEMORY_TMPDIR);
    return MEMORY_TMPDIR;
  } catch {
    return null;
  }
}

/** What quick runs that were interrupted (Ctrl-C, a timeout) left: their compiled files and memory directories. */
function removeLeftovers(): void {
  const places = [dirname(UNIT_BUNDLE_DIR), dirname(MEMORY_TMPDIR)];
  for (const place of places) {
    let names: string[] = [];
    try {
      names = readdirSync(place);
    } catch {
      continue;
    }
    for (const name of names) {
      const pid = /^(?:unit-bundle|marketplace-unit)-(\d+)$/.exec(name)?.[1];
      if (pid !== undefined && !isRunning(Number(pid))) rmSync(join(place, name), { recursive: true, force: true });
    }
  }
}

function testFiles(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...testFiles(path));
    else if (entry.name.endsWith('.test.ts')) found.push(relative(ROOT, path));
  }
  return found.sort();
}

/** True when `file`, or a project file it imports (transitively), starts processes or a browser. */
function needsProcess(file: string, seen: Set<string>): boolean {
  if (seen.has(file)) return false;
  seen.add(file);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return false;
  }
  if (NEEDS_PROCESS.test(text)) return true;
  for (const [, specifier] of text.matchAll(/(?:from|import)\s*\(?\s*['"](\.[^'"]+)['"]/g)) {
    if (needsProcess(resolve(dirname(file), specifier!), seen)) return true;
  }
  return false;
}

/** A JSON object of numbers a reporter wrote (counts, times per file); empty when there is none. */
function readNumbers(path: string): Record<string, number> {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as Record<string, number>;
  } catch {
    return {};
  }
}

/** The last quick run's time per file; empty before the first one. */
function readDurations(): Record<string, number> {
  return readNumbers(DURATIONS_FILE);
}

/** Keeps this run's times (over the last ones, so files not run this time keep theirs). */
function keepDurations(): void {
  // Node names each test's file through the source maps: the .ts files, as the cache keeps them.
  const measured = readNumbers(durationsFile);
  // No times written (the run stopped early): deal as before next time.
  if (Object.keys(measured).length === 0) return;
  try {
    mkdirSync(dirname(DURATIONS_FILE), { recursive: true });
    writeFileSync(DURATIONS_FILE, JSON.stringify({ ...readDurations(), ...measured }));
  } catch {
    // A cache that cannot be written (a read-only node_modules): files are dealt as before.
  }
}

function readCounts(): Record<string, number> {
  return readNumbers(countsFile);
}

function coverageLine(): string {
  try {
    const { total } = JSON.parse(readFileSync(join(ROOT, 'coverage/coverage-summary.json'), 'utf8')) as {
      total: Record<'lines' | 'branches' | 'functions', { pct: number }>;
    };
    return `coverage: ${total.lines.pct} % of lines, ${total.branches.pct} % of branches, ${total.functions.pct} % of functions (coverage/lcov-report/index.html)`;
  } catch {
    return 'coverage: no summary written';
  }
}
