// The real process (src/main.ts) as a self-hoster runs it: first start seeds the demo and
// prints a curl line that works; SIGTERM finishes in-flight requests, closes the log, exits 0;
// a second server on the same data dir refuses to start.

import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { connect } from 'node:net';
import { test } from 'node:test';
import { eventually } from '../helpers/eventually.ts';
import { startMain } from '../helpers/main-process.ts';
import { temporaryDir } from '../helpers/server.ts';

function exitOf(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

test('first start seeds the demo and prints a curl line that answers 200', async (t) => {
  const dataDir = temporaryDir(t);
  const running = await startMain({ DATA_DIR: dataDir, MARKETPLACE_DEMO: '1' });
  t.after(() => running.child.kill('SIGKILL'));
  const curlLine = /try: curl -H "Authorization: Bearer (\S+)" (\S+)/.exec(running.output());
  assert.ok(curlLine, running.output());
  const response = await fetch(curlLine[2]!, { headers: { authorization: `Bearer ${curlLine[1]}` } });
  assert.equal(response.status, 200);
  const body = (await response.json()) as { pagination: { total: number } };
  assert.ok(body.pagination.total >= 10);
  assert.match(running.output(), /operator token created in .*admin-token/);

  // One writer per data dir: a second server refuses with a clear message.
  const second = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: { ...process.env, PORT: '0', DATA_DIR: dataDir, ACCESS_LOG: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let secondError = '';
  second.stderr!.on('data', (chunk) => (secondError += chunk));
  assert.equal(await exitOf(second), 1);
  assert.match(secondError, /cannot start: .*(in use|locked|another)/i);
});

test('SIGTERM lets an in-flight request finish, keeps acknowledged writes, and exits 0', async (t) => {
  const dataDir = temporaryDir(t);
  const env = { DATA_DIR: dataDir, MARKETPLACE_DEMO: '0', MARKETPLACE_ADMIN_TOKEN: 'process-test-token-0123456789' };
  const running = await startMain(env);
  t.after(() => running.child.kill('SIGKILL'));
  const headers = { authorization: 'Bearer process-test-token-0123456789', 'content-type': 'application/json' };
  const created = await fetch(`${running.url}/admin/v1/users`, { method: 'POST', headers, body: JSON.stringify({ name: 'Kept' }) });
  assert.equal(created.status, 201);

  // A request whose body is still arriving when SIGTERM lands is answered, not cut. Its headers
  // ask for "100 Continue", so the test knows the server has the request before the signal, and
  // the body follows only once the server says it is stopping: no guess at how long either takes.
  const body = '{"name":"Late"}';
  const socket = connect(Number(new URL(running.url).port), '127.0.0.1');
  let answer = '';
  socket.setEncoding('utf8').on('data', (chunk: string) => (answer += chunk));
  const ended = once(socket, 'end');
  socket.write(
    'POST /admin/v1/users HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer process-test-token-0123456789\r\n' +
      `Content-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n`,
  );
  await eventually(async () => answer.startsWith('HTTP/1.1 100 Continue'), 60_000, 'the server to take the request');
  const exited = exitOf(running.child);
  running.child.kill('SIGTERM');
  await eventually(async () => /SIGTERM received/.test(running.output()), 60_000, 'the server to begin stopping');
  socket.write(body);
  await ended;
  assert.match(answer, /HTTP\/1\.1 201 /);
  assert.equal(await exited, 0);
  assert.match(running.output(), /SIGTERM received/);

  const restarted = await startMain(env);
  t.after(() => restarted.child.kill('SIGKILL'));
  const list = await fetch(`${restarted.url}/admin/v1/users`, { headers });
  const names = ((await list.json()) as { data: Array<{ name: string }> }).data.map((user) => user.name);
  assert.deepEqual(names.sort(), ['Kept', 'Late']);
  restarted.child.kill('SIGTERM');
  assert.equal(await exitOf(restarted.child), 0);
});
