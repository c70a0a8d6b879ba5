// Erasure reaches the server's memory as well as its files: once the answer is sent, a heap
// snapshot of the running server (what a heap dump or core file would show) holds none of the
// erased user's strings, even after her listing was read (so its answer was made and kept) and
// listed (so a page holding it was cached), her webhook was sent to and her key was named.

import assert from 'node:assert/strict';
import { request } from 'node:http';
import { test } from 'node:test';
import { heapSnapshot, startMain } from '../helpers/main-process.ts';
import { temporaryDir } from '../helpers/server.ts';
import { answer, startReceiver, waitFor } from '../webhooks/fixtures.ts';

const TOKEN = 'heap-erasure-operator-token-0123456789';

test('after an erasure, a heap snapshot of the server holds none of the erased strings', async (t) => {
  const dataDir = temporaryDir(t);
  const snapshotDir = temporaryDir(t);
  const { child, url } = await startMain({ DATA_DIR: dataDir, MARKETPLACE_DEMO: '0', MARKETPLACE_ADMIN_TOKEN: TOKEN, WEBHOOK_ALLOW_PRIVATE: '1' }, [
    '--heapsnapshot-signal=SIGUSR2',
    `--diagnostic-dir=${snapshotDir}`,
  ]);
  t.after(() => child.kill('SIGKILL'));
  const unique = `${process.pid}q${Date.now().toString(36)}`;
  const email = `heap.erin.${unique}@example.org`;
  const title = `Heap lamp ${unique}`;
  const admin = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
  /** One request on its own connection, closed after the answer: nothing of it stays open. */
  const call = (method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<{ status: number; body: any }> =>
    new Promise((resolve, reject) => {
      const sent = request(`${url}${path}`, { method, headers: { ...headers, connection: 'close' }, agent: false }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          resolve({ status: response.statusCode!, body: text === '' ? null : JSON.parse(text) });
        });
      });
      sent.on('error', reject);
      sent.end(body === undefined ? undefined : JSON.stringify(body));
    });

  const user = await call('POST', '/admin/v1/users', admin, { name: `Heap Erin ${unique}`, email, role: 'creator' });
  assert.equal(user.status, 201);
  const key = await call('POST', '/admin/v1/keys', admin, { user_id: user.body.data.id, name: `Heap key ${unique}`, permissions: ['read:listings', 'write:listings', 'read:webhooks', 'write:webhooks'] });
  const auth = { authorization: `Bearer ${key.body.data.key}`, 'content-type': 'application/json' };
  const receiver = await startReceiver(t, answer(200));
  const hook = await call('POST', '/v1/webhooks', auth, { url: `${receiver.url}/heap-${unique}`, description: `Heap hook ${unique}` });
  assert.equal(hook.status, 201);
  await waitFor('the ping', () => receiver.received.length === 1);
  const listing = await call('POST', '/v1/listings', auth, { title, description: `Write to ${email}`, type: 'TOOL', price: 2 });
  assert.equal(listing.status, 201);
  assert.equal((await call('GET', `/v1/listings/${listing.body.data.id}`, auth)).status, 200);
  assert.equal((await call('GET', '/v1/listings', auth)).status, 200);
  assert.equal((await call('DELETE', `/admin/v1/users/${user.body.data.id}`, admin)).status, 200);

  const snapshot = await heapSnapshot(child, snapshotDir);

  assert.ok(snapshot.includes(user.body.data.id), 'the snapshot holds the user id (it is a real snapshot of this server)');
  const left = [...snapshot.matchAll(new RegExp(unique, 'g'))].map((match) => snapshot.slice(match.index - 80, match.index + 40));
  assert.deepEqual(left, [], "nothing of hers is in the server's memory");
});
