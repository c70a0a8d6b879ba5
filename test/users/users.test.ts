// The user endpoints: /v1/users/me with email and role, PUT /v1/users/me with each field
// validated, and the public profile that never shows the email.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startServer } from '../helpers/server.ts';

const USERS = ['read:users', 'write:users'];

test('GET /v1/users/me shows email and role; GET /v1/users/:id never shows the email', async (t) => {
  const server = await startServer(t);
  const ada = await server.createUser({ name: 'Ada', role: 'creator', email: 'ada@example.com' });
  const adaKey = (await server.createKey(ada.id, { permissions: USERS })).key;
  const me = await server.request('GET', '/v1/users/me', { key: adaKey });
  assert.equal(me.status, 200);
  assert.equal(me.body.data.email, 'ada@example.com');
  assert.equal(me.body.data.role, 'creator');
  assert.equal(me.body.data.id, ada.id);

  const other = await server.userWithKey('member', USERS);
  const profile = await server.request('GET', `/v1/users/${ada.id}`, { key: other.key });
  assert.equal(profile.status, 200);
  assert.deepEqual(Object.keys(profile.body.data).sort(), ['avatar_url', 'bio', 'created_at', 'id', 'name', 'role', 'website']);
  assert.ok(!profile.text.includes('ada@example.com'));
  const missing = await server.request('GET', '/v1/users/usr_nobody', { key: other.key });
  assert.equal(missing.status, 404);
  assert.equal(missing.body.error, 'User not found');
});

const BAD_PROFILES: Array<[string, Record<string, unknown>, string]> = [
  ['name empty', { name: '  ' }, 'name'],
  ['name of 101 characters', { name: 'x'.repeat(101) }, 'name'],
  ['bio of 501 characters', { bio: 'x'.repeat(501) }, 'bio'],
  ['website not a URL', { website: 'my site' }, 'website'],
  ['website javascript:', { website: 'javascript:alert(1)' }, 'website'],
  ['avatar_url ftp:', { avatar_url: 'ftp://example.com/a.png' }, 'avatar_url'],
  ['avatar_url of 2049 characters', { avatar_url: `https://example.com/${'a'.repeat(2030)}` }, 'avatar_url'],
  ['email without @', { email: 'ada.example.com' }, 'email'],
  ['email a number', { email: 7 }, 'email'],
  ['role (read-only here)', { role: 'creator' }, 'role'],
  ['id (read-only)', { id: 'usr_x' }, 'id'],
  ['unknown field', { twitter: '@ada' }, 'twitter'],
];

test('PUT /v1/users/me validates each field and changes nothing on a 400', async (t) => {
  const server = await startServer(t);
  const { key } = await server.userWithKey('member', USERS);
  const before = (await server.request('GET', '/v1/users/me', { key })).body.data;
  for (const [name, body, field] of BAD_PROFILES) {
    await t.test(name, async () => {
      const response = await server.request('PUT', '/v1/users/me', { key, body });
      assert.equal(response.status, 400, `PUT /v1/users/me ${name} → 400 (${response.status})`);
      assert.ok(field in response.body.details, `${name}: ${response.text}`);
    });
  }
  assert.equal((await server.request('PUT', '/v1/users/me', { key, body: {} })).status, 400);
  const after = (await server.request('GET', '/v1/users/me', { key })).body.data;
  assert.deepEqual(after, before);
});

test('PUT /v1/users/me changes the given fields; a taken email is 409', async (t) => {
  const server = await startServer(t);
  await server.createUser({ email: 'taken@example.com' });
  const { key } = await server.userWithKey('member', USERS);
  const changed = await server.request('PUT', '/v1/users/me', {
    key,
    body: { name: 'Max', bio: 'hello', website: 'https://max.example', avatar_url: 'https://max.example/a.png', email: 'Max@Example.com' },
  });
  assert.equal(changed.status, 200);
  assert.equal(changed.body.data.name, 'Max');
  assert.equal(changed.body.data.email, 'max@example.com');
  assert.equal(changed.body.data.website, 'https://max.example');
  const cleared = await server.request('PUT', '/v1/users/me', { key, body: { website: '' } });
  assert.equal(cleared.body.data.website, '');
  assert.equal(cleared.body.data.bio, 'hello');
  const taken = await server.request('PUT', '/v1/users/me', { key, body: { email: 'taken@example.com' } });
  assert.equal(taken.status, 409);
});

test('users need their own permissions: a listings-only key gets 403 on /v1/users/me', async (t) => {
  const server = await startServer(t);
  const { key } = await server.userWithKey('member', ['read:listings']);
  const response = await server.request('GET', '/v1/users/me', { key });
  assert.equal(response.status, 403);
  assert.deepEqual(response.body.required, ['GET /v1/users/me', 'read:users']);
  const write = await server.userWithKey('member', ['read:users']);
  const put = await server.request('PUT', '/v1/users/me', { key: write.key, body: { name: 'x' } });
  assert.equal(put.status, 403);
  assert.deepEqual(put.body.required, ['PUT /v1/users/me', 'write:users']);
});

test('PUT /v1/users/me cannot clear a set email ("", blanks or null): 400 with the portal\'s message, nothing changes', async (t) => {
  const server = await startServer(t);
  const ada = await server.createUser({ name: 'Ada', email: 'ada.keeps@example.com' });
  const key = (await server.createKey(ada.id, { permissions: USERS })).key;
  const before = (await server.request('GET', '/v1/users/me', { key })).body.data;
  for (const email of ['', '   ', null]) {
    const response = await server.request('PUT', '/v1/users/me', { key, body: { email, bio: 'changed with it' } });
    assert.equal(response.status, 400, `email ${JSON.stringify(email)}: ${response.text}`);
    assert.ok('email' in response.body.details, response.text);
    if (email !== null) assert.match(response.body.error, /email cannot be cleared: it is what you sign in with/);
  }
  assert.deepEqual((await server.request('GET', '/v1/users/me', { key })).body.data, before);
  // Changing it stays allowed.
  assert.equal((await server.request('PUT', '/v1/users/me', { key, body: { email: 'ada.moved@example.com' } })).body.data.email, 'ada.moved@example.com');
});
