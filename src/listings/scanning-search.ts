// Searches answered by reading the listed listings one by one, for a server without the search
// module (MARKETPLACE_MODULES without `search`): nothing is kept per listing beyond ListingIndex's
// sorted arrays, so a write costs no index upkeep, and a search costs a pass over the listings
// of its type or owner (or all of them) and a sort of its matches. The answers are the search
// index's (listing-search.ts says the rules), and ListingIndex keeps the sorted matches, so the
// next pages of the same search are slices.

import { compareText } from '../domain/order.ts';
import type { ListingRecord } from '../domain/records.ts';
import { compareLowerCased, type ListingSearch, type SearchAnswer, type SearchFilter, type SortKey } from './listing-search.ts';
import { listingWords } from './words.ts';

/** ListingIndex's arrays of listed listings, each in (created_at, id) order and kept so by it. */
export interface ListedListings {
  readonly active: readonly ListingRecord[];
  readonly byType: ReadonlyMap<string, readonly ListingRecord[]>;
  readonly byOwner: ReadonlyMap<string, readonly ListingRecord[]>;
}

const NONE: readonly ListingRecord[] = [];

const byPrice = (left: ListingRecord, right: ListingRecord): number => left.price - right.price || compareText(left.id, right.id);
const byTitle = (left: ListingRecord, right: ListingRecord): number => compareLowerCased(left.title, right.title) || compareText(left.id, right.id);

/**
 * Each listing's distinct words, made at its first text search and kept while the record lives
 * (records are immutable: an update is a new object).
 */
const wordsByListing = new WeakMap<ListingRecord, readonly string[]>();

function wordsOfListing(listing: ListingRecord): readonly string[] {
  let words = wordsByListing.get(listing);
  if (words === undefined) {
    words = [...listingWords(listing)];
    wordsByListing.set(listing, words);
  }
  return words;
}

export class ScanningListingSearch implements ListingSearch {
  readonly ready = true;
  private readonly listed: ListedListings;

  constructor(listed: ListedListings) {
    this.listed = listed;
  }

  whenReady(): Promise<void> {
    return Promise.resolve();
  }

  // The listed listings are ListingIndex's own arrays: nothing to keep up to date.
  addAll(): void {}
  add(): void {}
  update(): void {}
  remove(): void {}

  find(filter: SearchFilter, sort: SortKey, start: number, limit: number): SearchAnswer {
    const matches = this.candidates(filter).filter(matcher(filter));
    if (sort === '-created_at') matches.reverse();
    else if (sort === 'price') matches.sort(byPrice);
    else if (sort === '-price') matches.sort((left, right) => byPrice(right, left));
    else if (sort === 'title') matches.sort(byTitle);
    return { items: matches.slice(start, start + limit), total: matches.length, sorted: matches };
  }

  /** The smaller of the filter's type and owner arrays (every listed listing without either). */
  private candidates(filter: SearchFilter): readonly ListingRecord[] {
    const { active, byType, byOwner } = this.listed;
    const ofType = filter.type === null ? active : (byType.get(filter.type) ?? NONE);
    const ofOwner = filter.ownerId === null ? active : (byOwner.get(filter.ownerId) ?? NONE);
    return ofOwner.length < ofType.length ? ofOwner : ofType;
  }
}

/** Whether a listing matches every part of `filter`. */
function matcher(filter: SearchFilter): (listing: ListingRecord) => boolean {
  const { type, ownerId, words } = filter;
  const minPrice = filter.minPrice ?? -Infinity;
  const maxPrice = filter.maxPrice ?? Infinity;
  return (listing) => {
    if (type !== null && listing.type !== type) return false;
    if (ownerId !== null && listing.owner_id !== ownerId) return false;
    if (listing.price < minPrice || listing.price > maxPrice) return false;
    if (words.length === 0) return true;
    const held = wordsOfListing(listing);
    return words.every((wanted) => held.some((word) => word.startsWith(wanted)));
  };
}
