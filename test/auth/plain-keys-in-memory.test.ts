// A plain API key is a secret: the server keeps only its SHA-256, on disk and in memory. Once a
// key's requests are answered and their connections closed, a heap snapshot of the running
// server (what an operator's heap dump or core file would show) must not hold the plain key,
// and the key-check cache in particular must not be keyed by it.

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { heapSnapshot, startMain } from '../helpers/main-process.ts';
import { rawRequest } from '../helpers/raw-http.ts';
import { temporaryDir } from '../helpers/server.ts';

const TOKEN = 'heap-test-operator-token-0123456789';

test('after its requests are answered, a heap snapshot of the server holds the key\'s hash but not the plain key', async (t) => {
  const dataDir = temporaryDir(t);
  const snapshotDir = temporaryDir(t);
  const { child, url } = await startMain({ DATA_DIR: dataDir, MARKETPLACE_DEMO: '0', MARKETPLACE_ADMIN_TOKEN: TOKEN }, [
    '--heapsnapshot-signal=SIGUSR2',
    `--diagnostic-dir=${snapshotDir}`,
  ]);
  t.after(() => child.kill('SIGKILL'));

  const admin = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
  const user = (await (await fetch(`${url}/admin/v1/users`, { method: 'POST', headers: admin, body: JSON.stringify({ name: 'Heap' }) })).json()) as { data: { id: string } };
  const body = JSON.stringify({ user_id: user.data.id, permissions: ['read:listings'] });
  const made = (await (await fetch(`${url}/admin/v1/keys`, { method: 'POST', headers: admin, body })).json()) as { data: { key: string } };
  const plainKey: string = made.data.key;
  const secretPart = plainKey.slice(-36); // the random body and its checksum, whatever the prefix

  // Each request on its own connection, closed after the answer: nothing of the request stays.
  for (let index = 0; index < 5; index += 1) {
    assert.equal((await rawRequest(url, 'GET', '/v1/listings', { authorization: `Bearer ${plainKey}` })).status, 200);
    assert.equal((await rawRequest(url, 'GET', '/v1/listings', { 'x-api-key': plainKey })).status, 200);
  }

  const snapshot = await heapSnapshot(child, snapshotDir);

  const hash = createHash('sha256').update(plainKey).digest('hex');
  assert.ok(snapshot.includes(hash), 'the snapshot holds the key\'s hash (it is a real snapshot of this server)');
  assert.ok(!snapshot.includes(secretPart), 'the plain key is nowhere in the server\'s memory');
});
