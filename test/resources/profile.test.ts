// The profile rules (src/resources/profile.ts) as tables, without a server: a body in, the
// change read or the 400 naming the field; a user in, the write of her own profile change, or
// the refusal — an If-Match naming another version (412), an email another user has (409, in
// normal form, so a look-alike spelling is the same address); the operator's user create and
// change, where a role change narrows the user's keys in the same write. Decisions run on a memory
// store's Transaction.

import assert from 'node:assert/strict';
import { readSignUp } from '../../src/modules/portal/sign-up.ts';
import { test } from 'node:test';
import { actingUser, OPERATOR } from '../../src/domain/actor.ts';
import { USERS } from '../../src/domain/records.ts';
import { etagOf } from '../../src/http/conditional.ts';
import type { PermissionRoute } from '../../src/auth/permissions.ts';
import {
  assertEmailFree,
  decideOwnProfileChange,
  decideUserChange,
  decideUserCreate,
  ownProfileBody,
  readOwnProfileChange,
  readUserChange,
  readUserCreate,
  type ProfileFields,
  type UserFields,
} from '../../src/resources/profile.ts';
import { aKey, assertReadings, aUser, decideOnly, openRulesStore, opSummary, refusalOf, seedOps } from './rules-store.ts';

const ada = aUser('usr_ada', 'member', { email: 'ada@example.test' });
const bob = aUser('usr_bob', 'member', { email: 'bob@example.test' });
/** Stored before emails were normalised: decomposed (e + combining diaeresis). */
const zoe = aUser('usr_zoe', 'member', { email: 'zoe\u0308@example.test' });
const later = '2026-01-02T00:00:00.000Z';

test('reading her own profile change: the fields sent, or one 400 naming the field', async () => {
  await assertReadings([
    { body: { name: 'Ada L.' }, read: { name: 'Ada L.' } },
    { body: { bio: '', website: 'https://ada.example' }, read: { bio: '', website: 'https://ada.example' } },
    { body: { email: 'Ada@Example.test' }, read: { email: 'ada@example.test' } },
    { body: {}, refused: [] },
    { body: { name: '' }, refused: ['name'] },
    { body: { email: '' }, refused: ['email'] },
    { body: { email: 'not an email' }, refused: ['email'] },
    { body: { website: 'javascript:alert(1)' }, refused: ['website'] },
    { body: { role: 'creator' }, refused: ['role'] },
    { body: { bio: 'x'.repeat(501) }, refused: ['bio'] },
  ], readOwnProfileChange);
});

test('an email is free unless another user has it, in any spelling of the same address', async (t) => {
  const { store } = await openRulesStore(t);
  await store.write(seedOps({ users: [ada, bob, zoe] }));
  const cases = [
    { email: 'carol@example.test', except: null, free: true },
    { email: 'bob@example.test', except: null, free: false },
    { email: 'bob@example.test', except: ada.id, free: false },
    { email: 'zo\u00eb@example.test', except: ada.id, free: false },
    { email: 'zo\u00eb@example.test', except: zoe.id, free: true },
    { email: 'bob@example.test', except: bob.id, free: true },
  ];
  for (const { email, except, free } of cases) {
    const refusal = await refusalOf(() => assertEmailFree(store, email, except));
    assert.deepEqual(refusal, free ? null : { status: 409, message: 'Another user already has this email address.', fields: [] }, `${email} except ${except}`);
  }
});

test('deciding her own profile change: If-Match against her profile as it is, a free email', async (t) => {
  const { store, outbox } = await openRulesStore(t);
  await store.write(seedOps({ users: [ada, bob] }));
  const current = etagOf(Buffer.from(JSON.stringify(ownProfileBody(ada))));
  const cases: Array<{ label: string; fields: ProfileFields; ifMatch?: string; refused?: number }> = [
    { label: 'no If-Match', fields: { name: 'Ada L.' } },
    { label: 'If-Match of her profile now', fields: { name: 'Ada L.' }, ifMatch: current },
    { label: 'If-Match: *', fields: { name: 'Ada L.' }, ifMatch: '*' },
    { label: 'If-Match of another version', fields: { name: 'Ada L.' }, ifMatch: '"stale"', refused: 412 },
    { label: 'her own email again', fields: { email: 'ada@example.test' } },
    { label: 'another user\'s email', fields: { email: 'bob@example.test' }, refused: 409 },
  ];
  for (const { label, fields, ifMatch, refused } of cases) {
    const refusal = await refusalOf(() => decideOnly(store, (tx) => decideOwnProfileChange(tx, actingUser(ada), { fields, ifMatch, outbox }, Date.parse(later))));
    if (refused !== undefined) {
      assert.equal(refusal?.status, refused, label);
      continue;
    }
    assert.equal(refusal, null, label);
    const { ops, result: changed } = await decideOnly(store, (tx) => decideOwnProfileChange(tx, actingUser(ada), { fields, ifMatch, outbox }, Date.parse(later)));
    assert.deepEqual(opSummary(ops), ['put users'], label);
    assert.deepEqual(changed, { ...ada, ...fields, updated_at: later }, label);
  }
  assert.deepEqual(store.get(USERS, ada.id), ada, 'deciding writes nothing');
});

