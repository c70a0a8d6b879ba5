// `npm run check:docs`: the docs checked as a reader would use them. For README.md and every
// docs/*.md: every relative link resolves to a committed file inside the repository (and a
// #fragment to a heading); README.md is at most 200 lines; and every shell example runs, in
// order, against a fresh server started as `npm start` starts it on a fresh clone, with each
// documented answer checked; and every results block (`<!-- results:NAME:begin -->`) holds
// exactly what the committed docs/performance-results*.json render, so performance figures are
// never typed by hand nor left stale; and what the docs claim of event kinds, listing statuses
// and settings matches the code (claims.ts). The rules for writing examples are at the top of examples.ts.
// Usage: npm run check:docs [-- FILE.md …]   (exit 0 when everything passes)

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compareAnswer, compareText, jsonValuesIn, runnableExamples, type RunnableExample } from './examples.ts';
import { claimProblems } from './claims.ts';
import { checkLinks } from './links.ts';
import { staleBlocks } from '../../bench/marked-blocks.ts';
import { PUBLISH_COMMAND, readPublished, renderBlock, type PublishedResults } from '../../bench/published-figures.ts';

export const README_MAX_LINES = 200;
const DOCUMENTED_ORIGIN = 'http://127.0.0.1:3000';
const DOCUMENTED_KEY = 'market_live_…';
const START_TIMEOUT_MS = 60_000;
const FILE_TIMEOUT_MS = 300_000;

export interface ExampleOutcome {
  example: RunnableExample;
  problems: string[];
  output: string;
  stderr: string;
}

/** A demo server as a fresh clone's `npm start` makes it, in a directory of its own. */
export interface FreshServer {
  url: string;
  /** A directory that looks like the clone (its entries linked), with its own empty data/. */
  cwd: string;
  /** Each demo key the start printed, first Ada Creator's. */
  demoKeys: string[];
  banner: string;
  stop(): Promise<number | null>;
}

/** Starts `src/main.ts` with the defaults a newcomer has (only the port is left to the system). */
export async function startFreshServer(root: string, env: Record<string, string> = {}): Promise<FreshServer> {
  const cwd = mkdtempSync(join(tmpdir(), 'marketplace-docs-'));
  for (const entry of readdirSync(root)) {
    if (entry === 'data' || entry === '.git' || entry === 'coverage') continue;
    symlinkSync(join(root, entry), join(cwd, entry));
  }
  const childEnv: Record<string, string | undefined> = { ...process.env, PORT: '0', ACCESS_LOG: '0', ...env };
  for (const name of ['DATA_DIR', 'HOST', 'MARKETPLACE_ADMIN_TOKEN', 'MARKETPLACE_DEMO', 'MARKETPLACE_BRAND']) if (!(name in env)) delete childEnv[name];
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { cwd, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let banner = '';
  let errors = '';
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => (errors += chunk));
  const url = await new Promise<string>((resolveUrl, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server did not print "listening on" within ${START_TIMEOUT_MS} ms: ${banner}${errors}`)), START_TIMEOUT_MS);
    child.stdout.on('data', (chunk: string) => {
      if (banner.length < 100_000) banner += chunk;
      const listening = /listening on (http:\/\/\S+)/.exec(banner);
      if (listening) {
        clearTimeout(timer);
        resolveUrl(listening[1]!);
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the server exited (${code}) before listening: ${errors}`));
    });
  });
  const demoKeys = [...banner.matchAll(/^\s+.+ \((?:creator|member)\): (\S+)$/gm)].map((match) => match[1]!);
  return {
    url,
    cwd,
    demoKeys,
    get banner() {
      return banner;
    },
    stop: () => stopProcess(child).finally(() => rmSync(cwd, { recursive: true, force: true })),
  };
}

function stopProcess(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolveCode) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolveCode(code);
    });
    child.kill('SIGTERM');
  });
}

