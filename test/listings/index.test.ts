// The listing index kept in (created_at, id) order through creates (many in one millisecond,
// with random ids, so they land just before the end), updates (in place, or to another type),
// archives and restores: after every step each array equals a fresh sort of what it should hold.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { byCreation } from '../../src/domain/order.ts';
import { LISTINGS, LISTING_TYPES, type ListingRecord } from '../../src/domain/records.ts';
import { ListingIndex } from '../../src/listings/index.ts';
import type { Store } from '../../src/store/store.ts';

function seededRandom(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

const ids = (listings: readonly ListingRecord[]) => listings.map((listing) => listing.id);

test('every array stays in (created_at, id) order through creates, updates, type changes, archives and restores', () => {
  const emptyStore = { values: () => [][Symbol.iterator]() } as unknown as Store;
  const index = new ListingIndex(emptyStore);
  const live = new Map<string, ListingRecord>();
  const random = seededRandom(7);
  const owners = ['usr_a', 'usr_b', 'usr_c'];
  const start = Date.UTC(2026, 10, 25);
  const change = (before: ListingRecord | undefined, after: ListingRecord | undefined) => {
    const id = (after ?? before)!.id;
    if (after) live.set(id, after);
    else live.delete(id);
    index.onStoreChange({ collection: LISTINGS, id, before, after });
  };

  for (let step = 0; step < 3_000; step += 1) {
    const existing = [...live.values()];
    const roll = random();
    if (existing.length === 0 || roll < 0.6) {
      // About 30 creates share each millisecond, as under load: their ids decide their order.
      const created = new Date(start + Math.floor(step / 30)).toISOString();
      change(undefined, {
        id: `lst_${randomBytes(6).toString('hex')}`,
        title: `Listing ${step}`,
        description: '',
        type: LISTING_TYPES[Math.floor(random() * LISTING_TYPES.length)]!,
        price: step,
        tags: [],
        status: 'active',
        owner_id: owners[step % owners.length]!,
        created_at: created,
        updated_at: created,
      });
      continue;
    }
    const listing = existing[Math.floor(random() * existing.length)]!;
    if (roll < 0.75) change(listing, { ...listing, price: listing.price + 1 });
    else if (roll < 0.85) change(listing, { ...listing, type: LISTING_TYPES[Math.floor(random() * LISTING_TYPES.length)]! });
    else if (roll < 0.95) change(listing, { ...listing, status: listing.status === 'active' ? 'archived' : 'active' });
    else change(listing, undefined);

    if (step % 100 === 0 || step > 2_900) {
      const listed = [...live.values()].filter((one) => one.status === 'active').sort(byCreation);
      assert.deepEqual(ids(index.active), ids(listed), `active, step ${step}`);
      for (const type of LISTING_TYPES) {
        assert.deepEqual(ids(index.byType.get(type) ?? []), ids(listed.filter((one) => one.type === type)), `type ${type}, step ${step}`);
      }
      for (const owner of owners) {
        assert.deepEqual(ids(index.byOwner.get(owner) ?? []), ids(listed.filter((one) => one.owner_id === owner)), `owner ${owner}, step ${step}`);
      }
      // The arrays hold the current records, not older copies.
      for (const listing of index.active) assert.equal(listing, live.get(listing.id));
    }
  }
});
