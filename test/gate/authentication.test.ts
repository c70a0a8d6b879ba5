// The first step of the gate over real HTTP: where the key may be sent, every 401 with its
// body, revocation and brand prefixes, and the plain key never reaching DATA_DIR or the log.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { generateApiKey, hashApiKey } from '../../src/auth/keys.ts';
import { KEYS, type KeyRecord } from '../../src/domain/records.ts';
import { startServer, type TestResponse } from '../helpers/server.ts';

function assertUnauthorized(response: TestResponse, label: string): void {
  assert.equal(response.status, 401, `${label}: ${response.text}`);
  assert.match(response.body.error, /missing or invalid/, label);
  assert.match(response.body.hint, /Authorization: Bearer <key>/, label);
  assert.match(response.body.hint, /X-API-Key/, label);
  assert.equal(response.body.request_id, response.headers.get('x-request-id'), label);
  assert.equal(response.headers.get('x-ratelimit-limit'), null, `${label}: no key, no key quota headers`);
}

test('the key is accepted as Bearer in any case, as a raw Authorization, or as X-API-Key', async (t) => {
  const server = await startServer(t);
  const { key } = await server.userWithKey('member', ['read:users']);
  const forms: Array<[string, Record<string, string>]> = [
    ['Bearer', { authorization: `Bearer ${key}` }],
    ['bearer', { authorization: `bearer ${key}` }],
    ['BEARER', { authorization: `BEARER ${key}` }],
    ['BeArEr with extra spaces', { authorization: `BeArEr    ${key}  ` }],
    ['raw Authorization', { authorization: key }],
    ['X-API-Key', { 'x-api-key': key }],
  ];
  for (const [label, headers] of forms) {
    await t.test(label, async () => {
      const response = await server.request('GET', '/v1/users/me', { headers });
      assert.equal(response.status, 200, `${label}: ${response.text}`);
    });
  }
});

test('when both headers are present, Authorization wins', async (t) => {
  const server = await startServer(t);
  const { key } = await server.userWithKey('member', ['read:users']);
  const authorizationGood = await server.request('GET', '/v1/users/me', { headers: { authorization: `Bearer ${key}`, 'x-api-key': 'mk_nonsense' } });
  assert.equal(authorizationGood.status, 200);
  const authorizationBad = await server.request('GET', '/v1/users/me', { headers: { authorization: 'Bearer mk_nonsense', 'x-api-key': key } });
  assertUnauthorized(authorizationBad, 'bad Authorization, good X-API-Key');
  const authorizationEmpty = await server.request('GET', '/v1/users/me', { headers: { authorization: '', 'x-api-key': key } });
  assertUnauthorized(authorizationEmpty, 'empty Authorization, good X-API-Key');
});

