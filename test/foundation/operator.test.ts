// The operator API (contract section 2): users and keys come to exist here; the plain key is
// shown once and stored only as a hash; the admin token file is made with mode 0600.

import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { createApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { startServer, temporaryDir } from '../helpers/server.ts';

test('POST /admin/v1/users creates a user (default role member); GET lists them with pagination', async (t) => {
  const server = await startServer(t);
  const created = await server.admin('POST', '/admin/v1/users', { name: 'Ada', email: 'Ada@Example.com', bio: 'builds things' });
  assert.equal(created.status, 201);
  const user = created.body.data;
  assert.match(user.id, /^usr_[A-Za-z0-9]{20}$/);
  assert.equal(user.role, 'member');
  assert.equal(user.email, 'ada@example.com');
  assert.equal(user.bio, 'builds things');
  await server.admin('POST', '/admin/v1/users', { name: 'Grace', role: 'creator' });
  const list = await server.admin('GET', '/admin/v1/users?limit=1&page=2');
  assert.equal(list.status, 200);
  assert.deepEqual(list.body.pagination, { page: 2, limit: 1, total: 2, total_pages: 2 });
  assert.equal(list.body.data[0].name, 'Grace');
});

test('user creation is validated and changes nothing when refused', async (t) => {
  const server = await startServer(t);
  const cases: Array<[string, unknown, string]> = [
    ['no name', { role: 'creator' }, 'name'],
    ['bad role', { name: 'x', role: 'admin' }, 'role'],
    ['bad email', { name: 'x', email: 'not-an-email' }, 'email'],
    ['read-only id', { name: 'x', id: 'usr_mine' }, 'id'],
    ['unknown field', { name: 'x', is_admin: true }, 'is_admin'],
  ];
  for (const [name, body, field] of cases) {
    await t.test(name, async () => {
      const response = await server.admin('POST', '/admin/v1/users', body);
      assert.equal(response.status, 400, name);
      assert.ok(field in response.body.details, `${name}: details name ${field}`);
    });
  }
  await server.admin('POST', '/admin/v1/users', { name: 'Ada', email: 'ada@example.com' });
  const duplicate = await server.admin('POST', '/admin/v1/users', { name: 'Other', email: 'ada@example.com' });
  assert.equal(duplicate.status, 409);
  assert.equal((await server.admin('GET', '/admin/v1/users')).body.pagination.total, 1);
});

test('PATCH /admin/v1/users/:id changes the role; unknown id is 404', async (t) => {
  const server = await startServer(t);
  const user = await server.createUser({ role: 'member' });
  const patched = await server.admin('PATCH', `/admin/v1/users/${user.id}`, { role: 'creator' });
  assert.equal(patched.status, 200);
  assert.equal(patched.body.data.role, 'creator');
  const missing = await server.admin('PATCH', '/admin/v1/users/usr_nobody', { role: 'creator' });
  assert.equal(missing.status, 404);
  assert.equal(missing.body.error, 'User not found');
  const empty = await server.admin('PATCH', `/admin/v1/users/${user.id}`, {});
  assert.equal(empty.status, 400);
});

test('POST /admin/v1/keys: defaults, the key shown once, the format with prefix and checksum', async (t) => {
  const server = await startServer(t);
  const user = await server.createUser();
  const created = await server.admin('POST', '/admin/v1/keys', { user_id: user.id, name: 'browse' });
  assert.equal(created.status, 201);
  const key = created.body.data;
  assert.match(key.key, /^market_live_[A-Za-z0-9]{36}$/);
  assert.deepEqual(key.permissions, ['read:listings']);
  assert.equal(key.rate_limit, 100);
  assert.equal(key.prefix, 'market_live_');
  assert.equal(key.user_id, user.id);
  assert.match(key.id, /^key_/);
  const mk = await server.admin('POST', '/admin/v1/keys', { user_id: user.id, prefix: 'mk' });
  assert.match(mk.body.data.key, /^mk_[A-Za-z0-9]{36}$/);
  // Listing and revoking never show the key again.
  const list = await server.admin('GET', `/admin/v1/keys?user_id=${user.id}`);
  assert.equal(list.body.pagination.total, 2);
  assert.ok(!list.text.includes(key.key));
  assert.ok(list.body.data.every((entry: Record<string, unknown>) => !('key' in entry) && !('hash' in entry)));
  // The key works.
  const listings = await server.request('GET', '/v1/listings', { key: key.key });
  assert.equal(listings.status, 200);
});

test('key creation is validated: unknown user, bad permission entries, rate_limit range', async (t) => {
  const server = await startServer(t);
  const user = await server.createUser();
  const cases: Array<[string, unknown, string]> = [
    ['unknown user', { user_id: 'usr_nobody' }, 'user_id'],
    ['permission of no known shape', { user_id: user.id, permissions: ['everything'] }, 'permissions'],
    ['unknown resource scope', { user_id: user.id, permissions: ['read:secrets'] }, 'permissions'],
    ['permissions not a list', { user_id: user.id, permissions: 'read:listings' }, 'permissions'],
    ['rate_limit zero', { user_id: user.id, rate_limit: 0 }, 'rate_limit'],
    ['rate_limit too high', { user_id: user.id, rate_limit: 1_000_001 }, 'rate_limit'],
    ['rate_limit fractional', { user_id: user.id, rate_limit: 1.5 }, 'rate_limit'],
    ['bad prefix', { user_id: user.id, prefix: 'test' }, 'prefix'],
  ];
  for (const [name, body, field] of cases) {
    await t.test(name, async () => {
      const response = await server.admin('POST', '/admin/v1/keys', body);
      assert.equal(response.status, 400, name);
      assert.ok(field in response.body.details, `${name}: ${response.text}`);
    });
  }
  assert.equal((await server.admin('GET', '/admin/v1/keys')).body.pagination.total, 0);
});

test('PATCH and DELETE /admin/v1/keys/:id: change, revoke (idempotent), 409 on changing a revoked key', async (t) => {
  const server = await startServer(t);
  const user = await server.createUser();
  const key = await server.createKey(user.id);
  const patched = await server.admin('PATCH', `/admin/v1/keys/${key.id}`, { rate_limit: 5000, name: 'pro' });
  assert.equal(patched.status, 200);
  assert.equal(patched.body.data.rate_limit, 5000);
  const revoked = await server.admin('DELETE', `/admin/v1/keys/${key.id}`);
  assert.equal(revoked.status, 200);
  assert.ok(revoked.body.data.revoked_at);
  const again = await server.admin('DELETE', `/admin/v1/keys/${key.id}`);
  assert.equal(again.status, 200);
  assert.equal(again.body.data.revoked_at, revoked.body.data.revoked_at);
  assert.equal((await server.admin('PATCH', `/admin/v1/keys/${key.id}`, { rate_limit: 1 })).status, 409);
  assert.equal((await server.admin('DELETE', '/admin/v1/keys/key_nothing')).status, 404);
  assert.equal((await server.request('GET', '/v1/listings', { key: key.key })).status, 401);
});

test('the plain key never reaches DATA_DIR or the log output; data files are mode 0600', async (t) => {
  const output: string[] = [];
  const server = await startServer(t, { output });
  const user = await server.createUser({ role: 'creator' });
  const key = await server.createKey(user.id, { permissions: ['read:listings', 'write:listings'] });
  await server.request('GET', '/v1/listings', { key: key.key });
  await server.request('POST', '/v1/listings', { key: key.key, body: { title: 'x', type: 'TOOL', price: 1 } });
  await server.request('GET', '/v1/listings', { headers: { 'x-api-key': key.key } });
  await server.close(); // writes the access log's last lines (a 10 ms wait was shorter than its 20 ms timer)
  assert.ok(output.join('').includes('"route":"GET /v1/listings"'), 'the access log was written');
  assert.ok(!output.join('').includes(key.key));
  for (const name of readdirSync(server.dataDir!)) {
    const file = join(server.dataDir!, name);
    assert.ok(!readFileSync(file, 'utf8').includes(key.key), `${name} holds no plain key`);
    assert.equal(statSync(file).mode & 0o777, 0o600, `${name} is 0600`);
  }
});

test('without MARKETPLACE_ADMIN_TOKEN a token is made once, kept in DATA_DIR/admin-token (0600), and reused', async (t) => {
  const dataDir = temporaryDir(t);
  const config = loadConfig({ PORT: '0', DATA_DIR: dataDir, MARKETPLACE_DEMO: '0', ACCESS_LOG: '0' });
  const first = await createApp({ config, writeErr: () => {} });
  await first.close();
  assert.equal(first.operatorTokenCreated, true);
  const file = join(dataDir, 'admin-token');
  assert.equal(statSync(file).mode & 0o777, 0o600);
  assert.equal(readFileSync(file, 'utf8').trim(), first.operatorToken);
  const second = await createApp({ config, writeErr: () => {} });
  await second.close();
  assert.equal(second.operatorToken, first.operatorToken);
  assert.equal(second.operatorTokenCreated, false);
});

test('stats, compaction and backup through the operator API', async (t) => {
  const server = await startServer(t);
  const user = await server.createUser();
  for (let round = 0; round < 5; round += 1) await server.admin('PATCH', `/admin/v1/users/${user.id}`, { bio: `round ${round}` });
  const stats = await server.admin('GET', '/admin/v1/stats');
  assert.equal(stats.status, 200);
  assert.equal(stats.body.data.users, 1);
  assert.ok(stats.body.data.store.fsyncs >= 6);
  const compacted = await server.admin('POST', '/admin/v1/compact');
  assert.equal(compacted.status, 200);
  assert.ok(compacted.body.data.bytes_after < compacted.body.data.bytes_before);
  const backup = await server.admin('GET', '/admin/v1/backup');
  assert.equal(backup.status, 200);
  assert.match(backup.headers.get('content-type')!, /application\/x-ndjson/);
  const lines = backup.text.trim().split('\n').map((line) => JSON.parse(line));
  assert.equal(lines[0].format, 'marketplace-api-log');
  // One line per live record: the user's latest bio only (the audit entries keep each edit's from/to).
  const userLines = lines.filter((line) => line.c === 'users' && line.id === user.id);
  assert.equal(userLines.length, 1);
  assert.equal(userLines[0].d.bio, 'round 4');
});
