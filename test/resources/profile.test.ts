// The profile rules (src/resources/profile.ts) as tables, without a server: a body in, the
// change read or the 400 naming the field; a user in, the write of her own profile change, or
// the refusal — an If-Match naming another version (412), an email another user has (409, in
// normal form, so a look-alike spelling is the same address). Decisions run on a memory
// store's Transaction.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { USERS } from '../../src/domain/records.ts';
import { etagOf } from '../../src/http/conditional.ts';
import { assertEmailFree, decideOwnProfileChange, ownProfileBody, readOwnProfileChange, type ProfileFields } from '../../src/resources/profile.ts';
import { assertReadings, aUser, decideOnly, openRulesStore, opSummary, refusalOf, seedOps } from './rules-store.ts';

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
    const refusal = await refusalOf(() => decideOnly(store, (tx) => decideOwnProfileChange(tx, ada, fields, later, ifMatch, outbox)));
    if (refused !== undefined) {
      assert.equal(refusal?.status, refused, label);
      continue;
    }
    assert.equal(refusal, null, label);
    const { ops, changed } = await decideOnly(store, (tx) => decideOwnProfileChange(tx, ada, fields, later, ifMatch, outbox));
    assert.deepEqual(opSummary(ops), ['put users'], label);
    assert.deepEqual(changed, { ...ada, ...fields, updated_at: later }, label);
  }
  assert.deepEqual(store.get(USERS, ada.id), ada, 'deciding writes nothing');
});
