// The moderation commands of the CLI and the AdminClient's moderation methods, against a real
// server: show, suspend, unsuspend and delete a user (delete asks for --yes), list, remove and
// restore listings, read the audit log and the metrics.

import assert from 'node:assert/strict';
import test from 'node:test';
import { runCli } from '../../src/cli.ts';
import { AdminClient } from '../../src/client/admin-client.ts';
import { MarketplaceApiError } from '../../src/client/errors.ts';
import { ADMIN_TOKEN, startServer } from '../helpers/server.ts';

async function run(argv: string[], url: string) {
  let stdout = '';
  let stderr = '';
  const code = await runCli([...argv, '--url', url, '--token', ADMIN_TOKEN], {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    env: {},
  });
  return { code, stdout, stderr, json: () => JSON.parse(stdout) };
}

test('CLI: users show/suspend/unsuspend/delete, listings list/remove/restore, audit, metrics', async (t) => {
  const server = await startServer(t, { dataDir: null });
  const creator = await server.userWithKey('creator', ['write:listings']);
  const listing = (await server.request('POST', '/v1/listings', { key: creator.key, body: { title: 'CLI listing', type: 'TOOL', price: 2 } })).body.data;

  const shown = await run(['users', 'show', creator.userId], server.url);
  assert.equal(shown.code, 0, shown.stderr);
  assert.equal(shown.json().counts.listings, 1);

  assert.equal((await run(['users', 'suspend', creator.userId], server.url)).code, 2, '--reason is required');
  const suspended = await run(['users', 'suspend', creator.userId, '--reason', 'spam'], server.url);
  assert.equal(suspended.code, 0, suspended.stderr);
  assert.equal(suspended.json().status, 'suspended');
  const again = await run(['users', 'suspend', creator.userId, '--reason', 'spam'], server.url);
  assert.equal(again.code, 1);
  assert.match(again.stderr, /already suspended/);
  assert.equal((await run(['users', 'unsuspend', creator.userId], server.url)).json().status, 'active');

  const listed = await run(['listings', 'list', '--owner-id', creator.userId, '--q', 'cli'], server.url);
  assert.deepEqual(listed.json().data.map((item: { id: string }) => item.id), [listing.id]);
  assert.equal((await run(['listings', 'list', '--status', 'gone'], server.url)).code, 2);
  const removed = await run(['listings', 'remove', listing.id, '--reason', 'off-topic'], server.url);
  assert.equal(removed.json().status, 'removed');
  assert.equal((await run(['listings', 'list', '--status', 'removed'], server.url)).json().data.length, 1);
  assert.equal((await run(['listings', 'restore', listing.id], server.url)).json().status, 'active');

  const refused = await run(['users', 'delete', creator.userId], server.url);
  assert.equal(refused.code, 2);
  assert.match(refused.stderr, /cannot be undone.*--yes/);
  assert.equal((await server.request('GET', '/v1/users/me', { key: creator.key })).status, 403, 'nothing was erased without --yes (the key lacks read:users, but is valid)');
  const erased = await run(['users', 'delete', creator.userId, '--yes'], server.url);
  assert.equal(erased.code, 0, erased.stderr);
  assert.equal(erased.json().status, 'erased');

  const audit = await run(['audit', '--target-id', creator.userId, '--limit', '2'], server.url);
  assert.deepEqual(audit.json().data.map((entry: { action: string }) => entry.action), ['user.erase', 'user.unsuspend']);
  const metrics = await run(['metrics'], server.url);
  assert.equal(metrics.code, 0);
  assert.match(metrics.stdout, /^# HELP marketplace_http_requests_total/m);
});

test('AdminClient: users.get/suspend/unsuspend/erase, listings.list/remove/restore, audit, metrics', async (t) => {
  const server = await startServer(t, { dataDir: null });
  const admin = new AdminClient({ baseUrl: server.url, token: ADMIN_TOKEN });
  const creator = await server.userWithKey('creator', ['write:listings']);
  const listing = (await server.request('POST', '/v1/listings', { key: creator.key, body: { title: 'Client listing', type: 'TOOL', price: 2 } })).body.data;

  assert.equal((await admin.users.get(creator.userId)).counts.listings, 1);
  const suspended = await admin.users.suspend(creator.userId, 'spam');
  assert.equal(suspended.status, 'suspended');
  assert.equal(suspended.suspension_reason, 'spam');
  await assert.rejects(admin.users.suspend(creator.userId, 'again'), (error: unknown) => error instanceof MarketplaceApiError && error.status === 409);
  assert.equal((await admin.users.unsuspend(creator.userId)).status, 'active');

  const removed = await admin.listings.remove(listing.id, 'spam');
  assert.equal(removed.status, 'removed');
  assert.equal(removed.removal_reason, 'spam');
  assert.deepEqual((await admin.listings.list({ status: 'removed' })).data.map((item) => item.id), [listing.id]);
  assert.equal((await admin.listings.restore(listing.id)).status, 'active');

  assert.equal((await admin.users.erase(creator.userId)).status, 'erased');
  const entries = await admin.audit({ target_id: listing.id });
  assert.deepEqual(entries.data.map((entry) => entry.action), ['listing.restore', 'listing.remove']);
  assert.match(await admin.metrics(), /# TYPE marketplace_store_fsync_duration_seconds histogram/);
});
