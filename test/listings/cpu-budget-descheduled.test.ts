// A key is charged for the CPU its own work used, not for the time the server waited for a
// processor. The real server (src/main.ts, its own process) is pinned to CPU 0 beside four
// busy loops pinned there too, so it is on a processor only a small part of the time; one key
// sends searches, eight at a time, until the whole server process has used (by the kernel's
// own accounting, /proc/<pid>/stat) three quarters of the key's budget. Whatever the key's own
// share of that was, it fits its budget, so it is never refused; meanwhile the server's main
// thread waited for CPU 0 longer than it ran on it (/proc/<pid>/task/<pid>/schedstat), so
// timing the same work by the clock would have charged it several times over and refused it.
// Linux only (taskset, /proc); skipped elsewhere.

import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { USERS, type UserRecord } from '../../src/domain/records.ts';
import { Store } from '../../src/store/store.ts';
import { call, CLUSTER_ADMIN_TOKEN, userWithKey, type Instance } from '../helpers/cluster.ts';
import { startMain } from '../helpers/main-process.ts';
import { temporaryDir } from '../helpers/server.ts';
import { VOCABULARY } from './search-reference.ts';
import { vocabularyListingOps } from './vocabulary-listings.ts';

const LISTING_COUNT = 3_000;
const OWNER_ID = 'usr_descheduled_owner';
/** KEY_CPU_BUDGET_MS; the key below (rate limit 100,000) may use four times it: 1,200 ms a minute. */
const BUDGET_MS = 300;
const KEY_BUDGET_MS = 4 * BUDGET_MS;
/** The key stops once the whole server process used this much CPU: its own share is less. */
const PROCESS_CPU_MS = 0.75 * KEY_BUDGET_MS;
const HOGS = 4;
const CONCURRENCY = 8;
const CLOCK_TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());

async function seed(dataDir: string): Promise<void> {
  const store = await Store.open({ dataDir, warn: () => {} });
  const at = new Date(Date.UTC(2026, 0, 1)).toISOString();
  const owner: UserRecord = { id: OWNER_ID, name: 'Owner', email: 'owner@example.com', bio: '', website: '', avatar_url: '', role: 'creator', created_at: at, updated_at: at, status: 'active' };
  await store.write([{ op: 'put', collection: USERS, id: OWNER_ID, data: owner }]);
  const ops = vocabularyListingOps(LISTING_COUNT, OWNER_ID, at);
  await store.write(ops);
  await store.close();
}

/** CPU time (user + system) the process has used, in ms, by the kernel's accounting. */
function processCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The fields after the command name (which may hold spaces) in parentheses; utime and stime are the 14th and 15th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
}

/** The main thread's time on a CPU and time waiting for one, in ms. */
function mainThreadSchedule(pid: number): { runMs: number; waitMs: number } {
  const [run, wait] = readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').trim().split(' ').map(Number);
  return { runMs: run! / 1e6, waitMs: wait! / 1e6 };
}

/** A busy loop on CPU 0. */
function hog(): ChildProcess {
  return spawn('taskset', ['-c', '0', process.execPath, '-e', 'for (;;) {}'], { stdio: 'ignore' });
}

const linux = process.platform === 'linux' && existsSync('/proc/self/schedstat') && existsSync('/usr/bin/taskset');

test('a key whose own work fits its CPU budget is never refused while the server is descheduled most of the time', { skip: !linux && 'needs Linux, /proc and taskset', timeout: 300_000 }, async (t) => {
  const dataDir = temporaryDir(t);
  await seed(dataDir);
  const running = await startMain({ DATA_DIR: dataDir, MARKETPLACE_DEMO: '0', MARKETPLACE_ADMIN_TOKEN: CLUSTER_ADMIN_TOKEN, KEY_CPU_BUDGET_MS: String(BUDGET_MS) });
  const hogs: ChildProcess[] = [];
  t.after(() => {
    for (const child of hogs) child.kill('SIGKILL');
    running.child.kill('SIGKILL');
  });
  const pid = running.child.pid!;
  const instances = [{ url: running.url } as Instance];
  const { key } = await userWithKey(instances, 'member', ['read:listings'], 100_000);
  // The first search waits for the search index to be full; it is made before the server is crowded.
  assert.equal((await call(running.url, 'GET', `/v1/listings?q=${VOCABULARY[0]}`, key)).status, 200);

  // The server and all its threads on CPU 0, beside the busy loops.
  execFileSync('taskset', ['-a', '-c', '-p', '0', String(pid)], { stdio: 'ignore' });
  for (let number = 0; number < HOGS; number += 1) hogs.push(hog());

  const cpuBefore = processCpuMs(pid);
  const scheduleBefore = mainThreadSchedule(pid);
  const statuses = new Map<number, number>();
  let firstRefusal: string | null = null;
  let sent = 0;
  async function client(): Promise<void> {
    while (processCpuMs(pid) - cpuBefore < PROCESS_CPU_MS) {
      const number = sent++;
      // A different search each time (word, order, page size): none is a cached page.
      const word = VOCABULARY[number % VOCABULARY.length];
      const answer = await call(running.url, 'GET', `/v1/listings?q=${word}&sort=${number % 2 === 0 ? 'price' : 'title'}&limit=${1 + (number % 100)}`, key);
      statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      if (answer.status !== 200) firstRefusal ??= `${answer.status} ${JSON.stringify(answer.body)} after ${sent} requests`;
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, client));
  const cpuUsed = processCpuMs(pid) - cpuBefore;
  const scheduleAfter = mainThreadSchedule(pid);
  const ranMs = scheduleAfter.runMs - scheduleBefore.runMs;
  const waitedMs = scheduleAfter.waitMs - scheduleBefore.waitMs;
  t.diagnostic(`${sent} requests; server process CPU ${cpuUsed.toFixed(0)} ms (key budget ${KEY_BUDGET_MS} ms); main thread ran ${ranMs.toFixed(0)} ms, waited for a CPU ${waitedMs.toFixed(0)} ms; answers ${JSON.stringify([...statuses])}`);

  // The conditions the test is about: the key's work fits its budget, and the server was kept waiting.
  assert.ok(cpuUsed < KEY_BUDGET_MS, `the whole server used ${cpuUsed} ms of CPU, within the key's budget of ${KEY_BUDGET_MS} ms`);
  assert.ok(waitedMs > ranMs, `the server's main thread waited for a CPU (${waitedMs.toFixed(0)} ms) longer than it ran (${ranMs.toFixed(0)} ms)`);
  // What the key sees: every search served, none refused for others' load.
  assert.equal(firstRefusal, null, `the key was refused: ${firstRefusal}`);
  assert.deepEqual([...statuses.keys()], [200]);
});
