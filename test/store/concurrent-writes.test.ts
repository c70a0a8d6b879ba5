// Concurrent writes against a real server (port 0, a data dir, real sockets): requests that
// touch the same record at the same moment, many trials each. Whatever the order the server
// chose, the outcome must be that of running the acknowledged requests one at a time: no
// acknowledged change lost, no archive or revocation undone, no operator change overwritten,
// no email taken twice. Slow-body requests show a write is authorized when it commits.
// Not in test:unit (slow: many trials of racing requests); npm test runs it.

import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { test } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.ts';

const TRIALS = 50;
const LISTING_RW = ['read:listings', 'write:listings'];
const USERS_RW = ['read:users', 'write:users'];

test(`operator demotes a user while her own PUT /v1/users/me is in flight: role, name and email stay the operator's (${TRIALS} trials)`, async (t) => {
  const server = await startServer(t);
  for (let trial = 0; trial < TRIALS; trial += 1) {
    const user = await server.createUser({ role: 'creator', name: 'Before', email: `before${trial}@example.com` });
    const { key } = await server.createKey(user.id, { permissions: [...USERS_RW, ...LISTING_RW] });
    const [own, operator] = await Promise.all([
      server.request('PUT', '/v1/users/me', { key, body: { bio: `bio ${trial}` } }),
      server.admin('PATCH', `/admin/v1/users/${user.id}`, { role: 'member', name: `Operator ${trial}`, email: `op${trial}@example.com` }),
    ]);
    assert.equal(operator.status, 200);
    const me = await server.request('GET', '/v1/users/me', { key });
    assert.equal(me.body.data.role, 'member', `trial ${trial}: the demotion stays`);
    assert.equal(me.body.data.name, `Operator ${trial}`, `trial ${trial}: the operator's name stays`);
    assert.equal(me.body.data.email, `op${trial}@example.com`, `trial ${trial}: the operator's email stays`);
    if (own.status === 200) assert.equal(me.body.data.bio, `bio ${trial}`, `trial ${trial}: the user's acknowledged bio is present`);
    else assert.equal(own.status, 401, `trial ${trial}: ${own.status} ${own.text}`);
    const create = await server.request('POST', '/v1/listings', { key, body: { title: 'x', type: 'AGENT', price: 1 } });
    assert.equal(create.status, 403, `trial ${trial}: a member cannot create listings`);
  }
});

test(`a key revoked while a PATCH of it is in flight stays revoked; PATCH of a revoked key → 409 (${TRIALS} trials)`, async (t) => {
  const server = await startServer(t);
  const user = await server.createUser({ role: 'creator' });
  for (let trial = 0; trial < TRIALS; trial += 1) {
    const created = await server.createKey(user.id, { permissions: LISTING_RW });
    const [patch, revoke] = await Promise.all([
      server.admin('PATCH', `/admin/v1/keys/${created.id}`, { rate_limit: 500 + trial, name: `patched ${trial}` }),
      server.admin('DELETE', `/admin/v1/keys/${created.id}`),
    ]);
    assert.equal(revoke.status, 200);
    assert.ok(patch.status === 200 || patch.status === 409, `trial ${trial}: PATCH → ${patch.status} ${patch.text}`);
    const use = await server.request('GET', '/v1/listings', { key: created.key });
    assert.equal(use.status, 401, `trial ${trial}: the revoked key no longer works`);
    const listed = (await server.admin('GET', `/admin/v1/keys?user_id=${user.id}&limit=100`)).body.data.find((key: { id: string }) => key.id === created.id);
    assert.notEqual(listed.revoked_at, null, `trial ${trial}: still revoked`);
    if (patch.status === 200) assert.equal(listed.rate_limit, 500 + trial, `trial ${trial}: the acknowledged PATCH is present`);
    const late = await server.admin('PATCH', `/admin/v1/keys/${created.id}`, { name: 'too late' });
    assert.equal(late.status, 409);
  }
});

