// What a newcomer meets: the start banner (every start names the demo keys and what each may
// do, the dashboard address and where the operator token is), GET / pointing to the rest, and
// a data directory that others on the machine cannot read.

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { startServer, temporaryDir } from '../helpers/server.ts';

/** Runs src/main.ts until it listens, then stops it with SIGTERM; returns everything it printed. */
function startAndStop(env: Record<string, string>): Promise<{ output: string; url: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', ACCESS_LOG: '0', MARKETPLACE_ADMIN_TOKEN: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`no "listening on" line in time:\n${output}`));
    }, 30_000);
    child.stdout.on('data', () => {
      const listening = /listening on (http:\/\/\S+)/.exec(output);
      if (!listening) return;
      clearTimeout(timer);
      child.once('exit', () => resolve({ output, url: listening[1]! }));
      child.kill('SIGTERM');
    });
    child.on('error', reject);
  });
}

test('the banner names each demo key with its permissions, the dashboard and the operator token, on the first start and on every later one', async (t) => {
  const dataDir = join(temporaryDir(t), 'data');
  const env = { DATA_DIR: dataDir, MARKETPLACE_DEMO: '1' };

  const first = await startAndStop(env);
  const plainKeys = [...first.output.matchAll(/^ {2}(Ada Creator|Grace Creator|Max Member) \((creator|member)\): (market_live_\w+)$/gm)];
  assert.equal(plainKeys.length, 3, first.output);
  assert.match(first.output, /Ada Creator \(creator\): \S+\n {6}may: read:listings write:listings read:users write:users read:analytics read:webhooks write:webhooks\n/);
  assert.match(first.output, /Max Member \(member\): \S+\n {6}may: read:listings read:users\n/);
  assert.match(first.output, new RegExp(`use Ada Creator's key: export KEY=${plainKeys[0]![3]}`));
  assert.match(first.output, new RegExp(`dashboard: ${first.url}/dashboard `));
  assert.match(first.output, new RegExp(`operator token created in ${dataDir}/admin-token \\(mode 0600\\)`));

  const second = await startAndStop(env);
  assert.match(second.output, /demo keys \(shown only on the first start; the server keeps only their hashes\):/);
  for (const [, user, , key] of plainKeys) {
    const outline = `${key!.slice(0, 'market_live_'.length)}…${key!.slice(-4)}`;
    assert.ok(second.output.includes(`  ${user} `), `${user} named again:\n${second.output}`);
    assert.ok(second.output.includes(outline), `${outline} shown:\n${second.output}`);
    assert.ok(!second.output.includes(key!), 'a plain key is never printed again');
  }
  assert.match(second.output, /Grace Creator \(creator\): \S+\n {6}may: read:listings write:listings read:users read:analytics\n/);
  assert.match(second.output, /lost Ada Creator's key\? make another: npm run --silent cli -- keys create --user-id usr_\w+ --permissions "read:listings,/);
  assert.match(second.output, new RegExp(`dashboard: ${second.url}/dashboard `));
  assert.match(second.output, new RegExp(`operator token: in ${dataDir}/admin-token \\(mode 0600\\)`));
});

test('the banner of a server started with MARKETPLACE_ADMIN_TOKEN says the token is that variable', async (t) => {
  const started = await startAndStop({ DATA_DIR: join(temporaryDir(t), 'data'), MARKETPLACE_DEMO: '0', MARKETPLACE_ADMIN_TOKEN: 'first-contact-token-0123456789' });
  assert.match(started.output, /operator token: the value of MARKETPLACE_ADMIN_TOKEN\n/);
  assert.doesNotMatch(started.output, /first-contact-token/);
  assert.doesNotMatch(started.output, /demo/);
  assert.match(started.output, /dashboard: http:\/\/\S+\/dashboard/);
});

test('GET / → 200 JSON pointing to the API, the dashboard, the API description and the docs; a browser gets the same links as HTML', async (t) => {
  const server = await startServer(t);
  const json = await fetch(`${server.url}/`);
  assert.equal(json.status, 200);
  assert.match(json.headers.get('content-type') ?? '', /^application\/json/);
  const links = (await json.json()) as Record<string, string>;
  assert.equal(links.dashboard, '/dashboard');
  assert.equal(links.portal, '/portal');
  assert.equal(links.openapi, '/openapi.json');
  assert.equal(links.api, '/v1');
  assert.match(links.docs!, /docs\/api\.md/);
  for (const path of [links.dashboard, links.portal, links.openapi, links.health]) {
    await t.test(`GET ${path}`, async () => {
      assert.equal((await fetch(`${server.url}${path}`)).status, 200, `${path} answers`);
    });
  }

  const html = await fetch(`${server.url}/`, { headers: { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' } });
  assert.equal(html.status, 200);
  assert.match(html.headers.get('content-type') ?? '', /^text\/html/);
  assert.match(html.headers.get('content-security-policy') ?? '', /default-src 'none'/);
  const page = await html.text();
  assert.match(page, /<a href="dashboard">/);
  assert.match(page, /<a href="openapi.json">/);
  assert.doesNotMatch(page, /<script/);

  const other = await fetch(`${server.url}/`, { method: 'POST' });
  assert.equal(other.status, 405);
});

test('a checkout holds data/ with only its .gitignore, and the first start closes that folder to mode 0700', async (t) => {
  const tracked = spawnSync('git', ['ls-files', 'data'], { encoding: 'utf8' });
  if (tracked.status !== 0) {
    t.skip('not a git checkout');
    return;
  }
  assert.equal(tracked.stdout, 'data/.gitignore\n', 'data/ is committed with its .gitignore alone, never with data');
  assert.match(readFileSync('data/.gitignore', 'utf8'), /^\*$/m);

  // As git makes it on a fresh clone: the placeholder alone, mode from the umask.
  const dataDir = join(temporaryDir(t), 'data');
  mkdirSync(dataDir);
  copyFileSync('data/.gitignore', join(dataDir, '.gitignore'));
  chmodSync(dataDir, 0o755);
  const output: string[] = [];
  await startServer(t, { dataDir, output });
  assert.equal(statSync(dataDir).mode & 0o777, 0o700);
  assert.doesNotMatch(output.join(''), /other users of this machine can list it/);

  const created = join(temporaryDir(t), 'made-by-the-server');
  await startServer(t, { dataDir: created });
  assert.equal(statSync(created).mode & 0o777, 0o700);
});

test('a data dir that others can read is left as it is, with a warning at start naming the chmod that closes it', async (t) => {
  const dataDir = join(temporaryDir(t), 'data');
  mkdirSync(dataDir);
  chmodSync(dataDir, 0o755);
  const output: string[] = [];
  await startServer(t, { dataDir, output });
  assert.equal(statSync(dataDir).mode & 0o777, 0o755);
  assert.match(output.join(''), new RegExp(`warning: the data directory ${dataDir} is mode 0755: other users of this machine can list it .*chmod 700 ${dataDir}`));

  const quietDir = join(temporaryDir(t), 'data');
  mkdirSync(quietDir, { mode: 0o700 });
  const quiet: string[] = [];
  await startServer(t, { dataDir: quietDir, output: quiet });
  assert.doesNotMatch(quiet.join(''), /data directory/);
});
