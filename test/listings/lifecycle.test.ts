// The listing lifecycle and who may do what: creators create, owners update and archive,
// archiving is idempotent, archived listings leave the list but stay readable, PUT on an
// archived listing is 409; Idempotency-Key on POST replays the first answer.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startServer, temporaryDir } from '../helpers/server.ts';

const BODY = { title: 'Code review agent', type: 'AGENT', price: 79 };
const WRITE = ['read:listings', 'write:listings'];

test('the archive lifecycle', async (t) => {
  const server = await startServer(t);
  const { key } = await server.userWithKey('creator', WRITE);
  const listing = (await server.request('POST', '/v1/listings', { key, body: BODY })).body.data;

  const archived = await server.request('DELETE', `/v1/listings/${listing.id}`, { key });
  assert.equal(archived.status, 200);
  assert.equal(archived.body.data.status, 'archived');
  assert.equal(archived.body.data.title, BODY.title);

  const list = await server.request('GET', '/v1/listings', { key });
  assert.equal(list.body.pagination.total, 0, 'archived listings leave GET /v1/listings');
  const one = await server.request('GET', `/v1/listings/${listing.id}`, { key });
  assert.equal(one.status, 200);
  assert.equal(one.body.data.status, 'archived');

  const put = await server.request('PUT', `/v1/listings/${listing.id}`, { key, body: { price: 1 } });
  assert.equal(put.status, 409);
  const again = await server.request('DELETE', `/v1/listings/${listing.id}`, { key });
  assert.equal(again.status, 200);
  assert.deepEqual(again.body.data, archived.body.data, 'DELETE again → 200, unchanged');

  assert.equal((await server.request('GET', '/v1/listings/lst_unknown', { key })).body.error, 'Listing not found');
  assert.equal((await server.request('DELETE', '/v1/listings/lst_unknown', { key })).status, 404);
  assert.equal((await server.request('PUT', '/v1/listings/lst_unknown', { key, body: { price: 1 } })).status, 404);
});

test('ownership and role: another creator gets 403 on PUT and DELETE; a member gets 403 on POST', async (t) => {
  const server = await startServer(t);
  const owner = await server.userWithKey('creator', WRITE);
  const other = await server.userWithKey('creator', WRITE);
  const member = await server.userWithKey('member', WRITE);
  const listing = (await server.request('POST', '/v1/listings', { key: owner.key, body: BODY })).body.data;

  const put = await server.request('PUT', `/v1/listings/${listing.id}`, { key: other.key, body: { price: 1 } });
  assert.equal(put.status, 403);
  assert.match(put.body.error, /owner/);
  const del = await server.request('DELETE', `/v1/listings/${listing.id}`, { key: other.key });
  assert.equal(del.status, 403);
  const post = await server.request('POST', '/v1/listings', { key: member.key, body: BODY });
  assert.equal(post.status, 403);
  assert.match(post.body.error, /creator/);
  // Input is checked before role (contract section 5): a member's bad body is a 400.
  assert.equal((await server.request('POST', '/v1/listings', { key: member.key, body: { price: -1 } })).status, 400);

  const unchanged = await server.request('GET', `/v1/listings/${listing.id}`, { key: owner.key });
  assert.deepEqual(unchanged.body.data, listing);
  assert.equal((await server.request('GET', '/v1/listings', { key: owner.key })).body.pagination.total, 1);
});

// Idempotency-Key is the idempotency module's: these tests load it, also when the others run with none.
const IDEMPOTENT = { MARKETPLACE_MODULES: 'idempotency' };

