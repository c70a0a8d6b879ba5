// One writer per data directory: a second open is refused (in this process or another) with a
// clear message, and a lock left by a process that is gone is taken over.

import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { once } from 'node:events';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { DataDirLockedError, Store } from '../../src/store/store.ts';
import { freshDataDir, openStore, put } from './helpers.ts';

const STORE_MODULE = pathToFileURL(resolve(import.meta.dirname, '../../src/store/store.ts')).href;

/** Another process holding the store open until its stdin closes. */
async function holderProcess(dataDir: string): Promise<ChildProcess> {
  const script = `
    import { Store } from ${JSON.stringify(STORE_MODULE)};
    const store = await Store.open({ dataDir: ${JSON.stringify(dataDir)} });
    process.stdout.write('ready\\n');
    process.stdin.resume();
    process.stdin.on('end', async () => { await store.close(); process.exit(0); });
  `;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  while (!output.includes('ready')) {
    if (child.exitCode !== null) throw new Error('the lock holder exited early');
    await new Promise((done) => setTimeout(done, 20));
  }
  return child;
}

test('a second open of the same data directory in this process is refused until the first closes', async (t) => {
  const dataDir = freshDataDir(t);
  const first = await Store.open({ dataDir, warn: () => {} });
  await assert.rejects(Store.open({ dataDir, warn: () => {} }), (error: unknown) => {
    assert.ok(error instanceof DataDirLockedError);
    assert.match(error.message, /already open in this process/);
    return true;
  });
  await first.write([put('items', 'a', 'alpha')]);
  await first.close();
  assert.equal(existsSync(join(dataDir, 'LOCK')), false, 'close removes the lock');
  const second = await openStore(t, dataDir);
  assert.equal(second.store.size('items'), 1);
});

test('a server in another process keeps this one out with a clear message; once it stops, the directory opens', async (t) => {
  const dataDir = freshDataDir(t);
  const holder = await holderProcess(dataDir);
  t.after(() => {
    if (holder.exitCode === null) holder.kill('SIGKILL');
  });
  await assert.rejects(Store.open({ dataDir, warn: () => {} }), (error: unknown) => {
    assert.ok(error instanceof DataDirLockedError);
    assert.match(error.message, new RegExp(`Another process \\(pid ${holder.pid}\\) is already using the data directory`));
    assert.match(error.message, /Stop it first/);
    return true;
  });
  holder.stdin!.end();
  await once(holder, 'exit');
  const { store } = await openStore(t, dataDir);
  assert.equal(store.size('items'), 0);
});

test('a lock left by a killed process is taken over', async (t) => {
  const dataDir = freshDataDir(t);
  const holder = await holderProcess(dataDir);
  holder.kill('SIGKILL');
  await once(holder, 'exit');
  assert.ok(readFileSync(join(dataDir, 'LOCK'), 'utf8').startsWith(`${holder.pid}`), 'the killed process left its lock');
  const { store } = await openStore(t, dataDir);
  await store.write([put('items', 'a', 'alpha')]);
  assert.ok(readFileSync(join(dataDir, 'LOCK'), 'utf8').startsWith(`${process.pid}`));
});

test('a lock naming a live pid that belongs to a newer process (pid reused) is taken over', { skip: !existsSync('/proc/self/stat') }, async (t) => {
  const dataDir = freshDataDir(t);
  const bystander = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)'], { stdio: 'ignore' });
  t.after(() => bystander.kill('SIGKILL'));
  // Same pid, another start time: the lock's owner is not this process.
  writeFileSync(join(dataDir, 'LOCK'), `${bystander.pid} 1\n`);
  const { store } = await openStore(t, dataDir);
  assert.equal(store.size('items'), 0);
});

test('a lock naming this very pid but not held here (a restarted container\'s pid 1) is taken over', async (t) => {
  const dataDir = freshDataDir(t);
  writeFileSync(join(dataDir, 'LOCK'), `${process.pid}\n`);
  const { store } = await openStore(t, dataDir);
  assert.equal(store.size('items'), 0);
});