test(`archive racing a PUT stays archived; two PUTs of different fields both land (${TRIALS} trials)`, async (t) => {
  const server = await startServer(t);
  const { key } = await server.userWithKey('creator', LISTING_RW);
  for (let trial = 0; trial < TRIALS; trial += 1) {
    const listing = (await server.request('POST', '/v1/listings', { key, body: { title: 'Start', type: 'AGENT', price: 1 } })).body.data;
    const [put, archive] = await Promise.all([
      server.request('PUT', `/v1/listings/${listing.id}`, { key, body: { title: `Put ${trial}` } }),
      server.request('DELETE', `/v1/listings/${listing.id}`, { key }),
    ]);
    assert.equal(archive.status, 200);
    const after = (await server.request('GET', `/v1/listings/${listing.id}`, { key })).body.data;
    assert.equal(after.status, 'archived', `trial ${trial}: the archive is not undone`);
    if (put.status === 200) assert.equal(after.title, `Put ${trial}`, `trial ${trial}: the acknowledged PUT is present`);
    else assert.equal(put.status, 409, `trial ${trial}: ${put.status} ${put.text}`);

    const other = (await server.request('POST', '/v1/listings', { key, body: { title: 'Start', type: 'AGENT', price: 1 } })).body.data;
    const puts = await Promise.all([
      server.request('PUT', `/v1/listings/${other.id}`, { key, body: { title: `Title ${trial}` } }),
      server.request('PUT', `/v1/listings/${other.id}`, { key, body: { price: 100 + trial } }),
      server.request('PUT', `/v1/listings/${other.id}`, { key, body: { tags: [`tag${trial}`] } }),
    ]);
    assert.deepEqual(puts.map((response) => response.status), [200, 200, 200]);
    const merged = (await server.request('GET', `/v1/listings/${other.id}`, { key })).body.data;
    assert.equal(merged.title, `Title ${trial}`, `trial ${trial}: title kept`);
    assert.equal(merged.price, 100 + trial, `trial ${trial}: price kept`);
    assert.deepEqual(merged.tags, [`tag${trial}`], `trial ${trial}: tags kept`);
  }
});

test(`two users taking the same email at the same moment: exactly one succeeds, the other gets 409 (${TRIALS} trials)`, async (t) => {
  const server = await startServer(t);
  const people = await Promise.all([0, 1, 2].map(async () => {
    const user = await server.createUser({ role: 'member' });
    return (await server.createKey(user.id, { permissions: USERS_RW })).key;
  }));
  for (let trial = 0; trial < TRIALS; trial += 1) {
    const email = `shared${trial}@example.com`;
    const answers = await Promise.all([
      ...people.map((key) => server.request('PUT', '/v1/users/me', { key, body: { email } })),
      server.admin('POST', '/admin/v1/users', { name: 'Operator-made', email }),
    ]);
    const won = answers.filter((answer) => answer.status === 200 || answer.status === 201).length;
    assert.equal(won, 1, `trial ${trial}: ${answers.map((answer) => answer.status).join(',')}`);
    assert.ok(answers.every((answer) => answer.status < 300 || answer.status === 409));
    const holders = (await server.admin('GET', '/admin/v1/users?limit=100')).body.data.filter((user: { email: string }) => user.email === email);
    assert.equal(holders.length, 1, `trial ${trial}: one user holds ${email}`);
  }
});

test('a write is authorized when it commits: a key revoked, or losing its permission, while the body is on its way → 401/403, nothing changes', async (t) => {
  const server = await startServer(t);
  const { key, keyId } = await server.userWithKey('creator', LISTING_RW);
  const listing = (await server.request('POST', '/v1/listings', { key, body: { title: 'Start', type: 'AGENT', price: 1 } })).body.data;

  const demoted = await slowRequest(server, 'PUT', `/v1/listings/${listing.id}`, key, { title: 'After losing write' }, async () => {
    const patch = await server.admin('PATCH', `/admin/v1/keys/${keyId}`, { permissions: ['read:listings'] });
    assert.equal(patch.status, 200);
  });
  assert.equal(demoted.status, 403, demoted.text);

  const second = await server.createKey(listing.owner_id, { permissions: LISTING_RW });
  const revoked = await slowRequest(server, 'PUT', `/v1/listings/${listing.id}`, second.key, { title: 'After revocation' }, async () => {
    assert.equal((await server.admin('DELETE', `/admin/v1/keys/${second.id}`)).status, 200);
  });
  assert.equal(revoked.status, 401, revoked.text);

  const reader = await server.userWithKey('member', ['read:listings']);
  const after = (await server.request('GET', `/v1/listings/${listing.id}`, { key: reader.key })).body.data;
  assert.equal(after.title, 'Start', 'neither refused write changed the listing');

  const member = await server.createUser({ role: 'creator', name: 'Mia' });
  const memberKey = (await server.createKey(member.id, { permissions: [...USERS_RW, ...LISTING_RW] })).key;
  const demotedUser = await slowRequest(server, 'PUT', '/v1/users/me', memberKey, { name: 'Mia herself' }, async () => {
    assert.equal((await server.admin('PATCH', `/admin/v1/users/${member.id}`, { role: 'member' })).status, 200);
  });
  assert.ok(demotedUser.status === 200 || demotedUser.status === 403, demotedUser.text);
  const mia = (await server.request('GET', '/v1/users/me', { key: memberKey })).body.data;
  assert.equal(mia.role, 'member', 'the demotion made while the PUT was on its way stays');
  const lateCreate = await slowRequest(server, 'POST', '/v1/listings', memberKey, { title: 'x', type: 'AGENT', price: 1 }, async () => {});
  assert.equal(lateCreate.status, 403);
});

