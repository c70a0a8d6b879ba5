// A role follows the user: when the operator changes a creator to a member, the portal refuses
// their listing writes from the next request (the role is read as the write commits), and every
// key of theirs loses what a member may never hold (write:listings in any form), in the same
// store write as the role change and audited; renaming or rolling the key does not bring it back.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { signedInUser, type PortalUser } from '../helpers/portal.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

function portal(server: TestServer, user: PortalUser, method: string, path: string, body?: unknown) {
  return server.request(method, `/portal/v1${path}`, { headers: user.headers, body });
}

test('a creator demoted to member: portal and /v1 listing writes 403, keys narrowed (also after rename and roll), audited', async (t) => {
  const server = await startServer(t);
  const ada = await signedInUser(server, { role: 'creator' });
  const listing = (await portal(server, ada, 'POST', '/listings', { title: 'Ada agent', type: 'AGENT', price: 5 })).body.data;
  const made = await portal(server, ada, 'POST', '/keys', { permissions: ['read:listings', 'write:listings', 'PUT /v1/listings/:id', 'write:webhooks'] });
  assert.equal(made.status, 201, made.text);
  const keyId: string = made.body.data.id;
  let secret: string = made.body.data.key;
  const other = await server.createKey(ada.userId, { permissions: ['DELETE /v1/listings/*', 'read:users'] });
  // Before: the key writes.
  assert.equal((await server.request('PUT', `/v1/listings/${listing.id}`, { key: secret, body: { price: 6 } })).status, 200);

  const demoted = await server.admin('PATCH', `/admin/v1/users/${ada.userId}`, { role: 'member' });
  assert.equal(demoted.status, 200, demoted.text);

  // The portal, with the session made while she was a creator.
  const edit = await portal(server, ada, 'PUT', `/listings/${listing.id}`, { price: 7 });
  assert.equal(edit.status, 403, edit.text);
  assert.match(edit.body.error, /creators/);
  assert.equal((await portal(server, ada, 'DELETE', `/listings/${listing.id}`)).status, 403);
  assert.equal((await portal(server, ada, 'POST', '/listings', { title: 'Another', type: 'AGENT', price: 1 })).status, 403);

  // Her keys: narrowed to what a member may hold.
  const keys = (await portal(server, ada, 'GET', '/keys')).body.data;
  const byId = Object.fromEntries(keys.map((key: { id: string; permissions: string[] }) => [key.id, key.permissions]));
  assert.deepEqual(byId[keyId], ['read:listings', 'write:webhooks']);
  assert.deepEqual(byId[other.id], ['read:users']);
  const refused = async () => {
    assert.equal((await server.request('PUT', `/v1/listings/${listing.id}`, { key: secret, body: { price: 8 } })).status, 403);
    assert.equal((await server.request('DELETE', `/v1/listings/${listing.id}`, { key: secret })).status, 403);
    assert.equal((await server.request('DELETE', `/v1/listings/${listing.id}`, { key: other.key })).status, 403);
  };
  await refused();
  assert.equal((await server.request('GET', `/v1/listings/${listing.id}`, { key: secret })).status, 200, 'reads still work');

  // Rename, then roll: neither brings the write back.
  assert.equal((await portal(server, ada, 'PATCH', `/keys/${keyId}`, { name: 'renamed' })).status, 200);
  await refused();
  const rolled = await portal(server, ada, 'POST', `/keys/${keyId}/roll`, { grace_seconds: 0 });
  assert.equal(rolled.status, 201, rolled.text);
  secret = rolled.body.data.key;
  await refused();
  assert.deepEqual(rolled.body.data.permissions, ['read:listings', 'write:webhooks']);

  // The listing is as the last allowed write left it.
  assert.equal((await server.request('GET', `/v1/listings/${listing.id}`, { key: secret })).body.data.price, 6);

  // Audited: the role change, and each key's narrowing with it.
  const userAudit = (await server.admin('GET', `/admin/v1/audit?target_id=${ada.userId}`)).body.data;
  assert.ok(userAudit.some((entry: { action: string; changes: Record<string, unknown> }) => entry.action === 'user.update' && JSON.stringify(entry.changes.role) === JSON.stringify({ from: 'creator', to: 'member' })));
  const keyAudit = (await server.admin('GET', `/admin/v1/audit?target_id=${keyId}&action=key.narrow`)).body.data;
  assert.equal(keyAudit.length, 1, JSON.stringify(keyAudit));
  assert.deepEqual(keyAudit[0].changes.permissions, { from: ['read:listings', 'write:listings', 'PUT /v1/listings/:id', 'write:webhooks'], to: ['read:listings', 'write:webhooks'] });
});

test('a member made creator keeps her keys as they are; a creator staying creator too', async (t) => {
  const server = await startServer(t);
  const bo = await signedInUser(server, { role: 'member' });
  const key = await portal(server, bo, 'POST', '/keys', { permissions: ['read:listings'] });
  assert.equal((await server.admin('PATCH', `/admin/v1/users/${bo.userId}`, { role: 'creator' })).status, 200);
  assert.equal((await server.admin('PATCH', `/admin/v1/users/${bo.userId}`, { role: 'creator', name: 'Bo' })).status, 200);
  const keys = (await portal(server, bo, 'GET', '/keys')).body.data;
  assert.deepEqual(keys[0].permissions, ['read:listings']);
  assert.equal(keys[0].id, key.body.data.id);
  assert.equal((await server.admin('GET', `/admin/v1/audit?action=key.narrow`)).body.data.length, 0);
  // Now a creator, she may edit in the portal.
  assert.equal((await portal(server, bo, 'POST', '/listings', { title: 'Bo agent', type: 'AGENT', price: 1 })).status, 201);
});
