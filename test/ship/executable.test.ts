// The single executable (dist/marketplace, made by `npm run build:binary`) run as on a machine
// without Node.js: a copy in an empty folder, started with an empty environment (no PATH, so no
// `node` to find; `serve` gets PORT=0 only, to take a free port). It prints its version, serves
// the API and the dashboard from inside itself, and runs an operator command against itself.
// Building takes a while, so the default test run uses an executable already built and skips,
// saying so, when there is none; with CI set, npm test (test/run.ts) builds it first when it is
// missing, and this test fails rather than skips if it is still missing.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const built = join(root, 'dist/marketplace');
const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
const inCi = process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false';
const missing = !existsSync(built);
const skip = missing && !inCi ? 'dist/marketplace is not built (npm run build:binary makes it; CI always does)' : false;

interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

test('the single executable runs with no Node.js: --version, serve (API and dashboard), an operator command', { skip, timeout: 180_000 }, async (t) => {
  assert.ok(!missing, 'dist/marketplace is missing: run npm run build:binary before the tests');
  const work = mkdtempSync(join(tmpdir(), 'marketplace-executable-'));
  t.after(() => rmSync(work, { recursive: true, force: true }));
  const executable = join(work, 'marketplace');
  copyFileSync(built, executable);

  const printed = await runToEnd(executable, ['--version'], work);
  assert.equal(printed.code, 0, printed.stderr);
  assert.equal(printed.stdout, `${version}\n`);
  t.diagnostic(`--version: ${printed.ms.toFixed(0)} ms`);

  const server = spawn(executable, ['serve'], { cwd: work, env: { PORT: '0' }, stdio: ['ignore', 'pipe', 'pipe'] });
  const startedAt = performance.now();
  let output = '';
  server.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  server.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => server.once('exit', (code) => resolve(code)));
  t.after(() => {
    if (server.exitCode === null) server.kill('SIGKILL');
  });
  const url = await waitFor(() => /listening on (http:\/\/\S+)/.exec(output)?.[1], 60_000, () => `the server did not start:\n${output}`);
  t.diagnostic(`serve: listening after ${(performance.now() - startedAt).toFixed(0)} ms`);

  const health = await fetch(`${url}/healthz`);
  assert.deepEqual(await health.json(), { status: 'ok', version });

  const page = await fetch(`${url}/dashboard`);
  assert.equal(page.status, 200);
  assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
  assert.equal(await page.text(), readFileSync(join(root, 'src/dashboard/public/index.html'), 'utf8'));
  const script = await fetch(`${url}/dashboard/app.js`);
  assert.equal(script.status, 200);
  assert.equal(await script.text(), readFileSync(join(root, 'src/dashboard/public/app.js'), 'utf8'));
  // Nothing of the dashboard was on disk beside the executable: it came from inside it.
  assert.deepEqual(readdirSync(work).sort(), ['data', 'marketplace']);

  // The operator CLI, also with an empty environment: the token comes from ./data/admin-token.
  const users = await runToEnd(executable, ['users', 'list', '--url', url], work);
  assert.equal(users.code, 0, users.stderr);
  const page1 = JSON.parse(users.stdout) as { data: Array<{ name: string }>; pagination: { total: number } };
  assert.equal(page1.pagination.total, 3);
  assert.deepEqual(page1.data.map((user) => user.name).sort(), ['Ada Creator', 'Grace Creator', 'Max Member']);
  const stats = await runToEnd(executable, ['stats', '--url', url], work);
  assert.equal(stats.code, 0, stats.stderr);
  assert.equal((JSON.parse(stats.stdout) as { version: string }).version, version);
  const wrong = await runToEnd(executable, ['users', 'remove'], work);
  assert.equal(wrong.code, 2);
  assert.match(wrong.stderr, /unknown users command/);

  server.kill('SIGTERM');
  assert.equal(await exited, 0, output);
  assert.match(output, /stopped/);
});

function runToEnd(executable: string, args: string[], cwd: string): Promise<Finished> {
  const startedAt = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(executable, args, { cwd, env: {}, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: performance.now() - startedAt });
    });
  });
}

async function waitFor<T>(probe: () => T | undefined, timeoutMs: number, describe: () => string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(describe());
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