test('Idempotency-Key: same body → the first answer again, nothing twice; other body → 422; per API key', async (t) => {
  const server = await startServer(t, { env: IDEMPOTENT });
  const { key, userId } = await server.userWithKey('creator', WRITE);
  const headers = { 'idempotency-key': 'create-1' };
  const first = await server.request('POST', '/v1/listings', { key, body: BODY, headers });
  assert.equal(first.status, 201);
  const repeat = await server.request('POST', '/v1/listings', { key, body: BODY, headers });
  assert.equal(repeat.status, 201);
  assert.equal(repeat.text, first.text, 'the same status and body');
  assert.equal((await server.request('GET', '/v1/listings', { key })).body.pagination.total, 1, 'nothing done twice');

  const different = await server.request('POST', '/v1/listings', { key, body: { ...BODY, price: 1 }, headers });
  assert.equal(different.status, 422);
  assert.match(different.body.error, /Idempotency-Key/);

  // Another API key (same user) with the same Idempotency-Key is a different request.
  const secondKey = await server.createKey(userId, { permissions: WRITE });
  const other = await server.request('POST', '/v1/listings', { key: secondKey.key, body: BODY, headers });
  assert.equal(other.status, 201);
  assert.notEqual(other.body.data.id, first.body.data.id);

  const badKey = await server.request('POST', '/v1/listings', { key, body: BODY, headers: { 'idempotency-key': 'x'.repeat(300) } });
  assert.equal(badKey.status, 400);

  // A refused request is not remembered: fixing the body with the same key then works.
  const refused = await server.request('POST', '/v1/listings', { key, body: { ...BODY, price: -1 }, headers: { 'idempotency-key': 'retry-me' } });
  assert.equal(refused.status, 400);
  const fixed = await server.request('POST', '/v1/listings', { key, body: BODY, headers: { 'idempotency-key': 'retry-me' } });
  assert.equal(fixed.status, 201);
});

test('remembered Idempotency-Keys survive a restart', async (t) => {
  const dataDir = temporaryDir(t);
  const first = await startServer(null, { dataDir, env: IDEMPOTENT });
  const { key } = await first.userWithKey('creator', WRITE);
  const created = await first.request('POST', '/v1/listings', { key, body: BODY, headers: { 'idempotency-key': 'restart-1' } });
  await first.close();
  const second = await startServer(t, { dataDir, env: IDEMPOTENT });
  const replay = await second.request('POST', '/v1/listings', { key, body: BODY, headers: { 'idempotency-key': 'restart-1' } });
  assert.equal(replay.status, 201);
  assert.equal(replay.body.data.id, created.body.data.id);
  assert.equal((await second.request('GET', '/v1/listings', { key })).body.pagination.total, 1);
});

test('concurrent repeats of one Idempotency-Key create one listing', async (t) => {
  const server = await startServer(t, { env: IDEMPOTENT });
  const { key } = await server.userWithKey('creator', WRITE);
  const headers = { 'idempotency-key': 'burst' };
  const answers = await Promise.all(Array.from({ length: 5 }, () => server.request('POST', '/v1/listings', { key, body: BODY, headers })));
  for (const answer of answers) assert.ok(answer.status === 201 || answer.status === 409, `${answer.status} ${answer.text}`);
  assert.equal((await server.request('GET', '/v1/listings', { key })).body.pagination.total, 1);
});

test('created listings read back after a restart exactly as their 201 answered, alone or written with an Idempotency-Key record', async (t) => {
  const dataDir = temporaryDir(t);
  const first = await startServer(null, { dataDir, env: IDEMPOTENT });
  const { key } = await first.userWithKey('creator', WRITE);
  // Concurrent, so several share a batch; odd ones carry an Idempotency-Key (two records in one line).
  const bodies = Array.from({ length: 30 }, (_, index) => ({ title: `Listing "${index}" \u2028 é`, type: 'SKILL', price: index + 0.5, tags: [`t${index}`], description: 'x\\y\n' }));
  const created = await Promise.all(
    bodies.map((body, index) => first.request('POST', '/v1/listings', { key, body, headers: index % 2 === 1 ? { 'idempotency-key': `restart-read-${index}` } : {} })),
  );
  for (const answer of created) assert.equal(answer.status, 201, answer.text);
  await first.close();
  const second = await startServer(t, { dataDir, env: IDEMPOTENT });
  for (const [index, answer] of created.entries()) {
    const read = await second.request('GET', `/v1/listings/${answer.body.data.id}`, { key });
    assert.deepEqual(read.body.data, answer.body.data);
    assert.equal(answer.body.data.title, bodies[index]!.title);
    if (index % 2 === 1) {
      const replay = await second.request('POST', '/v1/listings', { key, body: bodies[index], headers: { 'idempotency-key': `restart-read-${index}` } });
      assert.equal(replay.text, answer.text, 'the replay is the first answer, byte for byte');
    }
  }
  assert.equal((await second.request('GET', '/v1/listings', { key })).body.pagination.total, 30);
});
