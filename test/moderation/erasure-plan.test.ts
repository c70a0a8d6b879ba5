// How erasure recognises the user's values in what others' records say (src/moderation/erasure.ts):
// whole mentions only, ignoring case, earlier values included; values too short to tell apart
// are not looked for; text about her own things goes whatever it says.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AUDIT, LISTINGS, USERS, type AuditRecord, type ListingRecord, type UserRecord } from '../../src/domain/records.ts';
import { ERASED, erasureOps } from '../../src/modules/moderation/erasure.ts';
import { Store } from '../../src/store/store.ts';

const NOW = '2026-01-01T00:00:00.000Z';

function user(id: string, fields: Partial<UserRecord> = {}): UserRecord {
  return { id, name: '', email: '', bio: '', website: '', avatar_url: '', role: 'creator', created_at: NOW, updated_at: NOW, status: 'active', ...fields };
}

function listing(id: string, ownerId: string, fields: Partial<ListingRecord> = {}): ListingRecord {
  return { id, title: 'A lamp', description: '', type: 'TOOL', price: 1, tags: [], status: 'active', owner_id: ownerId, created_at: NOW, updated_at: NOW, ...fields };
}

function audit(id: string, targetId: string, changes: Record<string, unknown>, targetType: AuditRecord['target_type'] = 'user'): AuditRecord {
  return { id, at: NOW, action: 'user.suspend', target_type: targetType, target_id: targetId, changes, request_id: 'req', seq: 1 };
}

test("others' text loses what mentions her (whole words, any case, earlier values); her own things' text goes whole", async (t) => {
  const store = await Store.open({ dataDir: null, warn: () => {} });
  t.after(() => store.close());
  const ann = user('usr_ann', { name: 'Ann', email: 'ann.b@example.org' });
  await store.write([
    { op: 'put', collection: USERS, id: ann.id, data: ann },
    // Earlier name (recorded by an operator's edit), then reasons about others.
    { op: 'put', collection: AUDIT, id: 'aud_1', data: audit('aud_1', ann.id, { name: { from: 'Annabel Brook', to: 'Ann' } }) },
    { op: 'put', collection: USERS, id: 'usr_x', data: user('usr_x', { status: 'suspended', suspension_reason: 'Sock puppet of annabel brook' }) },
    { op: 'put', collection: USERS, id: 'usr_y', data: user('usr_y', { status: 'suspended', suspension_reason: 'Annual spam sweep' }) },
    { op: 'put', collection: LISTINGS, id: 'lst_x', data: listing('lst_x', 'usr_x', { status: 'removed', removal_reason: 'Lists ANN.B@EXAMPLE.ORG' }) },
    { op: 'put', collection: LISTINGS, id: 'lst_y', data: listing('lst_y', 'usr_y', { status: 'removed', removal_reason: 'Lists joann.b@example.org' }) },
    { op: 'put', collection: AUDIT, id: 'aud_2', data: audit('aud_2', 'lst_x', { reason: 'Copied from Annabel Brook.' }, 'listing') },
    // Her listing, removed with a reason quoting nothing of hers: the reason goes anyway.
    { op: 'put', collection: LISTINGS, id: 'lst_ann', data: listing('lst_ann', ann.id, { status: 'removed', removal_reason: 'Counterfeit', description: 'Call me' }) },
    { op: 'put', collection: AUDIT, id: 'aud_3', data: audit('aud_3', 'lst_ann', { status: { from: 'active', to: 'removed' }, reason: 'Counterfeit' }, 'listing') },
  ]);

  const plan = erasureOps(store, ann, NOW);
  const written = new Map(plan.ops.map((op) => [`${op.collection}/${op.id}`, op.op === 'put' ? op.data : null]));
  const reasonOf = (key: string) => (written.get(key) as { suspension_reason?: string; removal_reason?: string } | undefined);

  assert.equal(reasonOf('users/usr_x')?.suspension_reason, ERASED, 'an earlier name, any case');
  assert.equal(written.has('users/usr_y'), false, '"Ann" is not found in "Annual"');
  assert.equal(reasonOf('listings/lst_x')?.removal_reason, ERASED, 'the email, any case');
  assert.equal(written.has('listings/lst_y'), false, 'an address that only ends like hers is not hers');
  assert.deepEqual((written.get('audit/aud_2') as AuditRecord).changes, { reason: ERASED });
  assert.deepEqual((written.get('audit/aud_1') as AuditRecord).changes, { name: ERASED });
  assert.deepEqual((written.get('audit/aud_3') as AuditRecord).changes, { status: { from: 'active', to: 'removed' }, reason: ERASED });
  const herListing = written.get('listings/lst_ann') as ListingRecord;
  assert.deepEqual([herListing.title, herListing.description, herListing.tags, herListing.removal_reason], [ERASED, '', [], 'The owner was erased.']);
  assert.equal(herListing.removed_at, NOW);
  assert.deepEqual(plan.summary, { keys_revoked: 0, webhooks_removed: 0, listings_removed: 0, audit_entries_scrubbed: 3, reasons_scrubbed: 2 });
});

test('a name under three characters is not looked for in others\' text', async (t) => {
  const store = await Store.open({ dataDir: null, warn: () => {} });
  t.after(() => store.close());
  const al = user('usr_al', { name: 'Al' });
  await store.write([
    { op: 'put', collection: USERS, id: al.id, data: al },
    { op: 'put', collection: USERS, id: 'usr_z', data: user('usr_z', { status: 'suspended', suspension_reason: 'Al said so' }) },
  ]);
  const plan = erasureOps(store, al, NOW);
  assert.equal(plan.ops.some((op) => op.id === 'usr_z'), false);
});

test('what she did herself (an audit entry with her as actor) loses its text, even about a webhook already gone', async (t) => {
  const store = await Store.open({ dataDir: null, warn: () => {} });
  t.after(() => store.close());
  const eve = user('usr_eve', { name: 'Eve Quill' });
  const created: AuditRecord = {
    ...audit('aud_w', 'whk_gone', { url: 'https://eve-quill.example.org/hook', events: ['ping'], description: 'my own hook' }, 'webhook' as AuditRecord['target_type']),
    action: 'portal.webhook_create',
    actor: { type: 'user', id: eve.id },
  };
  await store.write([
    { op: 'put', collection: USERS, id: eve.id, data: eve },
    { op: 'put', collection: AUDIT, id: created.id, data: created },
  ]);
  const plan = erasureOps(store, eve, NOW);
  const entry = plan.ops.find((op) => op.id === 'aud_w');
  assert.ok(entry !== undefined && entry.op === 'put', 'the entry is rewritten');
  assert.deepEqual((entry.data as AuditRecord).changes, { url: ERASED, events: ['ping'], description: ERASED });
  assert.deepEqual((entry.data as AuditRecord).actor, { type: 'user', id: eve.id }, 'the actor stays an id');
});
