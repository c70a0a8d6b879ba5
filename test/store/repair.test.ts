// Offline repair: every good record kept byte for byte, damaged lines moved to a side file, a
// torn tail dropped, the old log kept under another name, the server's lock respected, and a
// crash at any step leaves either the old log or the repaired one.

import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { test, type TestContext } from 'node:test';
import { runCli } from '../../src/cli.ts';
import { LOG_VERSION } from '../../src/store/format.ts';
import { repairLog } from '../../src/store/repair.ts';
import { DataDirLockedError, LogDamagedError, LogVersionError, Store } from '../../src/store/store.ts';
import { FaultyFileSystem, type CrashImages } from './fault-fs.ts';
import { contents, freshDataDir, logBytes, logLines, logPath, openStore, put } from './helpers.ts';

const FIXED_NOW = Date.UTC(2026, 2, 4, 5, 6, 7);

/** A log of 6 records whose lines 3 and 6 are damaged and whose last line is torn. */
async function damagedLog(t: TestContext): Promise<{ dataDir: string; good: string[]; damaged: string[] }> {
  const dataDir = freshDataDir(t, 'repair');
  const setup = await openStore(t, dataDir);
  for (let index = 0; index < 6; index += 1) await setup.store.write([put('items', `id-${index}`, `item ${index}`)]);
  await setup.store.close();
  const lines = logLines(dataDir);
  const damaged = ['{"op":"put","c":"items","id":"id-1","d":{"id":"id-1","na', 'garbage \u0000 line'];
  const text = [lines[0], lines[1], damaged[0], lines[3], lines[4], damaged[1], lines[6]].join('\n') + '\n{"op":"put","c":"it';
  writeFileSync(logPath(dataDir), text);
  return { dataDir, good: [lines[1]!, lines[3]!, lines[4]!, lines[6]!], damaged };
}

test('repair keeps every good record, moves damaged lines to a side file, drops the torn tail, and the store starts', async (t) => {
  const { dataDir, good, damaged } = await damagedLog(t);
  const before = logBytes(dataDir);
  await assert.rejects(Store.open({ dataDir, warn: () => {} }), LogDamagedError);

  const report = await repairLog(dataDir, { now: () => FIXED_NOW });
  assert.equal(report.repaired, true);
  assert.equal(report.lines_kept, 4);
  assert.equal(report.lines_moved, 2);
  assert.deepEqual(
    report.damaged_lines.map(({ line, reason }) => ({ line, reason })),
    [
      { line: 3, reason: 'not valid JSON' },
      { line: 6, reason: 'not valid JSON' },
    ],
  );
  assert.equal(report.damaged_lines[0]!.byte_offset, before.indexOf(damaged[0]!));
  assert.equal(report.torn_tail_bytes, '{"op":"put","c":"it'.length);
  assert.equal(report.side_file, `${logPath(dataDir)}.damaged-2026-03-04T05-06-07-000Z`);
  assert.equal(readFileSync(report.side_file!, 'utf8'), damaged.join('\n') + '\n');
  assert.equal(statSync(report.side_file!).mode & 0o777, 0o600);
  assert.deepEqual(readFileSync(report.original!), before, 'the log as it was is kept');
  assert.match(report.summary, /kept 4 records; moved 2 damaged line\(s\) to .*damaged-.*; dropped an incomplete last line of 19 bytes/);

  // The good lines are kept byte for byte, behind the original header.
  const lines = logLines(dataDir);
  assert.deepEqual(lines.slice(1), good);
  assert.equal(statSync(logPath(dataDir)).mode & 0o777, 0o600);
  const { store, warnings } = await openStore(t, dataDir);
  assert.deepEqual(contents(store, 'items').map((item) => item.id), ['id-0', 'id-2', 'id-3', 'id-5']);
  assert.deepEqual(warnings, []);
  assert.ok(!readdirSync(dataDir).some((name) => name.endsWith('.tmp')));
});

test('repair of a whole log changes nothing and says so', async (t) => {
  const dataDir = freshDataDir(t, 'repair');
  const setup = await openStore(t, dataDir);
  await setup.store.write([put('items', 'a', 'alpha')]);
  await setup.store.close();
  const before = logBytes(dataDir);
  const report = await repairLog(dataDir);
  assert.equal(report.repaired, false);
  assert.equal(report.lines_kept, 1);
  assert.equal(report.side_file, null);
  assert.match(report.summary, /nothing to repair, nothing changed/);
  assert.deepEqual(logBytes(dataDir), before);
  assert.deepEqual(readdirSync(dataDir).sort(), ['marketplace.log']);
});

