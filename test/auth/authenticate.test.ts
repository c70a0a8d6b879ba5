// Finding the caller: which header carries the key, refusing malformed keys without a look-up,
// and a check cache that never outlives a revocation or hides a newly made key.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KeyAuthenticator, presentedKey } from '../../src/auth/authenticate.ts';
import { generateApiKey, hashApiKey } from '../../src/auth/keys.ts';
import { ManualClock } from '../../src/clock.ts';
import { KEYS, USERS, type KeyRecord, type UserRecord } from '../../src/domain/records.ts';
import type { ChangeEvent, Store } from '../../src/store/store.ts';

test('presentedKey: Bearer in any case, a raw Authorization, or X-API-Key; Authorization wins', async (t) => {
  const cases: Array<[Record<string, string>, string | null]> = [
    [{ authorization: 'Bearer mk_abc' }, 'mk_abc'],
    [{ authorization: 'bearer mk_abc' }, 'mk_abc'],
    [{ authorization: 'BEARER mk_abc' }, 'mk_abc'],
    [{ authorization: 'BeArEr \t  mk_abc  ' }, 'mk_abc'],
    [{ authorization: 'mk_abc' }, 'mk_abc'],
    [{ authorization: '  mk_abc ' }, 'mk_abc'],
    [{ 'x-api-key': 'mk_abc' }, 'mk_abc'],
    [{ 'x-api-key': ' mk_abc ' }, 'mk_abc'],
    [{ authorization: 'Bearer mk_first', 'x-api-key': 'mk_second' }, 'mk_first'],
    [{ authorization: 'mk_first', 'x-api-key': 'mk_second' }, 'mk_first'],
    [{ authorization: '', 'x-api-key': 'mk_second' }, ''],
    [{ authorization: 'Basic dXNlcjpwYXNz' }, 'Basic dXNlcjpwYXNz'],
    [{}, null],
  ];
  for (const [headers, expected] of cases) {
    await t.test(JSON.stringify(headers), async () => {
      assert.equal(presentedKey(headers), expected, JSON.stringify(headers));
    });
  }
});

/** A store holding one user and the given keys, counting look-ups, with change events on demand. */
function fakeStore(keys: KeyRecord[]) {
  const user: UserRecord = {
    id: 'usr_1', name: 'A', email: '', bio: '', website: '', avatar_url: '', role: 'member',
    created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z',
  };
  const records = new Map<string, KeyRecord>(keys.map((key) => [key.id, key]));
  const listeners: Array<(change: ChangeEvent) => void> = [];
  const fake = {
    lookups: 0,
    values: (collection: string) => (collection === KEYS ? records.values() : [].values()),
    get(collection: string, id: string) {
      fake.lookups += 1;
      if (collection === USERS) return id === user.id ? user : undefined;
      return records.get(id);
    },
    onChange(listener: (change: ChangeEvent) => void) {
      listeners.push(listener);
    },
    /** Applies a change as the real store does: memory first, then listeners. */
    put(key: KeyRecord) {
      const before = records.get(key.id);
      records.set(key.id, key);
      for (const listener of listeners) listener({ collection: KEYS, id: key.id, before, after: key });
    },
  };
  return fake;
}

function keyRecord(id: string, hash: string, overrides: Partial<KeyRecord> = {}): KeyRecord {
  return {
    id, user_id: 'usr_1', name: '', prefix: 'market_live_', last_four: 'xxxx', hash, permissions: ['read:listings'],
    rate_limit: 100, created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z', revoked_at: null,
    ...overrides,
  };
}

test('a key with a mistyped character is refused before any look-up, even if its hash were stored', () => {
  const { key } = generateApiKey('live', 'market');
  const last = key.at(-1)!;
  const typo = key.slice(0, -1) + (last === 'A' ? 'B' : 'A');
  // A store that *would* find the typo by its hash: only the checksum stands in the way.
  const store = fakeStore([keyRecord('key_typo', hashApiKey(typo))]);
  const authenticator = new KeyAuthenticator(store as unknown as Store, 'market', () => 0);
  assert.equal(authenticator.authenticate(typo), null);
  assert.equal(authenticator.authenticate('not a key at all'), null);
  assert.equal(authenticator.authenticate(''), null);
  assert.equal(authenticator.authenticate(null), null);
  assert.equal(store.lookups, 0);
});

test('a known key resolves to its record and user; revoking or changing it counts on the very next check', () => {
  const clock = new ManualClock();
  const { key, hash } = generateApiKey('live', 'market');
  const store = fakeStore([keyRecord('key_1', hash)]);
  const authenticator = new KeyAuthenticator(store as unknown as Store, 'market', () => clock.monotonic());
  store.onChange((change) => authenticator.onStoreChange(change)); // as app.ts wires it
  const caller = authenticator.authenticate(key);
  assert.equal(caller?.key.id, 'key_1');
  assert.equal(caller?.user.id, 'usr_1');

  store.put(keyRecord('key_1', hash, { permissions: ['read:users'], rate_limit: 5 }));
  const changed = authenticator.authenticate(key);
  assert.deepEqual(changed?.key.permissions, ['read:users']);
  assert.equal(changed?.key.rate_limit, 5);

  store.put(keyRecord('key_1', hash, { revoked_at: '2026-01-01T00:00:01.000Z' }));
  assert.equal(authenticator.authenticate(key), null, 'revoked: refused at once, though the check is cached');
});