/** Shell helpers defined before the examples: curl reports its status on stderr, and tools a plain Debian lacks are refused. */
const PRELUDE = String.raw`
set -o pipefail
__block() { printf '\n@@block %s\n' "$1"; printf '@@block %s\n' "$1" >&2; }
__expect() { printf '@@expect %s\n' "$1" >&2; }
trap 'printf "@@fail %s (exit %s)\n" "$BASH_COMMAND" "$?" >&2' ERR
curl() { command curl --silent --show-error --max-time 20 --write-out '%{stderr}@@status %{http_code}\n' "$@"; }
jq() { echo "jq is not installed on a plain Debian: pick fields with node -e" >&2; return 127; }
uuidgen() { echo "uuidgen is not installed on a plain Debian: use cat /proc/sys/kernel/random/uuid" >&2; return 127; }
`;

/** One example's text as the checker runs it: the real address and key, continuation lines joined, status notes turned into expectations. */
export function prepareScript(script: string, url: string, apiKey: string): string {
  const joined = script.replace(/\\\n\s*/g, ' ');
  return joined
    .split(DOCUMENTED_ORIGIN)
    .join(url)
    .split(DOCUMENTED_KEY)
    .join(apiKey)
    .split('\n')
    .map((line) => {
      const note = /#\s*→\s*(\d{3})\b/.exec(line);
      return note ? `__expect ${note[1]}; ${line}` : line;
    })
    .join('\n');
}

/** Runs one markdown file's examples in one bash session against a fresh server. */
export async function runFileExamples(file: string, root: string): Promise<ExampleOutcome[]> {
  const examples = runnableExamples(readFileSync(file, 'utf8'));
  if (examples.length === 0) return [];
  const server = await startFreshServer(root);
  try {
    const apiKey = server.demoKeys[0] ?? '';
    const script = [PRELUDE, ...examples.map((example, index) => `__block ${index}\n${prepareScript(example.script, server.url, apiKey)}\n`), '__block end\n'].join('\n');
    const { stdout, stderr } = await runBash(script, server.cwd, { MARKETPLACE_URL: server.url });
    return judge(examples, stdout, stderr);
  } finally {
    const code = await server.stop();
    if (code !== 0) process.stderr.write(`warning: the server for ${file} exited with ${code} on SIGTERM\n`);
  }
}

function judge(examples: RunnableExample[], stdout: string, stderr: string): ExampleOutcome[] {
  const outcomes: ExampleOutcome[] = examples.map((example) => ({ example, problems: [], output: '', stderr: '' }));
  const reached = new Set<number>();
  let current: ExampleOutcome | null = null;
  let expectations: number[] = [];
  for (const line of stderr.split('\n')) {
    const block = /^@@block (\w+)$/.exec(line);
    const expect = /^@@expect (\d{3})$/.exec(line);
    const status = /^@@status (\d{3})$/.exec(line);
    const failed = /^@@fail (.*)$/.exec(line);
    if (block) {
      current = block[1] === 'end' ? null : (outcomes[Number(block[1])] ?? null);
      if (current) reached.add(Number(block[1]));
      expectations = [];
    } else if (!current) continue;
    else if (expect) expectations.push(Number(expect[1]));
    else if (status) {
      const wanted = expectations.shift();
      const got = Number(status[1]);
      if (wanted === undefined ? got < 200 || got > 299 : got !== wanted) current.problems.push(`curl answered ${got}, expected ${wanted ?? '2xx'}`);
    } else if (failed) current.problems.push(`command failed: ${failed[1]}`);
    else if (line.trim() !== '') current.stderr += `${line}\n`;
  }
  const pieces = stdout.split(/\n@@block (\w+)\n/);
  for (let index = 1; index + 1 < pieces.length; index += 2) {
    const outcome = outcomes[Number(pieces[index])];
    if (outcome) outcome.output = pieces[index + 1]!;
  }
  for (const [index, outcome] of outcomes.entries()) {
    if (!reached.has(index)) {
      outcome.problems.push('not reached: the shell stopped before this example');
      continue;
    }
    const { expected, expectedText } = outcome.example;
    if (expectedText !== null) outcome.problems.push(...compareText(expectedText.lines, outcome.output).map((problem) => `output differs from line ${expectedText.line}: ${problem}`));
    if (expected === null) continue;
    const values = jsonValuesIn(outcome.output);
    if (values.length === 0) outcome.problems.push(`printed no JSON, but line ${expected.line} documents an answer`);
    else outcome.problems.push(...compareAnswer(expected.value, values[values.length - 1]).map((problem) => `answer differs from line ${expected.line}: ${problem}`));
  }
  return outcomes;
}

