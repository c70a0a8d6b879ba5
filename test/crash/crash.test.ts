// A short run of the crash harness in every `npm test`: the real server, SIGKILLed under
// concurrent writes a few times, restarts each time with every acknowledged write intact.
// The long run is `npm run test:crash -- --loops 200`. A second run kills the server while a
// compaction stands in each of its phases (held there by a test hook), writes going on.

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { formatReport, runCrashHarness } from './harness.ts';
import { REPO_ROOT } from './server-process.ts';

test('crash harness: SIGKILL under concurrent writes, restart, every acknowledged write present exactly', { timeout: 120_000, skip: !existsSync(join(REPO_ROOT, 'src/main.ts')) }, async (t) => {
  const report = await runCrashHarness({ loops: 4, clients: 3, maxRunMs: 500, startupKillChance: 0.25 });
  for (const line of formatReport(report).split('\n')) t.diagnostic(line);
  assert.deepEqual(report.failures, [], formatReport(report));
  assert.equal(report.loops, 4);
  assert.equal(report.restarts, 4, 'the server restarted after every kill');
  assert.ok(report.kills >= 4);
  assert.ok(report.acknowledged.total > 0, 'the clients got writes acknowledged');
  assert.ok(report.listingsChecked >= report.finalListings, 'the last restart checked every listing');
  assert.equal(report.gracefulStop, true);
});

test('crash harness: SIGKILL while a compaction stands in each of its phases, restart, every acknowledged write present exactly', { timeout: 300_000, skip: !existsSync(join(REPO_ROOT, 'src/main.ts')) }, async (t) => {
  const phases = ['afterSnapshot', 'writingRecords', 'carryingWrites', 'beforeRename', 'afterRename'];
  const report = await runCrashHarness({ loops: phases.length, clients: 3, maxRunMs: 400, startupKillChance: 0, holdCompactionAt: phases });
  for (const line of formatReport(report).split('\n')) t.diagnostic(line);
  assert.deepEqual(report.failures, [], formatReport(report));
  assert.deepEqual(report.killsInCompactionPhase, Object.fromEntries(phases.map((phase) => [phase, 1])), 'one kill in each phase');
  // Beside the records and the carried writes, writes go on; in the switch they wait.
  for (const phase of phases.slice(0, 3)) assert.ok(report.acknowledgedWhileHeld[phase]! > 0, `writes acknowledged while held at ${phase}`);
  // (An answer already on its way when the hold began may arrive after: at most one per client.)
  for (const phase of phases.slice(3)) assert.ok(report.acknowledgedWhileHeld[phase]! <= 3, `no write acknowledged while held at ${phase}`);
  assert.equal(report.restarts, phases.length);
  assert.ok(report.acknowledged.total > 0, 'the clients got writes acknowledged');
  assert.equal(report.gracefulStop, true);
});