test('a cached miss does not hide a key made afterwards', () => {
  const clock = new ManualClock();
  const store = fakeStore([]);
  const authenticator = new KeyAuthenticator(store as unknown as Store, 'market', () => clock.monotonic());
  store.onChange((change) => authenticator.onStoreChange(change)); // as app.ts wires it
  const { key, hash } = generateApiKey('mk', 'market');
  assert.equal(authenticator.authenticate(key), null); // cached as unknown
  store.put(keyRecord('key_new', hash));
  assert.equal(authenticator.authenticate(key)?.key.id, 'key_new');
});

test('keys of another brand are malformed; mk_ keys work under any brand', () => {
  const acme = generateApiKey('live', 'acme');
  const short = generateApiKey('mk', 'acme');
  const store = fakeStore([keyRecord('key_acme', acme.hash), keyRecord('key_mk', short.hash)]);
  const forAcme = new KeyAuthenticator(store as unknown as Store, 'acme', () => 0);
  assert.equal(forAcme.authenticate(acme.key)?.key.id, 'key_acme');
  assert.equal(forAcme.authenticate(short.key)?.key.id, 'key_mk');
  const forMarket = new KeyAuthenticator(store as unknown as Store, 'market', () => 0);
  assert.equal(forMarket.authenticate(acme.key), null);
  assert.equal(forMarket.authenticate(short.key)?.key.id, 'key_mk');
});

test('a key under the longest brand (20 characters) is found; anything longer is refused unhashed', () => {
  const longest = generateApiKey('live', 'abcdefghijklmnopqrst');
  const store = fakeStore([keyRecord('key_long', longest.hash)]);
  const authenticator = new KeyAuthenticator(store as unknown as Store, 'abcdefghijklmnopqrst', () => 0);
  assert.equal(authenticator.authenticate(longest.key)?.key.id, 'key_long');
  assert.equal(authenticator.authenticate(`${longest.key}x`), null);
  assert.equal(authenticator.authenticate('x'.repeat(16_000)), null);
});

test('an expiring key works until its expires_at and is refused from that instant, though its check is cached', () => {
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const { key, hash } = generateApiKey('live', 'market');
  const store = fakeStore([keyRecord('key_1', hash, { expires_at: '2026-01-01T00:00:10.000Z' })]);
  const authenticator = new KeyAuthenticator(store as unknown as Store, 'market', () => clock.monotonic(), () => clock.now());
  assert.equal(authenticator.authenticate(key)?.key.id, 'key_1');
  clock.jumpWall(9_999);
  assert.equal(authenticator.authenticate(key)?.key.id, 'key_1', 'one millisecond before expiry');
  clock.jumpWall(1);
  assert.equal(authenticator.authenticate(key), null, 'at expires_at: refused');
  assert.deepEqual(authenticator.refusalOf(key), { reason: 'expired', at: '2026-01-01T00:00:10.000Z' });
});

test('a rolled key: the new secret works at once, the previous one until its grace ends, then only the new', () => {
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const old = generateApiKey('live', 'market');
  const store = fakeStore([keyRecord('key_1', old.hash)]);
  const authenticator = new KeyAuthenticator(store as unknown as Store, 'market', () => clock.monotonic(), () => clock.now());
  store.onChange((change) => authenticator.onStoreChange(change)); // as app.ts wires it
  const fresh = generateApiKey('live', 'market');
  assert.equal(authenticator.authenticate(fresh.key), null, 'the new secret, before the roll: unknown (and cached so)');
  assert.equal(authenticator.authenticate(old.key)?.key.id, 'key_1');

  store.put(keyRecord('key_1', fresh.hash, { previous_hash: old.hash, previous_hash_expires_at: '2026-01-01T00:01:00.000Z' }));
  assert.equal(authenticator.authenticate(fresh.key)?.key.id, 'key_1', 'the new secret works at once, though it was cached as unknown');
  assert.equal(authenticator.authenticate(old.key)?.key.id, 'key_1', 'the old one during the grace');
  clock.jumpWall(60_000);
  assert.equal(authenticator.authenticate(old.key), null, 'the old one after the grace');
  assert.deepEqual(authenticator.refusalOf(old.key), { reason: 'rolled', at: '2026-01-01T00:01:00.000Z' });
  assert.equal(authenticator.authenticate(fresh.key)?.key.id, 'key_1');

  // Rolled again with no grace: the second secret stops at once, and the first is forgotten.
  const third = generateApiKey('live', 'market');
  store.put(keyRecord('key_1', third.hash, { previous_hash: null, previous_hash_expires_at: null }));
  assert.equal(authenticator.authenticate(fresh.key), null);
  assert.equal(authenticator.authenticate(old.key), null);
  assert.equal(authenticator.authenticate(third.key)?.key.id, 'key_1');
});
