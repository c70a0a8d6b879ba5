// What answers a listing search that is not a slice of a sorted array (text, prices, both type
// and owner, the sorts by price and title): the seam between ListingIndex (index.ts) and the
// search module's index (src/modules/search/, when MARKETPLACE_MODULES loads it), or else the
// core's scan of the listed listings (scanning-search.ts). Both give the same answers: the
// same matches (each word of `q` starts a word of the title, description or a tag, words.ts),
// in the same order, with the same ties.

import { compareText } from '../domain/order.ts';
import type { ListingRecord } from '../domain/records.ts';

export type SortKey = 'created_at' | '-created_at' | 'price' | '-price' | 'title';

/** What a search asks besides its sort and page; `words` as queryWords() gives them. */
export interface SearchFilter {
  type: string | null;
  ownerId: string | null;
  minPrice: number | null;
  maxPrice: number | null;
  words: readonly string[];
}

/** One page of a search's matches, and how many there are in all. */
export interface SearchAnswer {
  items: ListingRecord[];
  total: number;
  /** Every match in sort order when the search had them all sorted anyway (ListingIndex keeps them for the next pages), else null. */
  sorted: ListingRecord[] | null;
}

/**
 * Follows the listed listings (ListingIndex tells it every change) and answers searches over
 * them. Orders: created_at by (created_at, id); price by (price, id); title by (lower-cased
 * title, id) as compareLowerCased; a "-" sort is the exact reverse, ties included.
 */
export interface ListingSearch {
  /** False while it is still taking in the listings present at start; `find` must wait for whenReady(). */
  readonly ready: boolean;
  whenReady(): Promise<void>;
  /** The listings listed when it is installed, in (created_at, id) order; the array is its to keep. */
  addAll(listings: ListingRecord[]): void;
  add(listing: ListingRecord): void;
  /** A listed listing changed and stays listed (same id). */
  update(after: ListingRecord): void;
  remove(listing: ListingRecord): void;
  /** The matches of `filter` at ranks [start, start + limit) in `sort` order, and their total. */
  find(filter: SearchFilter, sort: SortKey, start: number, limit: number): SearchAnswer;
}

/**
 * compareText(left.toLowerCase(), right.toLowerCase()) without making either string: ASCII text
 * (nearly every title) is compared code by code with A-Z folded; anything else is lower-cased.
 * The order of `sort=title`, ties then by id.
 */
export function compareLowerCased(left: string, right: string): number {
  const length = Math.min(left.length, right.length);
  for (let position = 0; position < length; position += 1) {
    let leftCode = left.charCodeAt(position);
    let rightCode = right.charCodeAt(position);
    if (leftCode >= 128 || rightCode >= 128) return compareText(left.toLowerCase(), right.toLowerCase());
    if (leftCode === rightCode) continue;
    if (leftCode >= 65 && leftCode <= 90) leftCode += 32;
    if (rightCode >= 65 && rightCode <= 90) rightCode += 32;
    if (leftCode !== rightCode) return leftCode - rightCode;
  }
  // One starts the other: lower-casing never makes the rest empty, so the shorter comes first.
  return left.length - right.length;
}
