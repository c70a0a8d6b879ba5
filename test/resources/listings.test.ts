// The listing rules (src/resources/listings.ts) as tables, without a server: a body in, the
// fields read or the 400 naming each bad field; a listing and a user in, the ops a write would
// commit and the record it leaves, or the refusal. Each decision runs on a memory store's
// Transaction, as in a real write.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { actingUser } from '../../src/domain/actor.ts';
import { LISTINGS, type ListingRecord } from '../../src/domain/records.ts';
import { changeableListing, decideListingArchive, decideListingChange, decideListingCreate, ownListing, readListingChange, readNewListing, shownListingEtag } from '../../src/resources/listings.ts';
import { SerialisedListings } from '../../src/listings/serialised.ts';
import { aListing, assertReadings, aUser, decideOnly, openRulesStore, opSummary, refusalOf, seedOps } from './rules-store.ts';

const creator = aUser('usr_creator', 'creator');
const member = aUser('usr_member', 'member');

test('reading a new listing: the fields, or one 400 naming every bad field', async () => {
  await assertReadings([
    { body: { title: 'A tool', type: 'TOOL', price: 9.99 }, read: { title: 'A tool', type: 'TOOL', price: 9.99 } },
    { body: { title: 'T', type: 'AGENT', price: 0, tags: ['a', 'b'], description: 'd' }, read: { title: 'T', type: 'AGENT', price: 0, tags: ['a', 'b'], description: 'd' } },
    { body: {}, refused: ['price', 'title', 'type'] },
    { body: { title: '', type: 'TOOL', price: 1 }, refused: ['title'] },
    { body: { title: 'T', type: 'BOAT', price: 1 }, refused: ['type'] },
    { body: { title: 'T', type: 'TOOL', price: 9.999 }, refused: ['price'] },
    { body: { title: 'T', type: 'TOOL', price: -1 }, refused: ['price'] },
    { body: { title: 'T', type: 'TOOL', price: 1, owner_id: 'usr_x' }, refused: ['owner_id'] },
    { body: { title: 'T', type: 'TOOL', price: 1, colour: 'red' }, refused: ['colour'] },
  ], readNewListing);
});

test('reading a listing change: only the fields sent, at least one', async () => {
  await assertReadings([
    { body: { price: 5 }, read: { price: 5 } },
    { body: { title: 'New', tags: [] }, read: { title: 'New', tags: [] } },
    { body: {}, refused: [] },
    { body: { status: 'archived' }, refused: ['status'] },
  ], readListingChange);
});

