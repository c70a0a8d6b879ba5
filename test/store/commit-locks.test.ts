// The advisory lock keys of PostgreSQL commits (src/backends/postgres/commit-locks.ts): instances
// of different releases share one database during an upgrade, so a record's key must be the same
// 64-bit FNV-1a in every release — checked against the algorithm's published values and a plain
// BigInt rendering of it, for ASCII and non-ASCII names — and a batch takes each key once, in
// ascending order, exclusive where it writes.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { commitLocks, lockKey } from '../../src/backends/postgres/commit-locks.ts';

/** FNV-1a 64 written out with BigInt, as the definition reads. */
function referenceFnv1a(name: string): bigint {
  let hash = 0xcbf29ce484222325n;
  for (const byte of Buffer.from(name, 'utf8')) hash = ((hash ^ BigInt(byte)) * 0x100000001b3n) & ((1n << 64n) - 1n);
  return BigInt.asIntN(64, hash);
}

test('lock keys are 64-bit FNV-1a of the name, as signed bigint: the published values and a plain rendering agree', () => {
  // Published FNV-1a 64 test values.
  assert.equal(lockKey(''), BigInt.asIntN(64, 0xcbf29ce484222325n));
  assert.equal(lockKey('a'), BigInt.asIntN(64, 0xaf63dc4c8601ec8cn));
  assert.equal(lockKey('foobar'), BigInt.asIntN(64, 0x85944171f73967e8n));
  const names = ['c/listings', 'r/listings/lst_0123456789abcdef', 'r/users/ünïcødé', 'r/keys/😀', 'r/x/\u007f\u0080', 'r/webhooks/' + 'w'.repeat(300)];
  for (let i = 0; i < 500; i += 1) names.push(`r/listings/${i.toString(36)}-${String.fromCharCode(32 + (i % 400))}`);
  for (const name of names) assert.equal(lockKey(name), referenceFnv1a(name), name);
});

test('a batch locks each record once, ascending, exclusive where written and shared where only read', () => {
  const locks = commitLocks([
    { ops: [{ op: 'put', collection: 'listings', id: 'a', data: { id: 'a' } }], reads: [{ collection: 'users', id: 'u', version: 2 }] },
    { ops: [], reads: [{ collection: 'listings', id: 'a', version: 3 }, { collection: 'emails', id: null, version: 4 }] },
  ]);
  const expected = new Map<bigint, boolean>([
    [lockKey('c/listings'), false],
    [lockKey('r/listings/a'), true],
    [lockKey('c/users'), false],
    [lockKey('r/users/u'), false],
    [lockKey('c/emails'), true],
  ]);
  const keys = locks.keys.map(BigInt);
  assert.deepEqual([...keys].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)), keys, 'ascending');
  assert.deepEqual(new Map(keys.map((key, index) => [key, locks.exclusive[index]!])), expected);
});
