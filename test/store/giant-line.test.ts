// A damaged log line longer than any write the server makes (here 540,000,000 bytes, past the
// longest string V8 can hold), written sparsely so it costs no disk: the server refuses to start
// naming its line number and byte offset (not "Cannot create a string longer than …"), the
// `repair` command moves it aside, and the server then starts with every good record.
// Not in test:unit (slow: reads a 540 MB line); npm test runs it.

import assert from 'node:assert/strict';
import { closeSync, openSync, readFileSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli } from '../../src/cli.ts';
import { LOG_FILE_NAME } from '../../src/store/format.ts';
import { MAX_LINE_BYTES } from '../../src/store/lines.ts';
import { StoreUnavailableError } from '../../src/store/store.ts';
import { startServer, temporaryDir } from '../helpers/server.ts';
import { freshDataDir, logBytes, openStore, put } from './helpers.ts';

const GIANT_LINE_BYTES = 540_000_000;

test('a 540 MB damaged line: start refused naming line and offset, repair removes it, the server starts', { timeout: 120_000 }, async (t) => {
  const dataDir = temporaryDir(t);
  const first = await startServer(null, { dataDir });
  const kept = await first.createUser({ name: 'Kept before' });
  await first.close();

  // The log so far, then the giant line (a sparse hole of zero bytes), then a good record again.
  const logPath = join(dataDir, LOG_FILE_NAME);
  const lines = readFileSync(logPath, 'utf8').split('\n').filter((line) => line !== '');
  const head = Buffer.from(lines.join('\n') + '\n');
  const tail = Buffer.from(`\n${lines[lines.length - 1]}\n`);
  const fd = openSync(logPath, 'w');
  writeSync(fd, head, 0, head.length, 0);
  writeSync(fd, tail, 0, tail.length, head.length + GIANT_LINE_BYTES);
  closeSync(fd);
  const giantLine = lines.length + 1;
  assert.equal(statSync(logPath).size, head.length + GIANT_LINE_BYTES + tail.length);

  const errors: string[] = [];
  await assert.rejects(
    startServer(null, { dataDir, output: errors }),
    (error: Error) => {
      assert.match(error.message, new RegExp(`damaged at line ${giantLine} \\(byte offset ${head.length}\\)`));
      assert.match(error.message, /longer than/);
      assert.doesNotMatch(error.message, /Cannot create a string/);
      return true;
    },
  );

  let stdout = '';
  let stderr = '';
  const io = { stdout: { write: (text: string) => (stdout += text) }, stderr: { write: (text: string) => (stderr += text) }, env: {} };
  assert.equal(await runCli(['repair', '--data-dir', dataDir], io), 0, stderr);
  const report = JSON.parse(stdout) as { lines_moved: number; damaged_lines: { line: number; byte_offset: number; reason: string }[]; side_file: string };
  assert.equal(report.lines_moved, 1);
  assert.deepEqual(report.damaged_lines.map(({ line, byte_offset }) => ({ line, byte_offset })), [{ line: giantLine, byte_offset: head.length }]);
  assert.ok(statSync(logPath).size < 1_000_000, 'the giant line left the log');
  assert.ok(statSync(report.side_file).size < 1_000_000, 'the side file names the line rather than copying 540 MB');

  const server = await startServer(t, { dataDir });
  const users = await server.admin('GET', '/admin/v1/users');
  assert.equal(users.status, 200, users.text);
  assert.deepEqual(users.body.data.map((user: { id: string; name: string }) => [user.id, user.name]), [[kept.id, 'Kept before']]);
});

test('a write longer than the largest line the log takes is refused, and the log is unchanged', async (t) => {
  const dataDir = freshDataDir(t, 'giant-write');
  const { store } = await openStore(t, dataDir);
  await store.write([put('items', 'small', 'fits')]);
  const before = logBytes(dataDir);
  const huge = 'h'.repeat(MAX_LINE_BYTES + 1);
  await assert.rejects(store.write([put('items', 'huge', huge)]), (error: Error) => error instanceof StoreUnavailableError && /longer than the largest/.test(error.message));
  assert.deepEqual(logBytes(dataDir), before);
  assert.equal(store.get('items', 'huge'), undefined);
  await store.write([put('items', 'after', 'still writes')]);
});
