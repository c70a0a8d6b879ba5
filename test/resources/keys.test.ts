// The key rules (src/resources/keys.ts, and the portal's own in src/modules/portal/own-keys.ts)
// as tables, without a server: a body in, the fields read or the 400 naming the field; the operator's key create, change and roll; a user and her keys
// in, the key a portal create or change would write, or the refusal — least privilege within the role (403), self-service plans only (400),
// 20 active keys (409), 50 created a day (429), a revoked key final and an expired key's plan
// fixed (409), another user's key a missing one (404). Decisions run on a memory store's
// Transaction, with the default plans (free 100, pro 1000, business 10000 on request).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { PermissionRoute } from '../../src/auth/permissions.ts';
import { generateApiKey } from '../../src/auth/keys.ts';
import { actingUser, OPERATOR, type OperatorActor, type UserActor } from '../../src/domain/actor.ts';
import { KEYS } from '../../src/domain/records.ts';
import { keyPlans } from '../../src/resources/key-plans.ts';
import { decideKeyChange, decideKeyCreate, decideKeyRoll, readKeyChange, readKeyCreate, readKeyRoll, type KeyFields } from '../../src/resources/keys.ts';
import { decideOwnKeyChange, decideOwnKeyCreate, decideOwnKeyRevoke, MAX_ACTIVE_KEYS_PER_USER, readOwnKeyChange, readOwnKeyCreate, type OwnKeyFields } from '../../src/modules/portal/own-keys.ts';
import { KEYS_CREATED_PER_DAY } from '../../src/modules/portal/daily-limits.ts';
import { aKey, assertReadings, aUser, decideOnly, openRulesStore, opSummary, refusalOf, seedOps, START } from './rules-store.ts';

const API_ROUTES: PermissionRoute[] = [
  { method: 'GET', pattern: '/v1/listings', resource: 'listings' },
  { method: 'POST', pattern: '/v1/listings', resource: 'listings' },
  { method: 'PUT', pattern: '/v1/listings/:id', resource: 'listings' },
  { method: 'GET', pattern: '/v1/analytics/usage', resource: 'analytics' },
];
const NOW = Date.parse(START);
const member = aUser('usr_member', 'member');
const creator = aUser('usr_creator', 'creator');

test('reading a portal key create or change: the fields, or one 400 naming the field', async () => {
  await assertReadings([
    { body: {}, read: {} },
    { body: { name: 'ci', permissions: ['read:listings', 'read:listings'], plan: 'pro', expires_at: null }, read: { name: 'ci', permissions: ['read:listings'], planId: 'pro', expiresAt: null } },
    { body: { expires_at: '2027-01-31T00:00:00Z' }, read: { expiresAt: '2027-01-31T00:00:00.000Z' } },
    { body: { permissions: [] }, refused: ['permissions'] },
    { body: { permissions: 'read:listings' }, refused: ['permissions'] },
    { body: { permissions: ['fly:listings'] }, refused: ['permissions'] },
    { body: { expires_at: '2025-01-01T00:00:00Z' }, refused: ['expires_at'] },
    { body: { plan: '' }, refused: ['plan'] },
    { body: { rate_limit: 5000 }, refused: ['rate_limit'] },
  ], (body) => readOwnKeyCreate(body, API_ROUTES, NOW));
  await assertReadings([
    { body: { name: 'n' }, read: { name: 'n' } },
    { body: {}, refused: [] },
    { body: { expires_at: null }, refused: ['expires_at'] },
  ], (body) => readOwnKeyChange(body, API_ROUTES));
});

