// Pages and look-ups assembled from each listing's kept JSON bytes: the same text JSON.stringify
// makes, and tags that follow the content (equal content, equal tag, on any instance; any
// change to a listing, the order or the pagination, a new tag).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ListingRecord } from '../../src/domain/records.ts';
import { SerialisedListings } from '../../src/listings/serialised.ts';

function listing(index: number, changes: Partial<ListingRecord> = {}): ListingRecord {
  return {
    id: `lst_${index}`,
    title: `Tool ${index} — “quoted” 🚀`,
    description: 'Line one\nline "two" \\ three',
    type: 'TOOL',
    price: 9.5 + index,
    tags: ['a', 'ünïcode'],
    status: 'active',
    owner_id: 'usr_1',
    created_at: '2026-11-25T10:00:00.000Z',
    updated_at: '2026-11-25T10:00:00.000Z',
    ...changes,
  };
}

const PAGINATION = { page: 1, limit: 20, total: 3, total_pages: 1 };

test('a page is the same text as JSON.stringify({ data, pagination }), and a shown listing that of { data }', () => {
  const serialised = new SerialisedListings();
  const listings = [listing(1), listing(2), listing(3)];
  const page = serialised.page(listings, PAGINATION);
  assert.equal(page.bytes.toString('utf8'), JSON.stringify({ data: listings, pagination: PAGINATION }));
  assert.equal(serialised.page([], { ...PAGINATION, total: 0 }).bytes.toString('utf8'), JSON.stringify({ data: [], pagination: { ...PAGINATION, total: 0 } }));
  assert.equal(serialised.shown(listings[0]!).bytes.toString('utf8'), JSON.stringify({ data: listings[0] }));
  assert.match(page.etag, /^"[A-Za-z0-9_-]+"$/);
});

test('equal content gets an equal page tag from another instance; any change gets a new one', () => {
  const listings = [listing(1), listing(2), listing(3)];
  const tag = new SerialisedListings().page(listings, PAGINATION).etag;
  // Another instance (or the same server after a restart), with copies of the records.
  const elsewhere = new SerialisedListings();
  assert.equal(elsewhere.page(listings.map((one) => ({ ...one })), PAGINATION).etag, tag);

  const changedTitle = [listing(1), listing(2, { title: 'Tool 2, renamed' }), listing(3)];
  const reordered = [listing(2), listing(1), listing(3)];
  const tags = [
    tag,
    elsewhere.page(changedTitle, PAGINATION).etag,
    elsewhere.page(reordered, PAGINATION).etag,
    elsewhere.page(listings, { ...PAGINATION, total: 4 }).etag,
    elsewhere.page(listings.slice(0, 2), PAGINATION).etag,
  ];
  assert.equal(new Set(tags).size, tags.length, `every change gives a new tag: ${tags.join(' ')}`);
  // A changed record is a new object: the kept bytes follow it, and the old content comes back to the old tag.
  assert.equal(elsewhere.page(listings, PAGINATION).etag, tag);
  assert.equal(elsewhere.page(changedTitle, PAGINATION).bytes.toString('utf8'), JSON.stringify({ data: changedTitle, pagination: PAGINATION }));
});

test('kept bytes own their memory: a kept slice of Node\'s shared 8 KiB buffer pool would keep the whole pool alive', () => {
  const serialised = new SerialisedListings();
  const listings = [listing(1), listing(2)];
  // Small pages too: a page of one listing is far below the pool's 4 KiB cut-off.
  const kept = [serialised.shown(listings[0]!).bytes, serialised.page(listings.slice(0, 1), PAGINATION).bytes, serialised.page(listings, PAGINATION).bytes];
  for (const bytes of kept) assert.equal(bytes.buffer.byteLength, bytes.byteLength, `${bytes.byteLength} bytes in an ArrayBuffer of ${bytes.buffer.byteLength}`);
});