test('reading the operator\'s user bodies (a name to create, a member unless a role is sent) and a sign-up (always a member)', async () => {
  await assertReadings([
    { body: { name: 'Ada' }, read: { profile: { name: 'Ada' }, role: 'member' } },
    { body: { name: 'Ada', email: 'ADA@example.test', role: 'creator', bio: 'b' }, read: { profile: { name: 'Ada', email: 'ada@example.test', bio: 'b' }, role: 'creator' } },
    { body: {}, refused: ['name'] },
    { body: { name: 'Ada', role: 'admin' }, refused: ['role'] },
    { body: { name: 'Ada', website: 'https://ada.example' }, refused: ['website'] },
  ], readUserCreate);
  await assertReadings([
    { body: { role: 'creator' }, read: { profile: {}, role: 'creator' } },
    { body: {}, refused: [] },
    { body: { id: 'usr_x' }, refused: ['id'] },
  ], readUserChange);
  await assertReadings([
    { body: { name: 'Ada', email: 'ada@example.test', password: 'a long enough passphrase' }, read: { profile: { name: 'Ada', email: 'ada@example.test' }, role: 'member', password: 'a long enough passphrase' } },
    { body: { name: 'Ada', email: 'ada@example.test' }, refused: ['password'] },
    { body: { name: 'Ada', email: '', password: 'a long enough passphrase' }, refused: ['email'] },
    { body: { name: 'Ada', email: 'ada@example.test', password: 'short' }, refused: ['password'] },
    { body: { name: 'Ada', email: 'ada@example.test', password: 'a long enough passphrase', role: 'creator' }, refused: ['role'] },
  ], readSignUp);
});

test('deciding the operator\'s user create and change: a free email, a user that exists, keys narrowed with a role', async (t) => {
  const { store, outbox } = await openRulesStore(t);
  const creator = aUser('usr_creator', 'creator');
  const erased = aUser('usr_erased', 'member', { status: 'erased' });
  const keys = [aKey('key_writer', creator.id, { permissions: ['read:listings', 'write:listings'] }), aKey('key_reader', creator.id)];
  await store.write(seedOps({ users: [ada, bob, creator, erased], keys }));
  const routes: PermissionRoute[] = [
    { method: 'GET', pattern: '/v1/listings', resource: 'listings' },
    { method: 'POST', pattern: '/v1/listings', resource: 'listings' },
  ];
  const nowMs = Date.parse(later);

  assert.equal((await refusalOf(() => decideOnly(store, (tx) => decideUserCreate(tx, OPERATOR, { fields: { profile: { name: 'B', email: 'bob@example.test' }, role: 'member' } }, nowMs))))?.status, 409);
  const made = await decideOnly(store, (tx) => decideUserCreate(tx, OPERATOR, { fields: { profile: { name: 'Carol' }, role: 'creator' } }, nowMs));
  assert.deepEqual([opSummary(made.ops), made.result.role, made.result.email, made.result.created_at], [['put users'], 'creator', '', later]);

  const cases: Array<{ label: string; userId: string; fields: UserFields; ops?: string[]; narrowed?: string[]; refused?: number }> = [
    { label: 'a new name', userId: ada.id, fields: { profile: { name: 'Ada L.' }, role: undefined }, ops: ['put users'], narrowed: [] },
    { label: 'another user\'s email', userId: ada.id, fields: { profile: { email: 'bob@example.test' }, role: undefined }, refused: 409 },
    { label: 'an erased user', userId: erased.id, fields: { profile: { name: 'X' }, role: undefined }, refused: 404 },
    { label: 'no such user', userId: 'usr_missing', fields: { profile: { name: 'X' }, role: undefined }, refused: 404 },
    { label: 'a creator made member', userId: creator.id, fields: { profile: {}, role: 'member' }, ops: ['put users', 'put keys'], narrowed: ['key_writer'] },
    { label: 'a creator kept creator', userId: creator.id, fields: { profile: {}, role: 'creator' }, ops: ['put users'], narrowed: [] },
  ];
  for (const { label, userId, fields, ops, narrowed, refused } of cases) {
    const refusal = await refusalOf(() => decideOnly(store, (tx) => decideUserChange(tx, OPERATOR, { userId, fields, apiRoutes: routes, outbox }, nowMs)));
    if (refused !== undefined) {
      assert.equal(refusal?.status, refused, label);
      continue;
    }
    const decided = await decideOnly(store, (tx) => decideUserChange(tx, OPERATOR, { userId, fields, apiRoutes: routes, outbox }, nowMs));
    assert.deepEqual([opSummary(decided.ops), decided.result.narrowed.map(({ after }) => after.id)], [ops, narrowed], label);
    assert.equal(decided.result.changed.updated_at, later, label);
  }
  const demoted = await decideOnly(store, (tx) => decideUserChange(tx, OPERATOR, { userId: creator.id, fields: { profile: {}, role: 'member' }, apiRoutes: routes, outbox }, nowMs));
  assert.deepEqual(demoted.result.narrowed[0]!.after.permissions, ['read:listings'], 'the write entry goes, the read stays');
});