test('every 401 case answers with error and hint', async (t) => {
  const server = await startServer(t);
  const { key, keyId } = await server.userWithKey('member', ['read:users', 'read:listings']);
  const last = key.at(-1)!;
  const badChecksum = key.slice(0, -1) + (last === 'A' ? 'B' : 'A');
  const middle = Math.floor(key.length / 2);
  const mistypedMiddle = key.slice(0, middle) + (key[middle] === 'x' ? 'y' : 'x') + key.slice(middle + 1);
  const unknown = generateApiKey('live', 'market').key;
  const otherBrand = generateApiKey('live', 'acme').key;

  const cases: Array<[string, string, Record<string, string>]> = [
    ['missing', '/v1/users/me', {}],
    ['empty Authorization', '/v1/users/me', { authorization: '' }],
    ['Bearer with nothing after it', '/v1/users/me', { authorization: 'Bearer ' }],
    ['empty X-API-Key', '/v1/users/me', { 'x-api-key': '' }],
    ['malformed', '/v1/users/me', { authorization: 'Bearer hello' }],
    ['Basic credentials', '/v1/users/me', { authorization: 'Basic dXNlcjpwYXNz' }],
    ['bad checksum', '/v1/users/me', { authorization: `Bearer ${badChecksum}` }],
    ['one character mistyped', '/v1/users/me', { 'x-api-key': mistypedMiddle }],
    ['unknown (well formed, never issued)', '/v1/users/me', { authorization: `Bearer ${unknown}` }],
    ['another brand', '/v1/users/me', { authorization: `Bearer ${otherBrand}` }],
    ['the key in the query string', `/v1/users/me?api_key=${key}`, {}],
    ['the key in the query string (key=)', `/v1/users/me?key=${key}`, {}],
    ['the key in the query string (access_token=)', `/v1/listings?access_token=${key}`, {}],
    ['unknown /v1 path', '/v1/no/such/thing', {}],
    ['unknown /v1 path, malformed key', '/v1/no/such/thing', { authorization: 'Bearer nope' }],
    ['bare /v1', '/v1', {}],
    ['wrong method on a known path', '/v1/users/me', {}],
  ];
  for (const [label, path, headers] of cases) {
    await t.test(label, async () => {
      const method = label === 'wrong method on a known path' ? 'PATCH' : 'GET';
      assertUnauthorized(await server.request(method, path, { headers }), label);
    });
  }

  // Revoked: refused on known and unknown paths alike.
  assert.equal((await server.request('GET', '/v1/users/me', { key })).status, 200);
  assert.equal((await server.admin('DELETE', `/admin/v1/keys/${keyId}`)).status, 200);
  assertUnauthorized(await server.request('GET', '/v1/users/me', { key }), 'revoked');
  assertUnauthorized(await server.request('GET', '/v1/no/such/thing', { key }), 'revoked, unknown path');
  assertUnauthorized(await server.request('GET', '/v1/users/me', { headers: { 'x-api-key': key } }), 'revoked, X-API-Key');
});

test('revoking a key takes effect on the very next request, though its check is cached', async (t) => {
  const server = await startServer(t);
  const { key, keyId } = await server.userWithKey('member', ['read:listings']);
  for (let index = 0; index < 3; index += 1) assert.equal((await server.request('GET', '/v1/listings', { key })).status, 200);
  const revoked = await server.admin('DELETE', `/admin/v1/keys/${keyId}`);
  assert.equal(revoked.status, 200);
  assert.ok(revoked.body.data.revoked_at);
  assertUnauthorized(await server.request('GET', '/v1/listings', { key }), 'the request right after revoking');
  // Another key of the same user is untouched.
  const user = await server.createUser();
  const other = await server.createKey(user.id, { permissions: ['read:listings'] });
  assert.equal((await server.request('GET', '/v1/listings', { key: other.key })).status, 200);
});

test('a key string refused as unknown (and cached so) works as soon as a key with its hash exists', async (t) => {
  const server = await startServer(t);
  const user = await server.createUser();
  const { key, hash } = generateApiKey('live', 'market');
  for (let index = 0; index < 3; index += 1) assertUnauthorized(await server.request('GET', '/v1/listings', { key }), 'not yet issued');
  // The operator API makes its own key strings, so add the record the way it does: one store write.
  const record: KeyRecord = {
    id: 'key_added_later', user_id: user.id, name: '', prefix: 'market_live_', last_four: key.slice(-4), hash,
    permissions: ['read:listings'], rate_limit: 100, created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z', revoked_at: null,
  };
  await server.app.store.write([{ op: 'put', collection: KEYS, id: record.id, data: record }]);
  assert.equal((await server.request('GET', '/v1/listings', { key })).status, 200);
});

