// Email uniqueness against addresses that look the same but are other strings: NFC and NFD
// forms of one address are one address (409 on the second, on every route that sets an
// email, and against an address stored before this rule in its NFD form); the domain's case
// does not matter; addresses with invisible characters, characters NFKC would change
// (full-width letters and the like) or a trailing dot in the domain are refused with 400.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { USERS, type UserRecord } from '../../src/domain/records.ts';
import { startServer } from '../helpers/server.ts';

const NFC = 'jos\u00e9@example.com';
const NFD = 'jose\u0301@example.com';

test('the NFC and NFD forms of josé@example.com are one address: the second user to take it gets 409', { timeout: 60_000 }, async (t) => {
  const server = await startServer(t, { dataDir: null });
  assert.notEqual(NFC, NFD);
  const first = await server.admin('POST', '/admin/v1/users', { name: 'José', email: NFC });
  assert.equal(first.status, 201, first.text);
  assert.equal(first.body.data.email, NFC);

  assert.equal((await server.admin('POST', '/admin/v1/users', { name: 'Other', email: NFD })).status, 409);
  const other = await server.userWithKey('member', ['read:users', 'write:users']);
  assert.equal((await server.request('PUT', '/v1/users/me', { key: other.key, body: { email: NFD } })).status, 409);
  assert.equal((await server.admin('PATCH', `/admin/v1/users/${other.userId}`, { email: NFD })).status, 409);
  // The domain's case does not make another address either.
  assert.equal((await server.admin('POST', '/admin/v1/users', { name: 'Other', email: 'jos\u00e9@EXAMPLE.Com' })).status, 409);
  assert.equal((await server.admin('POST', '/admin/v1/users', { name: 'Other', email: 'JOSE\u0301@Example.COM' })).status, 409);

  // Sent in NFD by its own user, an address is kept in NFC: the owner may send it again.
  const nfdUser = await server.admin('POST', '/admin/v1/users', { name: 'Zoë', email: 'zoe\u0308@example.org' });
  assert.equal(nfdUser.status, 201, nfdUser.text);
  assert.equal(nfdUser.body.data.email, 'zo\u00eb@example.org');
  assert.equal((await server.admin('PATCH', `/admin/v1/users/${nfdUser.body.data.id}`, { email: 'zo\u00eb@example.org' })).status, 200);
});

test('an address stored in its NFD form before the rule is found by its normalised form', { timeout: 60_000 }, async (t) => {
  const server = await startServer(t, { dataDir: null });
  const now = new Date().toISOString();
  const stored: UserRecord = { id: 'usr_storednfd0000000000000', name: 'Old', email: NFD, bio: '', website: '', avatar_url: '', role: 'member', created_at: now, updated_at: now };
  await server.app.store.write([{ op: 'put', collection: USERS, id: stored.id, data: stored }]);
  assert.equal((await server.admin('POST', '/admin/v1/users', { name: 'New', email: NFC })).status, 409);
  assert.equal((await server.admin('POST', '/admin/v1/users', { name: 'New', email: NFD })).status, 409);
  // Its owner keeps it.
  assert.equal((await server.admin('PATCH', `/admin/v1/users/${stored.id}`, { email: NFC })).status, 200);
});

test('addresses with invisible or confusable characters, or a trailing dot in the domain, are refused with 400', { timeout: 60_000 }, async (t) => {
  const server = await startServer(t, { dataDir: null });
  assert.equal((await server.admin('POST', '/admin/v1/users', { name: 'José', email: 'jose@example.com' })).status, 201);
  const member = await server.userWithKey('member', ['read:users', 'write:users']);
  const refused = [
    'jo\u200bse@example.com', // zero-width space
    'jose@exam\u200bple.com',
    'jose\u200d@example.com', // zero-width joiner
    'jose\u2060@example.com', // word joiner
    'jo\ufeffse@example.com', // byte-order mark
    'jose\u00ad@example.com', // soft hyphen
    'jose@\u202eexample.com', // right-to-left override
    'jose\u034f@example.com', // combining grapheme joiner
    'jose\u3164@example.com', // Hangul filler
    'jose\u0007@example.com', // a control character
    '\uff4a\uff4f\uff53\uff45@example.com', // full-width letters
    'jose@\uff45\uff58\uff41\uff4d\uff50\uff4c\uff45.com',
    'jose@example\uff0ecom', // full-width full stop
    '\u2460@example.com', // circled digit one
    'jose@example.com.', // trailing dot
    'jose@example..com',
    'jose@.example.com',
  ];
  for (const email of refused) {
    const created = await server.admin('POST', '/admin/v1/users', { name: 'Other', email });
    assert.equal(created.status, 400, `${JSON.stringify(email)}: ${created.status} ${created.text}`);
    assert.ok(created.body.details?.email, created.text);
    const updated = await server.request('PUT', '/v1/users/me', { key: member.key, body: { email } });
    assert.equal(updated.status, 400, `${JSON.stringify(email)} on PUT /v1/users/me: ${updated.status}`);
  }
  // Ordinary addresses, accented ones included, still pass.
  for (const email of ['ana@example.com', 'anaïs@exemple.fr', 'user+tag@sub.example.co.uk', '山田@例え.jp']) {
    const created = await server.admin('POST', '/admin/v1/users', { name: 'Fine', email });
    assert.equal(created.status, 201, `${email}: ${created.text}`);
  }
});