function runBash(script: string, cwd: string, env: Record<string, string>): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolveRun, reject) => {
    const childEnv: Record<string, string | undefined> = { ...process.env, ...env };
    for (const name of ['DATA_DIR', 'MARKETPLACE_ADMIN_TOKEN', 'KEY', 'ADMIN_TOKEN']) delete childEnv[name];
    const child = spawn('bash', ['--noprofile', '--norc', '-c', script], { cwd, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), FILE_TIMEOUT_MS);
    child.on('error', reject);
    child.on('close', () => {
      clearTimeout(timer);
      resolveRun({ stdout, stderr });
    });
  });
}

/** README.md and docs/*.md, README first. */
export function documentationFiles(root: string): string[] {
  const docs = existsSync(join(root, 'docs')) ? readdirSync(join(root, 'docs')).filter((name) => name.endsWith('.md')).sort().map((name) => join(root, 'docs', name)) : [];
  return [join(root, 'README.md'), ...docs];
}

/** Committed paths (`git ls-files`), or null outside a git checkout. */
function committedFiles(root: string): Set<string> | null {
  const listed = spawnSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' });
  return listed.status === 0 ? new Set(listed.stdout.split('\0').filter(Boolean)) : null;
}

/**
 * Each results block of `files` that differs from what the committed result files of `root`
 * render (a hand edit, or a result file changed without re-rendering), as "FILE:LINE problem".
 */
export function publishedFigureProblems(root: string, files: string[]): string[] {
  let published: PublishedResults;
  try {
    published = readPublished(root);
  } catch (error) {
    return [(error as Error).message];
  }
  const problems: string[] = [];
  for (const file of files) {
    const doc = relative(root, file);
    for (const problem of staleBlocks(readFileSync(file, 'utf8'), (name) => renderBlock(name, published, doc))) {
      problems.push(`${doc}:${problem.line} ${problem.problem} (figures come from the committed results: \`${PUBLISH_COMMAND} -- --render-only\` rewrites the blocks)`);
    }
  }
  return problems;
}

async function main(argv: string[]): Promise<number> {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
  const files = argv.length > 0 ? argv.map((file) => resolve(file)) : documentationFiles(root);
  const tracked = committedFiles(root);
  let failures = 0;
  const fail = (message: string) => {
    failures += 1;
    process.stdout.write(`FAIL ${message}\n`);
  };
  const readmeLines = readFileSync(join(root, 'README.md'), 'utf8').replace(/\n$/, '').split('\n').length;
  if (readmeLines > README_MAX_LINES) fail(`README.md has ${readmeLines} lines; at most ${README_MAX_LINES}`);
  for (const problem of publishedFigureProblems(root, files)) fail(problem);
  for (const problem of claimProblems(root)) fail(problem);
  for (const file of files) {
    const name = relative(root, file) || basename(file);
    for (const problem of checkLinks(file, root, tracked)) fail(`${name}:${problem.line} link ${problem.target}: ${problem.problem}`);
    let outcomes: ExampleOutcome[];
    try {
      outcomes = await runFileExamples(file, root);
    } catch (error) {
      fail(`${name}: ${(error as Error).message}`);
      continue;
    }
    for (const outcome of outcomes) {
      const where = `${name}:${outcome.example.line}`;
      if (outcome.problems.length === 0) {
        process.stdout.write(`ok   ${where}${outcome.example.expected || outcome.example.expectedText ? ' (answer checked)' : ''}\n`);
        continue;
      }
      fail(`${where}\n${outcome.problems.map((problem) => `       ${problem}`).join('\n')}`);
      if (outcome.stderr) process.stdout.write(outcome.stderr.replace(/^/gm, '       stderr: '));
      if (outcome.output.trim()) process.stdout.write(outcome.output.trim().slice(0, 2_000).replace(/^/gm, '       output: ') + '\n');
    }
  }
  process.stdout.write(failures === 0 ? `docs check passed (${files.length} files)\n` : `${failures} problem(s) in the docs\n`);
  return failures === 0 ? 0 : 1;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = await main(process.argv.slice(2));
}
