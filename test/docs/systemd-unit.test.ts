// The systemd unit of docs/operations.md, as far as this machine allows: systemd-analyze
// verify accepts it as written; and (as root, with a built dist/) its ExecStart runs as a
// freshly made service user created by the docs' own useradd line, in a data dir made as
// StateDirectory= would make it, and answers /healthz.

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { temporaryDir } from '../helpers/server.ts';

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const OPERATIONS = readFileSync(join(ROOT, 'docs/operations.md'), 'utf8');

/** The ini block that starts with the unit's path comment. */
function unitText(): string {
  const match = /```ini\n(# \/etc\/systemd\/system\/marketplace\.service\n[\s\S]*?)```/.exec(OPERATIONS);
  assert.ok(match, 'docs/operations.md shows the unit');
  return match[1]!;
}

function setting(unit: string, name: string): string {
  const match = new RegExp(`^${name}=(.*)$`, 'm').exec(unit);
  assert.ok(match, `the unit sets ${name}=`);
  return match[1]!.trim();
}

const has = (tool: string) => spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0;

test('systemd-analyze verify accepts the unit as the docs show it', (t) => {
  if (!has('systemd-analyze')) return t.skip('systemd-analyze is not installed (apt-get install systemd)');
  const dir = temporaryDir(t);
  const file = join(dir, 'marketplace.service');
  writeFileSync(file, unitText());
  const verified = spawnSync('systemd-analyze', ['verify', file], { encoding: 'utf8' });
  assert.equal(verified.status, 0, verified.stderr);
  assert.equal(verified.stderr.trim(), '', 'no warning either');
  const unit = unitText();
  assert.equal(setting(unit, 'StateDirectory'), 'marketplace');
  assert.equal(setting(unit, 'StateDirectoryMode'), '0700');
  assert.match(setting(unit, 'Environment'), /DATA_DIR=\/var\/lib\/marketplace/);
});

test('ExecStart runs as the service user the docs create, in a data dir made as StateDirectory= makes it', { timeout: 120_000 }, async (t) => {
  if (process.getuid?.() !== 0) return t.skip('needs root to create a user');
  if (!has('runuser') || !has('useradd')) return t.skip('runuser or useradd missing');
  if (!existsSync(join(ROOT, 'dist/main.js'))) return t.skip('no dist/ (npm run build first)');
  const unit = unitText();
  const user = `mkt${process.pid}`;
  const base = temporaryDir(t);
  chmodSync(base, 0o755);
  const stateDir = join(base, 'var-lib-marketplace');
  // The install as WorkingDirectory= names it (/opt/marketplace-api: readable by everyone), not
  // this checkout, which may sit under a folder the service user cannot enter (root's home).
  const installDir = join(base, 'opt-marketplace-api');
  mkdirSync(installDir, { mode: 0o755 });
  assert.equal(setting(unit, 'WorkingDirectory'), '/opt/marketplace-api');
  // The single executable (dist/marketplace, ~100 MB) is not what this unit runs.
  cpSync(join(ROOT, 'dist'), join(installDir, 'dist'), { recursive: true, filter: (source) => source !== join(ROOT, 'dist', 'marketplace') });
  cpSync(join(ROOT, 'package.json'), join(installDir, 'package.json'));
  spawnSync('chmod', ['-R', 'a+rX', installDir]);

  // The docs' own useradd line, with a throwaway name and home.
  const line = /^useradd .*marketplace$/m.exec(OPERATIONS);
  assert.ok(line, 'the install steps create the user with useradd');
  const args = line[0].replace('/var/lib/marketplace', stateDir).replace(/marketplace$/, user).split(' ').slice(1);
  const added = spawnSync('useradd', args, { encoding: 'utf8' });
  assert.equal(added.status, 0, added.stderr);
  t.after(() => spawnSync('userdel', [user]));

  // What StateDirectory=marketplace with StateDirectoryMode=0700 makes: owned by the user.
  mkdirSync(stateDir, { mode: Number.parseInt(setting(unit, 'StateDirectoryMode'), 8) });
  spawnSync('chown', [`${user}:${user}`, stateDir]);

  const environment = setting(unit, 'Environment')
    .split(' ')
    .map((pair) => pair.replace('DATA_DIR=/var/lib/marketplace', `DATA_DIR=${stateDir}`).replace(/^PORT=\d+$/, 'PORT=0'));
  const [command, ...commandArgs] = setting(unit, 'ExecStart').split(' ');
  const child = spawn('runuser', ['-u', user, '--', 'env', '-i', `PATH=${process.env.PATH}`, ...environment, 'sh', '-c', `umask ${setting(unit, 'UMask')} && cd ${installDir} && exec ${command} ${commandArgs.join(' ')}`], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.after(() => child.kill('SIGKILL'));
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const url = await new Promise<string>((resolveUrl, reject) => {
    const timer = setTimeout(() => reject(new Error(`not listening in time:\n${output}`)), 60_000);
    child.stdout.on('data', () => {
      const listening = /listening on (http:\/\/\S+)/.exec(output);
      if (listening) {
        clearTimeout(timer);
        resolveUrl(listening[1]!);
      }
    });
    child.on('exit', (code) => reject(new Error(`exited ${code}:\n${output}`)));
  });
  const health = await fetch(`${url}/healthz`);
  assert.equal(health.status, 200);
  const token = statSync(join(stateDir, 'admin-token'));
  assert.equal(token.mode & 0o777, 0o600);
  assert.equal(String(token.uid), spawnSync('id', ['-u', user], { encoding: 'utf8' }).stdout.trim(), 'the data is the service user\'s');
  assert.equal(statSync(stateDir).mode & 0o777, 0o700);
  assert.doesNotMatch(output, /warning: the data directory/);
  // runuser itself takes the SIGTERM (systemd would signal the server directly), so only its end is awaited.
  const exited = new Promise((done) => child.once('exit', done));
  child.kill('SIGTERM');
  await exited;
});