test('repair refuses while a server holds the data directory, and changes nothing', async (t) => {
  const { dataDir } = await damagedLog(t);
  const before = logBytes(dataDir);
  // A healthy store elsewhere cannot be open on a damaged log, so hold the lock directly.
  const { acquireDataDirLock } = await import('../../src/store/lock.ts');
  const release = acquireDataDirLock(dataDir);
  t.after(release);
  await assert.rejects(repairLog(dataDir), DataDirLockedError);
  assert.deepEqual(logBytes(dataDir), before);
  release();
  assert.equal((await repairLog(dataDir)).repaired, true);
});

test('repair refuses a log from a newer release, a file that is not a log, and a missing log', async (t) => {
  const dataDir = freshDataDir(t, 'repair');
  writeFileSync(logPath(dataDir), `{"format":"marketplace-api-log","version":${LOG_VERSION + 1}}\nnot for us to judge\n`);
  const before = logBytes(dataDir);
  await assert.rejects(repairLog(dataDir), LogVersionError);
  assert.deepEqual(logBytes(dataDir), before);

  writeFileSync(logPath(dataDir), 'PNG\nsomething else\n');
  await assert.rejects(repairLog(dataDir), /does not look like a marketplace-api log .* nothing was changed/);

  const empty = freshDataDir(t, 'repair');
  await assert.rejects(repairLog(empty), /There is no log at .*: nothing to repair/);
  assert.deepEqual(readdirSync(empty), []);
});

test('repair of a damaged header writes a new one and keeps the records', async (t) => {
  const dataDir = freshDataDir(t, 'repair');
  const setup = await openStore(t, dataDir);
  await setup.store.write([put('items', 'a', 'alpha')]);
  await setup.store.close();
  const lines = logLines(dataDir);
  writeFileSync(logPath(dataDir), ['{"format":"marketplace-api-l', lines[1]].join('\n') + '\n');
  const report = await repairLog(dataDir);
  assert.equal(report.lines_moved, 1);
  assert.equal(report.damaged_lines[0]!.reason, 'not a log header');
  assert.match(report.summary, /wrote a new header line/);
  const { store } = await openStore(t, dataDir);
  assert.deepEqual(store.get('items', 'a'), { id: 'a', name: 'alpha', version: 1 });
});

test('npm run cli -- repair --data-dir <dir> prints what it did as JSON', async (t) => {
  const { dataDir } = await damagedLog(t);
  let stdout = '';
  let stderr = '';
  const io = { stdout: { write: (text: string) => (stdout += text) }, stderr: { write: (text: string) => (stderr += text) }, env: {} };
  assert.equal(await runCli(['repair', '--data-dir', dataDir], io), 0, stderr);
  const printed = JSON.parse(stdout) as { repaired: boolean; lines_kept: number; lines_moved: number; side_file: string };
  assert.equal(printed.repaired, true);
  assert.equal(printed.lines_kept, 4);
  assert.equal(printed.lines_moved, 2);
  assert.ok(existsSync(printed.side_file));

  const { acquireDataDirLock } = await import('../../src/store/lock.ts');
  const release = acquireDataDirLock(dataDir);
  t.after(release);
  stdout = '';
  assert.equal(await runCli(['repair', '--data-dir', dataDir], io), 1);
  assert.match(stderr, /error: .*already open in this process/);
});

test('a crash at any step of a repair leaves either the old log or the repaired one, never a mix', async (t) => {
  const probe = await damagedLog(t);
  const probeFs = new FaultyFileSystem();
  await repairLog(probe.dataDir, { fileSystem: probeFs });
  const steps = probeFs.calls.length;
  assert.ok(steps >= 8, `a repair makes ${steps} file calls`);
  const repairedIds = ['id-0', 'id-2', 'id-3', 'id-5'];

  for (let index = 0; index < steps; index += 1) {
    for (const phase of ['before', 'after'] as const) {
      await t.test(`crash ${phase} call ${index + 1}`, async () => {
        const { dataDir } = await damagedLog(t);
        const original = logBytes(dataDir);
        const fileSystem = new FaultyFileSystem();
        t.after(() => fileSystem.cleanUp());
        let images: CrashImages | null = null;
        fileSystem.crashAtCall(index, phase, (taken) => {
          images = taken;
        });
        await assert.rejects(repairLog(dataDir, { fileSystem }));
        for (const [kind, dir] of Object.entries(images! as CrashImages)) {
          const label = `crash ${phase} call ${index + 1}, ${kind}`;
          const log = readFileSync(logPath(dir));
          if (log.equals(original)) continue; // not yet replaced: the repair can simply be run again
          const store = await Store.open({ dataDir: dir, warn: (message) => assert.fail(`${label}: ${message}`) });
          assert.deepEqual(contents(store, 'items').map((item) => item.id), repairedIds, label);
          await store.close();
        }
      });
    }
  }
});