test('MARKETPLACE_BRAND changes the key prefix; mk_ keys work too; the default brand’s keys do not', async (t) => {
  const server = await startServer(t, { env: { MARKETPLACE_BRAND: 'acme' } });
  const user = await server.createUser();
  const live = await server.createKey(user.id, { permissions: ['read:users'] });
  assert.match(live.key, /^acme_live_[0-9A-Za-z]{36}$/);
  assert.equal(live.prefix, 'acme_live_');
  const short = await server.createKey(user.id, { permissions: ['read:users'], prefix: 'mk' });
  assert.match(short.key, /^mk_[0-9A-Za-z]{36}$/);
  assert.equal((await server.request('GET', '/v1/users/me', { key: live.key })).status, 200);
  assert.equal((await server.request('GET', '/v1/users/me', { key: short.key })).status, 200);
  // The same random body under the default brand's prefix is malformed here.
  const disguised = 'market_live_' + live.key.slice('acme_live_'.length);
  assertUnauthorized(await server.request('GET', '/v1/users/me', { key: disguised }), 'default-brand prefix under acme');
});

test('keys made through the operator API have the default prefix and are shown once', async (t) => {
  const server = await startServer(t);
  const user = await server.createUser();
  const made = await server.createKey(user.id);
  assert.match(made.key, /^market_live_[0-9A-Za-z]{36}$/);
  assert.equal(made.last_four, made.key.slice(-4));
  const listed = await server.admin('GET', `/admin/v1/keys?user_id=${user.id}`);
  assert.equal(listed.status, 200);
  assert.equal(listed.body.data.length, 1);
  assert.ok(!listed.text.includes(made.key), 'the key list never shows the key');
  assert.equal(listed.body.data[0].key, undefined);
});

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(join(dir, entry.name)) : [join(dir, entry.name)],
  );
}

test('no plain key ever appears in DATA_DIR files or in the access log after use', async (t) => {
  const output: string[] = [];
  const server = await startServer(t, { output });
  const { key, keyId } = await server.userWithKey('creator', ['read:listings', 'write:listings', 'read:users', 'write:users']);
  const user = await server.createUser();
  const second = await server.createKey(user.id, { prefix: 'mk', permissions: ['read:listings'] });

  // Use the keys every way there is, successfully and not.
  await server.request('GET', '/v1/listings', { key });
  await server.request('GET', '/v1/users/me', { headers: { authorization: key } });
  await server.request('GET', '/v1/users/me', { headers: { 'x-api-key': key } });
  const created = await server.request('POST', '/v1/listings', {
    key,
    body: { title: 'Key-free', type: 'TOOL', price: 1 },
    headers: { 'idempotency-key': 'first-listing' },
  });
  assert.equal(created.status, 201);
  await server.request('PUT', '/v1/users/me', { key, body: { bio: 'nothing secret here' } });
  await server.request('GET', '/v1/no/such/path', { key });
  await server.request('GET', `/v1/listings?api_key=${key}`);
  await server.request('GET', `/v1/users/me?key=${second.key}`);
  await server.request('POST', '/v1/listings', { key: second.key, body: { title: 'x', type: 'TOOL', price: 1 } });
  await server.admin('PATCH', `/admin/v1/keys/${keyId}`, { rate_limit: 50 });
  await server.admin('DELETE', `/admin/v1/keys/${keyId}`);
  await server.request('GET', '/v1/listings', { key });
  await server.close(); // writes the access log's last lines (a fixed 50 ms wait for its 20 ms timer is too tight on a loaded machine)

  const log = output.join('');
  assert.ok(log.includes(keyId), 'the access log names the key by id');
  const files = filesUnder(server.dataDir!);
  assert.ok(files.length > 0);
  const stored = files.map((file) => readFileSync(file, 'latin1')).join('\n');
  assert.ok(stored.includes(hashApiKey(key)), 'the store does keep the hash');
  for (const plain of [key, second.key]) {
    assert.ok(!log.includes(plain), 'the plain key is not in the access log');
    assert.ok(!stored.includes(plain), 'the plain key is not in DATA_DIR');
    // Not even its secret part under another prefix.
    const body = plain.slice(plain.indexOf('_', 3) + 1);
    assert.ok(!log.includes(body) && !stored.includes(body));
  }
});
