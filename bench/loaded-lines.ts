// How much of src/ one running server loads: starts `src/main.ts` under V8 coverage with the
// given MARKETPLACE_MODULES, makes one GET, one POST, a webhook registration, a usage read and a
// profile read, stops it gracefully, and counts the lines of every src/ file the process loaded
// (whole files). Prints JSON: {modules, files, lines, list}. `--modules none` by default.
//
//   npx tsx bench/loaded-lines.ts --modules none

import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(import.meta.dirname, '..');
const SRC = join(ROOT, 'src');
const TOKEN = 'loaded-lines-operator-token-0123456789';

export interface LoadedLines {
  modules: string;
  files: number;
  lines: number;
  list: { file: string; lines: number }[];
}

export async function measureLoadedLines(modules: string): Promise<LoadedLines> {
  const scratch = mkdtempSync(join(tmpdir(), 'loaded-lines-'));
  const coverageDir = join(scratch, 'coverage');
  try {
    const child = spawn(process.execPath, ['--import', 'tsx', join(SRC, 'main.ts')], {
      cwd: ROOT,
      env: { ...process.env, NODE_V8_COVERAGE: coverageDir, PORT: '0', DATA_DIR: join(scratch, 'data'), MARKETPLACE_DEMO: '0', MARKETPLACE_ADMIN_TOKEN: TOKEN, MARKETPLACE_MODULES: modules, NODE_ENV: 'production' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    let errors = '';
    child.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()));
    const base = await new Promise<string>((done, fail) => {
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const found = /listening on (http:\/\/\S+)/.exec(output);
        if (found) done(found[1]!);
      });
      child.once('exit', (code) => fail(new Error(`server exited (${code}) before listening: ${errors}`)));
    });
    await exercise(base);
    const exited = new Promise((done) => child.once('exit', done));
    child.kill('SIGTERM');
    await exited;
    return countLoaded(coverageDir, modules);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

async function call(base: string, method: string, path: string, auth: string, body?: unknown): Promise<any> {
  const response = await fetch(base + path, { method, headers: { Authorization: `Bearer ${auth}`, 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  if (response.status >= 400) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return text === '' ? null : JSON.parse(text);
}

/** The requests the count is taken after: one GET, one POST, a webhook, a usage read, a profile read. */
async function exercise(base: string): Promise<void> {
  const user = (await call(base, 'POST', '/admin/v1/users', TOKEN, { name: 'Reader', email: 'reader@example.com', role: 'creator' })).data;
  const permissions = ['read:listings', 'write:listings', 'read:users', 'write:users', 'read:webhooks', 'write:webhooks', 'read:analytics'];
  const made = await call(base, 'POST', '/admin/v1/keys', TOKEN, { user_id: user.id, permissions });
  const key = (made.data?.key ?? made.key) as string;
  await call(base, 'GET', '/v1/listings', key);
  await call(base, 'POST', '/v1/listings', key, { title: 'A listing', description: 'Counted lines', type: 'SKILL', price: 0 });
  await call(base, 'POST', '/v1/webhooks', key, { url: 'https://example.com/hook', events: ['listing.created'] });
  await call(base, 'GET', '/v1/analytics/usage', key);
  await call(base, 'GET', '/v1/users/me', key);
}

function countLoaded(coverageDir: string, modules: string): LoadedLines {
  const loaded = new Set<string>();
  for (const name of readdirSync(coverageDir)) {
    const report = JSON.parse(readFileSync(join(coverageDir, name), 'utf8')) as { result: { url: string }[] };
    for (const { url } of report.result) {
      if (!url.startsWith('file://')) continue;
      const path = fileURLToPath(url);
      if (path.startsWith(SRC + '/') && path.endsWith('.ts')) loaded.add(path);
    }
  }
  const list = [...loaded].map((path) => ({ file: relative(SRC, path), lines: readFileSync(path, 'utf8').split('\n').length - 1 })).sort((a, b) => b.lines - a.lines);
  return { modules, files: list.length, lines: list.reduce((sum, entry) => sum + entry.lines, 0), list };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const at = process.argv.indexOf('--modules');
  const modules = at === -1 ? 'none' : process.argv[at + 1]!;
  const result = await measureLoadedLines(modules);
  process.stdout.write(`${JSON.stringify(process.argv.includes('--list') ? result : { ...result, list: undefined })}\n`);
  if (process.argv.includes('--list')) for (const entry of result.list) process.stderr.write(`${String(entry.lines).padStart(6)} ${entry.file}\n`);
}