test('deciding a create: creators only; the record with its defaults, serialised once', async (t) => {
  const { store, clock, outbox } = await openRulesStore(t);
  await store.write(seedOps({ users: [creator, member] }));
  const fields = { title: 'A tool', type: 'TOOL' as const, price: 5 };

  assert.deepEqual(await refusalOf(() => decideOnly(store, (tx) => decideListingCreate(tx, actingUser(member), { fields, outbox }, clock.now()))), {
    status: 403,
    message: 'Only creators may create listings. Ask the operator to give your user the creator role.',
    fields: [],
  });

  const decided = await decideOnly(store, (tx) => decideListingCreate(tx, actingUser(creator), { fields, outbox }, clock.now()));
  assert.deepEqual(opSummary(decided.ops), ['put listings'], 'no webhook: no event');
  assert.match(decided.result.listing.id, /^lst_/);
  assert.deepEqual({ ...decided.result.listing, id: 'x' }, { id: 'x', title: 'A tool', description: '', type: 'TOOL', price: 5, tags: [], status: 'active', owner_id: creator.id, created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z' });
  assert.deepEqual(JSON.parse(decided.result.json), decided.result.listing);
  assert.equal(store.size(LISTINGS), 0, 'deciding writes nothing');
});

test('deciding a change or an archive, by the listing\'s status', async (t) => {
  const { store, clock, outbox } = await openRulesStore(t);
  await store.write(seedOps({ users: [creator] }));
  clock.advance(60_000);
  const now = '2026-01-01T00:01:00.000Z';
  const cases: Array<{ status: ListingRecord['status']; change: { ops: string[]; status?: number }; archive: { ops: string[]; status?: number; after?: string } }> = [
    { status: 'active', change: { ops: ['put listings'] }, archive: { ops: ['put listings'], after: 'archived' } },
    { status: 'archived', change: { ops: [], status: 409 }, archive: { ops: [], after: 'archived' } },
    { status: 'removed', change: { ops: [], status: 409 }, archive: { ops: [], status: 409 } },
  ];
  for (const { status, change, archive } of cases) {
    const listing = aListing(`lst_${status}`, creator.id, { status });
    const changeRefusal = await refusalOf(() => decideOnly(store, (tx) => decideListingChange(tx, actingUser(creator), { listing, fields: { price: 20 }, outbox }, clock.now())));
    if (change.status !== undefined) {
      assert.equal(changeRefusal?.status, change.status, `change of an ${status} listing`);
    } else {
      const decided = await decideOnly(store, (tx) => decideListingChange(tx, actingUser(creator), { listing, fields: { price: 20, title: undefined }, outbox }, clock.now()));
      assert.deepEqual(opSummary(decided.ops), change.ops);
      assert.deepEqual(decided.result, { ...listing, price: 20, updated_at: now }, 'only the fields sent change');
    }
    const archiveRefusal = await refusalOf(() => decideOnly(store, (tx) => decideListingArchive(tx, actingUser(creator), { listing, outbox }, clock.now())));
    if (archive.status !== undefined) {
      assert.equal(archiveRefusal?.status, archive.status, `archive of an ${status} listing`);
    } else {
      const decided = await decideOnly(store, (tx) => decideListingArchive(tx, actingUser(creator), { listing, outbox }, clock.now()));
      assert.deepEqual(opSummary(decided.ops), archive.ops, `archive of an ${status} listing`);
      assert.equal(decided.result.status, archive.after);
    }
  }
});

test('a listing is found as the user\'s own only by its owner; anyone else gets a 404', async (t) => {
  const { store } = await openRulesStore(t);
  const listing = aListing('lst_mine', creator.id, { status: 'removed' });
  await store.write(seedOps({ users: [creator, member], listings: [listing] }));
  const cases = [
    { id: 'lst_mine', user: creator, found: true },
    { id: 'lst_mine', user: member, found: false },
    { id: 'lst_missing', user: creator, found: false },
  ];
  for (const { id, user, found } of cases) {
    const refusal = await refusalOf(() => ownListing(store, id, user));
    assert.deepEqual(refusal, found ? null : { status: 404, message: 'Listing not found', fields: [] }, `${id} for ${user.id}`);
  }
});

test('a listing is changeable under /v1 by its owner; hidden is 404, visible but another\'s is 403', async (t) => {
  const { store } = await openRulesStore(t);
  const suspended = aUser('usr_suspended', 'creator', { status: 'suspended' });
  const listings = [aListing('lst_active', creator.id), aListing('lst_removed', creator.id, { status: 'removed' }), aListing('lst_of_suspended', suspended.id)];
  await store.write(seedOps({ users: [creator, member, suspended], listings }));
  const cases: Array<{ id: string; userId: string; status: number | null }> = [
    { id: 'lst_active', userId: creator.id, status: null },
    { id: 'lst_removed', userId: creator.id, status: null },
    { id: 'lst_active', userId: member.id, status: 403 },
    { id: 'lst_removed', userId: member.id, status: 404 },
    { id: 'lst_of_suspended', userId: member.id, status: 404 },
    { id: 'lst_missing', userId: creator.id, status: 404 },
  ];
  for (const { id, userId, status } of cases) {
    assert.equal((await refusalOf(() => changeableListing(store, id, userId)))?.status ?? null, status, `${id} by ${userId}`);
  }
});

test('If-Match on a change or an archive: the ETag GET /v1/listings/:id shows, else 412 before any other refusal', async (t) => {
  const { store, clock, outbox } = await openRulesStore(t);
  await store.write(seedOps({ users: [creator] }));
  const active = aListing('lst_active', creator.id);
  const archived = aListing('lst_archived', creator.id, { status: 'archived' });
  const current = new SerialisedListings().shown(active).etag;
  assert.equal(shownListingEtag(active), current, 'the same tag as the answer a client read');
  const cases: Array<{ label: string; listing: ListingRecord; ifMatch?: string; status: number | null }> = [
    { label: 'no If-Match', listing: active, status: null },
    { label: 'its current ETag', listing: active, ifMatch: current, status: null },
    { label: 'If-Match: *', listing: active, ifMatch: '*', status: null },
    { label: 'another version', listing: active, ifMatch: '"stale"', status: 412 },
    { label: 'another version of an archived listing', listing: archived, ifMatch: '"stale"', status: 412 },
  ];
  for (const { label, listing, ifMatch, status } of cases) {
    const change = await refusalOf(() => decideOnly(store, (tx) => decideListingChange(tx, actingUser(creator), { listing, fields: { price: 20 }, ifMatch, outbox }, clock.now())));
    assert.equal(change?.status ?? null, status, `change: ${label}`);
    const archive = await refusalOf(() => decideOnly(store, (tx) => decideListingArchive(tx, actingUser(creator), { listing, ifMatch, outbox }, clock.now())));
    assert.equal(archive?.status ?? null, status, `archive: ${label}`);
  }
});
