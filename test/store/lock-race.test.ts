// One writer per data dir, even when servers start at the same instant: processes racing for
// a fresh directory, or for one whose LOCK was left by a process that is gone, never both win,
// and the log they leave loads undamaged. Contender processes call Store.open at one shared
// instant (busy-waiting to it), 120 trials; then real servers are started at once, 4 trials.

import assert from 'node:assert/strict';
import { fork, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { test } from 'node:test';
import { Store } from '../../src/store/store.ts';
import { ServerProcess } from '../crash/server-process.ts';
import { freshDataDir } from './helpers.ts';

const CONTENDERS = 4;
const TRIALS = 120;
const SERVER_TRIALS = 4;
const SERVERS_PER_TRIAL = 3;

/** A pid no process has (checked), for a LOCK whose owner is gone. */
function deadPid(): number {
  for (let pid = 4_000_000; ; pid -= 1) {
    try {
      process.kill(pid, 0);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ESRCH') return pid;
    }
  }
}

function nextMessage(child: ChildProcess, kind: string): Promise<{ kind: string; won?: boolean; error?: string }> {
  return new Promise((resolvePromise) => {
    const onMessage = (message: { kind: string }) => {
      if (message.kind !== kind) return;
      child.off('message', onMessage);
      resolvePromise(message);
    };
    child.on('message', onMessage);
  });
}

test(`${CONTENDERS} processes opening one data dir at the same instant: exactly one wins, ${TRIALS} trials (fresh dirs and stale LOCKs)`, { timeout: 900_000 }, async (t) => {
  const contenders = Array.from({ length: CONTENDERS }, () =>
    fork(resolve(import.meta.dirname, 'lock-contender.ts'), [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }),
  );
  t.after(() => {
    for (const child of contenders) child.kill('SIGKILL');
  });
  await Promise.all(contenders.map((child) => nextMessage(child, 'ready')));
  const stalePid = deadPid();
  const outcomes = { fresh: 0, stale: 0 };
  for (let trial = 0; trial < TRIALS; trial += 1) {
    const dataDir = freshDataDir(t, 'lock-race');
    const stale = trial % 2 === 1;
    if (stale) writeFileSync(resolve(dataDir, 'LOCK'), `${stalePid} 12345\n`);
    const atMs = performance.timeOrigin + performance.now() + 150;
    const results = contenders.map((child) => nextMessage(child, 'result'));
    for (const child of contenders) child.send({ kind: 'race', dataDir, atMs });
    const answers = await Promise.all(results);
    const winners = answers.filter((answer) => answer.won).length;
    assert.equal(winners, 1, `trial ${trial} (${stale ? 'stale LOCK' : 'fresh dir'}): ${winners} winners; ${answers.map((answer) => answer.error ?? 'won').join(' | ')}`);
    for (const answer of answers) if (!answer.won) assert.match(answer.error!, /DataDirLockedError/, `trial ${trial}`);
    await Promise.all(contenders.map((child) => {
      const released = nextMessage(child, 'released');
      child.send({ kind: 'release' });
      return released;
    }));
    // The log left behind loads, and the directory is free again.
    const store = await Store.open({ dataDir, warn: () => {} });
    await store.close();
    outcomes[stale ? 'stale' : 'fresh'] += 1;
  }
  t.diagnostic(`${outcomes.fresh} fresh-dir races and ${outcomes.stale} stale-LOCK races, ${CONTENDERS} processes each: one winner every time`);
});

test(`${SERVERS_PER_TRIAL} real servers started at once on one data dir with a stale LOCK: one runs, the others refuse (${SERVER_TRIALS} trials)`, { timeout: 900_000 }, async (t) => {
  const stalePid = deadPid();
  for (let trial = 0; trial < SERVER_TRIALS; trial += 1) {
    const dataDir = freshDataDir(t, 'lock-servers');
    writeFileSync(resolve(dataDir, 'LOCK'), `${stalePid} 12345\n`);
    const servers = Array.from({ length: SERVERS_PER_TRIAL }, () => new ServerProcess({ dataDir, operatorToken: 'lock-race-operator-token-0123456789' }));
    t.after(async () => {
      for (const server of servers) if (server.running) server.child.kill('SIGKILL');
    });
    const started = await Promise.all(servers.map((server) => server.ready().then(() => true, () => false)));
    assert.equal(started.filter(Boolean).length, 1, `trial ${trial}: ${started.join(',')}`);
    for (const [index, server] of servers.entries()) {
      if (started[index]) continue;
      assert.match(server.stderr, /already using the data directory|at the same moment|taking over/, `trial ${trial}: ${server.stderr}`);
    }
    const running = servers[started.indexOf(true)]!;
    const created = await fetch(`${running.url}/admin/v1/users`, {
      method: 'POST',
      headers: { authorization: 'Bearer lock-race-operator-token-0123456789', 'content-type': 'application/json' },
      body: JSON.stringify({ name: `Trial ${trial}` }),
    });
    assert.equal(created.status, 201);
    running.child.kill('SIGTERM');
    await once(running.child, 'exit');
    const store = await Store.open({ dataDir, warn: () => {} });
    assert.equal(store.size('users'), 1, `trial ${trial}: the log is whole`);
    await store.close();
  }
});

test('a takeover left half-done by a process that died does not block the next start', async (t) => {
  const dataDir = freshDataDir(t, 'lock-dead-taker');
  const stale = `${deadPid()} 12345 0011223344556677\n`;
  writeFileSync(resolve(dataDir, 'LOCK'), stale);
  // The takeover file a taker creates for exactly this LOCK, left by a taker that is gone.
  const guard = `LOCK.takeover-${createHash('sha256').update(stale).digest('hex').slice(0, 32)}`;
  writeFileSync(resolve(dataDir, guard), `${deadPid() - 1} 999 8899aabbccddeeff\n`);
  const store = await Store.open({ dataDir, warn: () => {} });
  await store.close();
  const again = await Store.open({ dataDir, warn: () => {} });
  await again.close();
});