test('deciding a portal key create: within the role, on a self-service plan, within the caps', async (t) => {
  const { store } = await openRulesStore(t);
  const secret = generateApiKey('live', 'market');
  const cases: Array<{ label: string; user: typeof member; fields: OwnKeyFields; plan?: string; rateLimit?: number; permissions?: string[]; refused?: number; fieldsRefused?: string[] }> = [
    { label: 'nothing asked: least privilege on the entry plan', user: member, fields: {}, plan: 'free', rateLimit: 100, permissions: ['read:listings'] },
    { label: 'a self-service plan', user: member, fields: { planId: 'pro' }, plan: 'pro', rateLimit: 1_000, permissions: ['read:listings'] },
    { label: 'a plan on request only', user: member, fields: { planId: 'business' }, refused: 400, fieldsRefused: ['plan'] },
    { label: 'no such plan', user: member, fields: { planId: 'gold' }, refused: 400, fieldsRefused: ['plan'] },
    { label: 'a member asking to write listings', user: member, fields: { permissions: ['write:listings'] }, refused: 403, fieldsRefused: ['permissions'] },
    { label: 'a member asking for a listing route', user: member, fields: { permissions: ['PUT /v1/listings/:id'] }, refused: 403, fieldsRefused: ['permissions'] },
    { label: 'a creator writing listings', user: creator, fields: { permissions: ['write:listings'] }, plan: 'free', rateLimit: 100, permissions: ['write:listings'] },
  ];
  for (const { label, user, fields, plan, rateLimit, permissions, refused, fieldsRefused } of cases) {
    const refusal = await refusalOf(() => decideOnly(store, (tx) => decideOwnKeyCreate(tx, actingUser(user), { fields, secret, apiRoutes: API_ROUTES }, NOW)));
    if (refused !== undefined) {
      assert.deepEqual([refusal?.status, refusal?.fields], [refused, fieldsRefused], label);
      continue;
    }
    assert.equal(refusal, null, label);
    const { ops, result: key } = await decideOnly(store, (tx) => decideOwnKeyCreate(tx, actingUser(user), { fields, secret, apiRoutes: API_ROUTES }, NOW));
    assert.deepEqual(opSummary(ops), ['put keys'], label);
    assert.deepEqual([key.user_id, key.plan, key.rate_limit, key.permissions, key.hash, key.revoked_at], [user.id, plan, rateLimit, permissions, secret.hash, null], label);
    assert.equal(JSON.stringify(key).includes(secret.key), false, `${label}: the plain secret is never in the record`);
  }
});

test('the caps count the keys as they are in the write: 20 active (revoked and expired ones aside), 50 made a day', async (t) => {
  const { store } = await openRulesStore(t);
  const secret = generateApiKey('live', 'market');
  const earlier = new Date(NOW - 2 * 24 * 60 * 60 * 1000).toISOString();
  const active = Array.from({ length: MAX_ACTIVE_KEYS_PER_USER }, (_, index) => aKey(`key_active_${index}`, member.id, { created_at: earlier }));
  const spent = [aKey('key_revoked', member.id, { revoked_at: START, created_at: earlier }), aKey('key_expired', member.id, { expires_at: START, created_at: earlier })];
  await store.write(seedOps({ users: [member], keys: [...active.slice(1), ...spent] }));
  assert.equal(await refusalOf(() => decideOnly(store, (tx) => decideOwnKeyCreate(tx, actingUser(member), { fields: {}, secret, apiRoutes: API_ROUTES }, NOW))), null, '19 active, 2 spent: one more is allowed');
  await store.write(seedOps({ keys: [active[0]!] }));
  assert.deepEqual(await refusalOf(() => decideOnly(store, (tx) => decideOwnKeyCreate(tx, actingUser(member), { fields: {}, secret, apiRoutes: API_ROUTES }, NOW))), {
    status: 409,
    message: 'You already have 20 active keys, the most allowed. Revoke one (DELETE /portal/v1/keys/:id) before creating another.',
    fields: [],
  });

  const today = Array.from({ length: KEYS_CREATED_PER_DAY }, (_, index) => aKey(`key_today_${index}`, creator.id, { revoked_at: START, created_at: new Date(NOW - 60_000).toISOString() }));
  await store.write(seedOps({ users: [creator], keys: today }));
  assert.equal((await refusalOf(() => decideOnly(store, (tx) => decideOwnKeyCreate(tx, actingUser(creator), { fields: {}, secret, apiRoutes: API_ROUTES }, NOW))))?.status, 429, '50 made in the last day, even revoked');
});