test(`If-Match on PUT/DELETE /v1/listings/:id and PUT /v1/users/me: stale → 412 and nothing changes; * and the current tag pass (${TRIALS} racing trials)`, async (t) => {
  const server = await startServer(t);
  const { key } = await server.userWithKey('creator', [...LISTING_RW, ...USERS_RW]);
  const listing = (await server.request('POST', '/v1/listings', { key, body: { title: 'Start', type: 'AGENT', price: 1 } })).body.data;
  const path = `/v1/listings/${listing.id}`;
  const first = await server.request('GET', path, { key });
  const firstTag = first.headers.get('etag')!;
  const changed = await server.request('PUT', path, { key, body: { price: 2 }, headers: { 'if-match': firstTag } });
  assert.equal(changed.status, 200, changed.text);
  const stale = await server.request('PUT', path, { key, body: { price: 3 }, headers: { 'if-match': firstTag } });
  assert.equal(stale.status, 412, stale.text);
  assert.equal(typeof stale.body.error, 'string');
  assert.ok(stale.body.details, 'a 412 has details');
  const weak = await server.request('PUT', path, { key, body: { price: 3 }, headers: { 'if-match': `W/${(await server.request('GET', path, { key })).headers.get('etag')}` } });
  assert.equal(weak.status, 412, 'a weak tag never matches (strong comparison)');
  assert.equal((await server.request('GET', path, { key })).body.data.price, 2, 'the refused PUTs changed nothing');
  const staleDelete = await server.request('DELETE', path, { key, headers: { 'if-match': firstTag } });
  assert.equal(staleDelete.status, 412);
  assert.equal((await server.request('GET', path, { key })).body.data.status, 'active');
  const currentTag = (await server.request('GET', path, { key })).headers.get('etag')!;
  assert.equal((await server.request('PUT', path, { key, body: { price: 4 }, headers: { 'if-match': `"nope", ${currentTag}` } })).status, 200, 'a list of tags matches when one does');
  assert.equal((await server.request('DELETE', path, { key, headers: { 'if-match': '*' } })).status, 200);
  assert.equal((await server.request('PUT', '/v1/listings/lst_missing', { key, body: { price: 4 }, headers: { 'if-match': '*' } })).status, 404);

  const meTag = (await server.request('GET', '/v1/users/me', { key })).headers.get('etag')!;
  assert.equal((await server.request('PUT', '/v1/users/me', { key, body: { bio: 'one' }, headers: { 'if-match': meTag } })).status, 200);
  const staleMe = await server.request('PUT', '/v1/users/me', { key, body: { bio: 'two' }, headers: { 'if-match': meTag } });
  assert.equal(staleMe.status, 412);
  assert.equal((await server.request('GET', '/v1/users/me', { key })).body.data.bio, 'one');

  // Two writers holding the same tag: exactly one wins, every time.
  for (let trial = 0; trial < TRIALS; trial += 1) {
    const target = (await server.request('POST', '/v1/listings', { key, body: { title: 'Race', type: 'AGENT', price: 1 } })).body.data;
    const tag = (await server.request('GET', `/v1/listings/${target.id}`, { key })).headers.get('etag')!;
    const answers = await Promise.all([10, 20, 30].map((price) => server.request('PUT', `/v1/listings/${target.id}`, { key, body: { price: price + trial }, headers: { 'if-match': tag } })));
    const statuses = answers.map((answer) => answer.status).sort();
    assert.deepEqual(statuses, [200, 412, 412], `trial ${trial}`);
    const winner = answers.find((answer) => answer.status === 200)!;
    assert.equal((await server.request('GET', `/v1/listings/${target.id}`, { key })).body.data.price, winner.body.data.price);
  }
});

/** Sends headers and half the body, runs `meanwhile`, then the rest: the request is decided after it. */
function slowRequest(server: TestServer, method: string, path: string, key: string, body: unknown, meanwhile: () => Promise<void>): Promise<{ status: number; text: string }> {
  const bytes = Buffer.from(JSON.stringify(body));
  const url = new URL(path, server.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': bytes.length } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.flushHeaders();
    req.write(bytes.subarray(0, 1));
    // Long enough for the server to have read the headers and authenticated the key.
    setTimeout(() => {
      meanwhile().then(() => req.end(bytes.subarray(1)), reject);
    }, 100);
  });
}

