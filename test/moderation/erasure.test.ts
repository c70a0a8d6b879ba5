// DELETE /admin/v1/users/:id erases a user: keys revoked, webhooks removed, listings removed,
// personal fields erased, the public profile gone, and, checked byte by byte in every file
// under DATA_DIR as soon as the answer arrives, none of the erased strings left anywhere:
// not in the log's old lines, pending webhook deliveries, stored replies, analytics or audit.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import { DELIVERY_OUTCOME_ENTRIES } from '../../src/domain/records.ts';
import { startServer } from '../helpers/server.ts';
import { startReceiver, waitFor } from '../webhooks/fixtures.ts';

const EVERYTHING = ['read:listings', 'write:listings', 'read:users', 'write:users', 'read:webhooks', 'write:webhooks', 'read:analytics'];

/** Every regular file under `dir`, recursively. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

/** The files (and the string) where any of `needles` still appears. */
function occurrences(dir: string, needles: readonly string[]): string[] {
  const found: string[] = [];
  for (const file of filesUnder(dir)) {
    const bytes = readFileSync(file);
    for (const needle of needles) if (bytes.includes(Buffer.from(needle))) found.push(`${file}: ${needle}`);
  }
  return found;
}

test('DELETE /admin/v1/users/:id: after the answer no byte of the erased data is in any file of DATA_DIR', async (t) => {
  const server = await startServer(t, { env: { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_DELAYS_MS: '3600000' } });
  const dataDir = server.dataDir!;
  const unique = `${process.pid}${Date.now().toString(36)}`;
  const personal = {
    name: `Erin Erasable ${unique}`,
    email: `erin.${unique}@example.org`,
    bio: `Bio that must vanish ${unique}`,
    website: `https://erin-${unique}.example.org/home`,
    avatar_url: `https://cdn.example.org/avatars/erin-${unique}.png`,
  };
  const oldName = `Erin Before ${unique}`;
  const created = await server.admin('POST', '/admin/v1/users', { name: oldName, email: personal.email, role: 'creator', bio: personal.bio });
  assert.equal(created.status, 201, created.text);
  const userId: string = created.body.data.id;
  const key = await server.createKey(userId, { permissions: EVERYTHING });
  const other = await server.userWithKey('member', ['read:listings', 'read:users']);

  // A webhook whose receiver fails: the user.updated deliveries below stay pending, their
  // payloads holding the profile.
  const receiver = await startReceiver(t, (_request, response) => {
    response.writeHead(500);
    response.end();
  });
  const hook = await server.request('POST', '/v1/webhooks', { key: key.key, body: { url: receiver.url, description: 'mine' }, headers: { 'idempotency-key': `hook-${unique}` } });
  assert.equal(hook.status, 201, hook.text);
  const listing = await server.request('POST', '/v1/listings', { key: key.key, body: { title: 'Erased owner listing', type: 'TOOL', price: 3 }, headers: { 'idempotency-key': `listing-${unique}` } });
  assert.equal(listing.status, 201);
  // The operator's edit is audited with from/to; the user's own edit sets the other fields.
  assert.equal((await server.admin('PATCH', `/admin/v1/users/${userId}`, { name: personal.name })).status, 200);
  const own = await server.request('PUT', '/v1/users/me', { key: key.key, body: { website: personal.website, avatar_url: personal.avatar_url } });
  assert.equal(own.status, 200, own.text);
  assert.equal((await server.request('GET', `/v1/users/${userId}`, { key: other.key })).status, 200);
  await server.request('GET', '/v1/analytics/usage', { key: key.key });
  await waitFor('a failed delivery attempt', () => receiver.received.length >= 1);
  const outcomesOfHook = () => [...server.app.store.values(DELIVERY_OUTCOME_ENTRIES)].filter((entry) => entry.id.startsWith(`${hook.body.data.id}.`));
  await waitFor("the attempt's outcome recorded", () => outcomesOfHook().length >= 1);

  const needles = [...Object.values(personal), oldName];
  assert.ok(occurrences(dataDir, needles).length > 0, 'the data is on disk before the erasure (the test can see it)');

  const erased = await server.admin('DELETE', `/admin/v1/users/${userId}`);
  assert.equal(erased.status, 200, erased.text);
  // Checked at once, before anything else runs against the server.
  assert.deepEqual(occurrences(dataDir, needles), [], 'no erased string remains in DATA_DIR');

  assert.equal(erased.body.data.status, 'erased');
  for (const field of Object.keys(personal)) assert.equal(erased.body.data[field], '', `${field} erased`);
  assert.equal((await server.request('GET', `/v1/users/${userId}`, { key: other.key })).status, 404);
  assert.equal((await server.request('GET', '/v1/users/me', { key: key.key })).status, 401, 'its keys are revoked');
  const keys = await server.admin('GET', `/admin/v1/keys?user_id=${userId}`);
  assert.ok(keys.body.data.every((record: { revoked_at: string | null }) => record.revoked_at !== null));
  const webhooks = await server.admin('GET', `/admin/v1/webhooks?user_id=${userId}`);
  assert.deepEqual(webhooks.body.data, []);
  assert.deepEqual(outcomesOfHook(), [], "the webhook's delivery outcomes went with it");
  const listings = await server.admin('GET', `/admin/v1/listings?owner_id=${userId}`);
  assert.deepEqual(listings.body.data.map((record: { status: string }) => record.status), ['removed']);
  assert.equal((await server.request('GET', `/v1/listings/${listing.body.data.id}`, { key: other.key })).status, 404);
  const shown = await server.admin('GET', `/admin/v1/users/${userId}`);
  assert.equal(shown.body.data.status, 'erased');
  assert.deepEqual(shown.body.data.counts, { listings: 1, keys: 1, active_keys: 0, webhooks: 0 });
  const audit = await server.admin('GET', `/admin/v1/audit?target_id=${userId}`);
  assert.deepEqual(audit.body.data.map((entry: { action: string }) => entry.action), ['user.erase', 'user.update', 'user.create']);
  assert.deepEqual(audit.body.data[1].changes, { name: '[erased]' });
  assert.equal(audit.body.data[0].changes.keys_revoked, 1);
  assert.equal(audit.body.data[0].changes.webhooks_removed, 1);
  assert.equal(audit.body.data[0].changes.listings_removed, 1);

  // The email is free again, and a second DELETE answers the same without a new entry.
  assert.equal((await server.admin('POST', '/admin/v1/users', { name: 'Someone', email: personal.email })).status, 201);
  const again = await server.admin('DELETE', `/admin/v1/users/${userId}`);
  assert.equal(again.status, 200);
  assert.equal((await server.admin('GET', `/admin/v1/audit?target_id=${userId}`)).body.pagination.total, 3);
  assert.equal((await server.admin('PATCH', `/admin/v1/users/${userId}`, { name: 'Back' })).status, 404, 'an erased user cannot be edited');
  assert.equal((await server.admin('POST', `/admin/v1/users/${userId}/suspend`, { reason: 'x' })).status, 404);
  assert.equal((await server.admin('POST', '/admin/v1/keys', { user_id: userId })).status, 400, 'no new key for an erased user');
  assert.equal((await server.admin('DELETE', '/admin/v1/users/usr_nobody')).status, 404);
});

test('erasure survives a restart: the reloaded store has the erased user and none of the data', async (t) => {
  const first = await startServer(null, { dataDir: (await import('../helpers/server.ts')).temporaryDir(t) });
  const dataDir = first.dataDir!;
  const secret = `Restart Name ${Date.now()}`;
  const user = await first.createUser({ name: secret });
  assert.equal((await first.admin('DELETE', `/admin/v1/users/${user.id}`)).status, 200);
  await first.close();
  assert.deepEqual(occurrences(dataDir, [secret]), []);
  const second = await startServer(t, { dataDir });
  const shown = await second.admin('GET', `/admin/v1/users/${user.id}`);
  assert.equal(shown.body.data.status, 'erased');
  assert.equal(shown.body.data.name, '');
});