test('deciding a portal key change and revoke: the owner\'s live key only', async (t) => {
  const { store } = await openRulesStore(t);
  const keys = [aKey('key_live', member.id), aKey('key_revoked', member.id, { revoked_at: START }), aKey('key_expired', member.id, { expires_at: START }), aKey('key_other', creator.id)];
  await store.write(seedOps({ users: [member, creator], keys }));
  const cases: Array<{ keyId: string; fields: OwnKeyFields; refused?: number; changed?: object }> = [
    { keyId: 'key_live', fields: { name: 'renamed' }, changed: { name: 'renamed', plan: 'free', rate_limit: 100 } },
    { keyId: 'key_live', fields: { planId: 'pro' }, changed: { name: '', plan: 'pro', rate_limit: 1_000 } },
    { keyId: 'key_live', fields: { planId: 'business' }, refused: 400 },
    { keyId: 'key_live', fields: { permissions: ['write:listings'] }, refused: 403 },
    { keyId: 'key_revoked', fields: { name: 'x' }, refused: 409 },
    { keyId: 'key_expired', fields: { name: 'still mine' }, changed: { name: 'still mine', plan: 'free', rate_limit: 100 } },
    { keyId: 'key_expired', fields: { planId: 'pro' }, refused: 409 },
    { keyId: 'key_other', fields: { name: 'x' }, refused: 404 },
    { keyId: 'key_missing', fields: { name: 'x' }, refused: 404 },
  ];
  for (const { keyId, fields, refused, changed } of cases) {
    const label = `${keyId} ${JSON.stringify(fields)}`;
    const refusal = await refusalOf(() => decideOnly(store, (tx) => decideOwnKeyChange(tx, actingUser(member), { keyId, fields, apiRoutes: API_ROUTES }, NOW + 1_000)));
    if (refused !== undefined) {
      assert.equal(refusal?.status, refused, label);
      continue;
    }
    const decided = await decideOnly(store, (tx) => decideOwnKeyChange(tx, actingUser(member), { keyId, fields, apiRoutes: API_ROUTES }, NOW + 1_000));
    assert.deepEqual(opSummary(decided.ops), ['put keys'], label);
    assert.deepEqual({ name: decided.result.changed.name, plan: decided.result.changed.plan, rate_limit: decided.result.changed.rate_limit }, changed, label);
    assert.equal(decided.result.changed.updated_at, '2026-01-01T00:00:01.000Z', label);
  }

  const revoked = await decideOnly(store, (tx) => decideOwnKeyRevoke(tx, actingUser(member), { keyId: 'key_live' }, NOW));
  assert.deepEqual([opSummary(revoked.ops), revoked.result.revoked_at], [['put keys'], START]);
  const again = await decideOnly(store, (tx) => decideOwnKeyRevoke(tx, actingUser(member), { keyId: 'key_revoked' }, NOW));
  assert.deepEqual(again.ops, [], 'revoking twice changes nothing');
  assert.equal((await refusalOf(() => decideOnly(store, (tx) => decideOwnKeyRevoke(tx, actingUser(member), { keyId: 'key_other' }, NOW))))?.status, 404);
  assert.equal(store.get(KEYS, 'key_live')!.revoked_at, null, 'deciding writes nothing');
});

test('reading the operator\'s key bodies: a limit or a plan, not both; a roll\'s grace period', async () => {
  await assertReadings([
    { body: { user_id: 'usr_a' }, read: { userId: 'usr_a', prefixKind: 'live' } },
    { body: { user_id: 'usr_a', rate_limit: 7, prefix: 'mk' }, read: { userId: 'usr_a', rateLimit: 7, prefixKind: 'mk' } },
    { body: {}, refused: ['user_id'] },
    { body: { user_id: 'usr_a', rate_limit: 7, plan: 'pro' }, refused: ['plan'] },
    { body: { user_id: 'usr_a', rate_limit: 0 }, refused: ['rate_limit'] },
    { body: { user_id: 'usr_a', prefix: 'test' }, refused: ['prefix'] },
  ], (body) => readKeyCreate(body, API_ROUTES, NOW));
  await assertReadings([
    { body: { expires_at: null }, read: { expiresAt: null } },
    { body: {}, refused: [] },
    { body: { user_id: 'usr_b' }, refused: ['user_id'] },
  ], (body) => readKeyChange(body, API_ROUTES, NOW));
  await assertReadings([
    { body: {}, read: { graceSeconds: 0 } },
    { body: { grace_seconds: 3600 }, read: { graceSeconds: 3600 } },
    { body: { grace_seconds: 8 * 24 * 3600 }, refused: ['grace_seconds'] },
  ], readKeyRoll);
});

