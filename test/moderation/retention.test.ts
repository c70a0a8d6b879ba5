// What the server keeps only for a while, against a real server whose clock the test moves
// (no sleeps): audit entries older than AUDIT_RETENTION_DAYS leave the audit log, keys revoked
// or expired longer than ENDED_KEY_RETENTION_DAYS ago leave the key list while working keys
// stay, and past IDEMPOTENCY_MAX_RECORDS the oldest Idempotency-Key answers are forgotten first.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DAY_MS } from '../../src/analytics/buckets.ts';
import { ManualClock } from '../../src/clock.ts';
import { IDEMPOTENCY } from '../../src/domain/records.ts';
import { startServer } from '../helpers/server.ts';

const START = Date.UTC(2026, 2, 1, 12);

test('audit entries older than AUDIT_RETENTION_DAYS are dropped; newer ones stay', { timeout: 60_000 }, async (t) => {
  const clock = new ManualClock(START);
  const server = await startServer(t, { clock, env: { AUDIT_RETENTION_DAYS: '2' } });
  const old = await server.createUser({ name: 'Made three days ago' });
  clock.advance(3 * DAY_MS);
  const recent = await server.createUser({ name: 'Made today' });
  const targets = async () => (await server.admin('GET', '/admin/v1/audit?limit=100')).body.data.map((entry: { target_id: string }) => entry.target_id);
  assert.ok((await targets()).includes(old.id));

  await server.app.sweepRecords();
  const kept = await targets();
  assert.ok(!kept.includes(old.id), 'the entry three days old is gone');
  assert.ok(kept.includes(recent.id), "today's entry stays");
});

test('keys revoked or expired longer than ENDED_KEY_RETENTION_DAYS ago are dropped; working and recently ended ones stay', { timeout: 60_000 }, async (t) => {
  const clock = new ManualClock(START);
  const server = await startServer(t, { clock, env: { ENDED_KEY_RETENTION_DAYS: '2' } });
  const user = await server.createUser();
  const revokedLongAgo = await server.createKey(user.id, { name: 'revoked long ago' });
  const expiredLongAgo = await server.admin('POST', '/admin/v1/keys', { user_id: user.id, name: 'expired long ago', expires_at: new Date(START + DAY_MS).toISOString() });
  assert.equal(expiredLongAgo.status, 201);
  const working = await server.createKey(user.id, { name: 'working' });
  assert.equal((await server.admin('DELETE', `/admin/v1/keys/${revokedLongAgo.id}`)).status, 200);
  clock.advance(4 * DAY_MS);
  const revokedToday = await server.createKey(user.id, { name: 'revoked today' });
  assert.equal((await server.admin('DELETE', `/admin/v1/keys/${revokedToday.id}`)).status, 200);

  await server.app.sweepRecords();
  const names = (await server.admin('GET', `/admin/v1/keys?user_id=${user.id}&limit=100`)).body.data.map((key: { name: string }) => key.name).sort();
  assert.deepEqual(names, ['revoked today', 'working']);
  assert.equal((await server.request('GET', '/v1/listings', { key: working.key })).status, 200);
  assert.equal((await server.request('GET', '/v1/listings', { key: revokedLongAgo.key })).status, 401);
});

test('past IDEMPOTENCY_MAX_RECORDS the oldest answers are forgotten first; the newest still replay', { timeout: 60_000 }, async (t) => {
  const clock = new ManualClock(START);
  const server = await startServer(t, { clock, env: { IDEMPOTENCY_MAX_RECORDS: '5' } });
  const { key } = await server.userWithKey('creator', ['read:listings', 'write:listings']);
  const create = (index: number) =>
    server.request('POST', '/v1/listings', { key, headers: { 'Idempotency-Key': `create-${index}` }, body: { title: `Listing ${index}`, type: 'TOOL', price: 1 } });
  const firstIds: string[] = [];
  for (let index = 0; index < 8; index += 1) {
    const created = await create(index);
    assert.equal(created.status, 201);
    firstIds.push(created.body.data.id);
    clock.advance(1_000);
  }
  await server.app.sweepRecords();
  assert.equal(server.app.store.size(IDEMPOTENCY), 5);

  const newest = await create(7);
  assert.equal(newest.headers.get('idempotent-replayed'), 'true');
  assert.equal(newest.body.data.id, firstIds[7]);
  const oldest = await create(0);
  assert.equal(oldest.status, 201);
  assert.equal(oldest.headers.get('idempotent-replayed'), null, 'forgotten: the request is made again');
  assert.notEqual(oldest.body.data.id, firstIds[0]);
});
