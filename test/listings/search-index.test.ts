// The search index (the search module's) answers exactly what a plain filter over every listing
// answers, and so does the core's scan used without the module: thousands of random writes
// (creates, updates of every field, archives, removals, suspensions of owners) through a real
// store, each followed now and then by random queries of every filter, text, sort and page; then
// again after a restart that loads the log, with writes arriving while the words are still being
// indexed in slices. The expected answers come from the records alone,
// with the contract's rule written out here independently of the server's code.
// Not in test:unit (slow: 3,300 durable writes and 2,000 compared queries); npm test runs it.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LISTINGS, LISTING_TYPES, USERS, type ListingRecord, type UserRecord } from '../../src/domain/records.ts';
import { ListingIndex } from '../../src/listings/index.ts';
import { findListings, parseListingQuery } from '../../src/listings/search.ts';
import { ListingSearchIndex } from '../../src/modules/search/search-index.ts';
import { Store } from '../../src/store/store.ts';
import { temporaryDir } from '../helpers/server.ts';
import { OWNERS, plainAnswer, PRICES, randomQuery, seededRandom, VOCABULARY } from './search-reference.ts';

/** Random writes through the store: creates, changes of every field, archives, removals, suspensions. */
class Writer {
  private step = 0;
  private readonly store: Store;
  private readonly random: () => number;

  constructor(store: Store, random: () => number) {
    this.store = store;
    this.random = random;
  }

  private pick<Item>(items: readonly Item[]): Item {
    return items[Math.floor(this.random() * items.length)]!;
  }

  private text(words: number): string {
    return Array.from({ length: words }, () => this.pick(VOCABULARY)).join(this.pick([' ', ', ', ' — ', '/']));
  }

  async writeOne(): Promise<void> {
    this.step += 1;
    const listings = [...this.store.values(LISTINGS)];
    const roll = this.random();
    // Three listings a millisecond, so ties by id are common; now and then one dated in the past.
    const createdAt = new Date(Date.UTC(2026, 0, 1) + Math.floor(this.step / 3) - (this.random() < 0.05 ? 100_000 : 0)).toISOString();
    if (listings.length < 20 || roll < 0.45) {
      const listing: ListingRecord = {
        id: `lst_${this.step.toString(36)}${Math.floor(this.random() * 1e9).toString(36)}`,
        title: this.text(1 + Math.floor(this.random() * 3)),
        description: this.random() < 0.2 ? '' : this.text(Math.floor(this.random() * 8)),
        type: this.pick(LISTING_TYPES),
        price: this.pick(PRICES),
        tags: Array.from({ length: Math.floor(this.random() * 3) }, () => this.pick(VOCABULARY)),
        status: 'active',
        owner_id: this.pick(OWNERS),
        created_at: createdAt,
        updated_at: createdAt,
      };
      return this.store.write([{ op: 'put', collection: LISTINGS, id: listing.id, data: listing }]);
    }
    const listing = this.pick(listings);
    if (roll < 0.8) {
      const field = this.pick(['title', 'description', 'tags', 'type', 'price', 'all']);
      const changed: ListingRecord = {
        ...listing,
        title: field === 'title' || field === 'all' ? this.text(2) : listing.title,
        description: field === 'description' || field === 'all' ? this.text(5) : listing.description,
        tags: field === 'tags' || field === 'all' ? [this.pick(VOCABULARY)] : listing.tags,
        type: field === 'type' || field === 'all' ? this.pick(LISTING_TYPES) : listing.type,
        price: field === 'price' || field === 'all' ? this.pick(PRICES) : listing.price,
      };
      return this.store.write([{ op: 'put', collection: LISTINGS, id: listing.id, data: changed }]);
    }
    const archived: ListingRecord = { ...listing, status: 'archived' };
    if (roll < 0.9) return this.store.write([{ op: 'put', collection: LISTINGS, id: listing.id, data: archived }]);
    if (roll < 0.97) return this.store.write([{ op: 'del', collection: LISTINGS, id: listing.id }]);
    // An owner suspended, or back in good standing: their listings leave or return.
    const owner = this.pick(OWNERS);
    const before = this.store.get(USERS, owner)!;
    const user: UserRecord = { ...before, status: (before.status ?? 'active') === 'active' ? 'suspended' : 'active' };
    return this.store.write([{ op: 'put', collection: USERS, id: owner, data: user }]);
  }
}

async function openStore(dataDir: string): Promise<Store> {
  return Store.open({ dataDir, warn: () => {} });
}

function user(id: string): UserRecord {
  const at = new Date(Date.UTC(2026, 0, 1)).toISOString();
  return { id, name: id, email: `${id}@example.com`, bio: '', website: '', avatar_url: '', role: 'creator', created_at: at, updated_at: at, status: 'active' };
}