test('deciding the operator\'s key create and change', async (t) => {
  const { store } = await openRulesStore(t);
  const keys = [aKey('key_live', member.id), aKey('key_revoked', member.id, { revoked_at: START }), aKey('key_expired', member.id, { expires_at: START })];
  await store.write(seedOps({ users: [member, aUser('usr_erased', 'member', { status: 'erased' })], keys }));
  const secret = generateApiKey('live', 'market');
  const creates: Array<{ fields: KeyFields; made?: object; refused?: number }> = [
    { fields: { userId: member.id }, made: { plan: 'free', rate_limit: 100, permissions: ['read:listings'] } },
    { fields: { userId: member.id, rateLimit: 7 }, made: { plan: null, rate_limit: 7, permissions: ['read:listings'] } },
    { fields: { userId: member.id, planId: 'business', permissions: ['write:listings'] }, made: { plan: 'business', rate_limit: 10_000, permissions: ['write:listings'] } },
    { fields: { userId: member.id, planId: 'gold' }, refused: 400 },
    { fields: { userId: 'usr_missing' }, refused: 400 },
    { fields: { userId: 'usr_erased' }, refused: 400 },
  ];
  for (const { fields, made, refused } of creates) {
    const label = JSON.stringify(fields);
    const refusal = await refusalOf(() => decideOnly(store, (tx) => decideKeyCreate(tx, OPERATOR, { fields, secret, plans: keyPlans }, NOW)));
    if (refused !== undefined) {
      assert.equal(refusal?.status, refused, label);
      continue;
    }
    const { result: key } = await decideOnly(store, (tx) => decideKeyCreate(tx, OPERATOR, { fields, secret, plans: keyPlans }, NOW));
    assert.deepEqual({ plan: key.plan, rate_limit: key.rate_limit, permissions: key.permissions }, made, label);
  }

  const later = '2027-01-01T00:00:00.000Z';
  const changes: Array<{ keyId: string; fields: KeyFields; changed?: object; refused?: number }> = [
    { keyId: 'key_live', fields: { rateLimit: 7 }, changed: { plan: null, rate_limit: 7, expires_at: null } },
    { keyId: 'key_live', fields: { planId: 'business' }, changed: { plan: 'business', rate_limit: 10_000, expires_at: null } },
    { keyId: 'key_expired', fields: { planId: 'pro' }, refused: 409 },
    { keyId: 'key_expired', fields: { planId: 'pro', expiresAt: later }, changed: { plan: 'pro', rate_limit: 1_000, expires_at: later } },
    { keyId: 'key_revoked', fields: { name: 'x' }, refused: 409 },
    { keyId: 'key_missing', fields: { name: 'x' }, refused: 404 },
  ];
  for (const { keyId, fields, changed, refused } of changes) {
    const label = `${keyId} ${JSON.stringify(fields)}`;
    const refusal = await refusalOf(() => decideOnly(store, (tx) => decideKeyChange(tx, OPERATOR, { keyId, fields, plans: keyPlans }, NOW)));
    if (refused !== undefined) {
      assert.equal(refusal?.status, refused, label);
      continue;
    }
    const decided = await decideOnly(store, (tx) => decideKeyChange(tx, OPERATOR, { keyId, fields, plans: keyPlans }, NOW));
    assert.deepEqual({ plan: decided.result.changed.plan, rate_limit: decided.result.changed.rate_limit, expires_at: decided.result.changed.expires_at }, changed, label);
  }
});

test('a roll: a new secret with the key\'s own prefix, the old one kept for the grace period; a revoked key is 409, another user\'s 404', async (t) => {
  const { store } = await openRulesStore(t);
  const live = aKey('key_live', member.id);
  const keys = [live, aKey('key_mk', member.id, { prefix: 'mk_' }), aKey('key_revoked', member.id, { revoked_at: START }), aKey('key_other', creator.id)];
  await store.write(seedOps({ users: [member, creator], keys }));
  const roll = (actor: UserActor | OperatorActor, keyId: string, graceSeconds: number) => decideOnly(store, (tx) => decideKeyRoll(tx, actor, { keyId, brand: 'market', graceSeconds }, NOW));
  const { ops, result: rolled } = await roll(OPERATOR, 'key_live', 60);
  assert.deepEqual(opSummary(ops), ['put keys']);
  assert.deepEqual([rolled.key.hash, rolled.rolled.previous_hash, rolled.rolled.previous_hash_expires_at], [live.hash, live.hash, '2026-01-01T00:01:00.000Z']);
  assert.notEqual(rolled.rolled.hash, live.hash);
  assert.equal(rolled.secret.key.startsWith(rolled.rolled.prefix), true);
  assert.equal((await roll(actingUser(member), 'key_mk', 0)).result.rolled.prefix, 'mk_');
  assert.equal((await refusalOf(() => roll(OPERATOR, 'key_revoked', 0)))?.status, 409);
  assert.equal((await refusalOf(() => roll(OPERATOR, 'key_missing', 0)))?.status, 404);
  assert.equal((await refusalOf(() => roll(actingUser(member), 'key_other', 0)))?.status, 404);
  assert.equal((await refusalOf(() => roll(OPERATOR, 'key_other', 0))), null, 'the operator rolls any key');
});