function checkQueries(store: Store, index: ListingIndex, random: () => number, count: number, when: string): void {
  const suspended = new Set([...store.values(USERS)].filter((user) => (user.status ?? 'active') !== 'active').map((user) => user.id));
  for (let query = 0; query < count; query += 1) {
    const params = randomQuery(random);
    assert.deepEqual(indexAnswer(index, params), plainAnswer(store.values(LISTINGS), suspended, params), `${when}: ?${params}`);
  }
}

/** A ListingIndex searched by the search module's index, as a server with the module has it. */
function indexWithSearch(store: Store, search = new ListingSearchIndex()): ListingIndex {
  const index = new ListingIndex(store);
  index.useSearch(search);
  return index;
}

function indexAnswer(index: ListingIndex, params: URLSearchParams): { ids: string[]; total: number } {
  const { items, total } = findListings(index, parseListingQuery(params));
  return { ids: items.map((listing) => listing.id), total };
}

test('the index answers what a plain filter answers: 3,000 random writes and 2,000 random queries, then after a restart with writes during the word load', { timeout: 300_000 }, async (t) => {
  const dataDir = temporaryDir(t);
  const random = seededRandom(20261126);
  let store = await openStore(dataDir);
  await store.write(OWNERS.map((id) => ({ op: 'put' as const, collection: USERS, id, data: user(id) })));
  let index = indexWithSearch(store);
  // Without the search module: the same listings, searched by the core's scan.
  const scanning = new ListingIndex(store);
  store.onChange((change) => index.onStoreChange(change));
  store.onChange((change) => scanning.onStoreChange(change));
  let writer = new Writer(store, random);
  for (let write = 0; write < 3_000; write += 1) {
    await writer.writeOne();
    if (write % 5 === 0) checkQueries(store, index, random, 2, `after write ${write}`);
    if (write % 5 === 0) checkQueries(store, scanning, random, 2, `scanning, after write ${write}`);
  }
  checkQueries(store, index, random, 800, 'after 3,000 writes');
  checkQueries(store, scanning, random, 800, 'scanning, after 3,000 writes');
  const listed = index.active.length;
  assert.ok(listed > 200, `enough listings to search (${listed})`);
  await store.close();

  // A restart: the log is loaded, the search index fills 37 listings a slice, and between
  // slices (run here by hand, in place of setImmediate) come three writes each. The first
  // searches by price and by title then start those orders, made 50 slots a slice, with
  // writes between their slices too.
  store = await openStore(dataDir);
  let slicesDue: Array<() => void> = [];
  index = indexWithSearch(store, new ListingSearchIndex({ atOnce: 0, slice: 37, orderSlice: 50, schedule: (next) => slicesDue.push(next) }));
  store.onChange((change) => index.onStoreChange(change));
  writer = new Writer(store, random);
  const runSlicesWithWrites = async (): Promise<number> => {
    let slices = 0;
    while (slicesDue.length > 0) {
      for (let write = 0; write < 3; write += 1) await writer.writeOne();
      const due = slicesDue;
      slicesDue = [];
      for (const run of due) run();
      slices += 1;
    }
    return slices;
  };
  const loadSlices = await runSlicesWithWrites();
  assert.ok(index.search.ready && loadSlices > 10, `the load took ${loadSlices} slices, with writes between them`);
  checkQueries(store, index, random, 5, 'just after the load');
  for (const sort of ['price', 'title']) indexAnswer(index, new URLSearchParams({ sort }));
  const orderSlices = await runSlicesWithWrites();
  assert.ok(orderSlices > 10, `the orders took ${orderSlices} slices, with writes between them`);
  checkQueries(store, index, random, 800, 'after the restart');
  for (let write = 0; write < 300; write += 1) await writer.writeOne();
  checkQueries(store, index, random, 400, 'after the restart and 300 more writes');
  await store.close();
});

test('a one-letter q finds exactly the listings holding a word that starts with it, in sort order, with their total', async () => {
  const store = await Store.open({ dataDir: null, warn: () => {} });
  const at = new Date(Date.UTC(2026, 0, 1)).toISOString();
  const ops = [];
  for (let number = 0; number < 5_000; number += 1) {
    const listing: ListingRecord = {
      id: `lst_${number.toString().padStart(6, '0')}`,
      title: number % 100 === 0 ? `Zebra ${number}` : `Plain ${number}`,
      description: '',
      type: 'TOOL',
      price: number % 7,
      tags: [],
      status: 'active',
      owner_id: 'usr_a',
      created_at: at,
      updated_at: at,
    };
    ops.push({ op: 'put' as const, collection: LISTINGS, id: listing.id, data: listing });
  }
  await store.write(ops);
  const index = indexWithSearch(store);
  const { items, total } = findListings(index, parseListingQuery(new URLSearchParams('q=z&sort=price&limit=3')));
  assert.equal(total, 50);
  assert.deepEqual(
    items.map((listing) => listing.title),
    ['Zebra 0', 'Zebra 700', 'Zebra 1400'],
  );
  await store.close();
});
