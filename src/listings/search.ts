// GET /v1/listings' query: parsing and checking the parameters, and finding one page of
// matches. In the default order with at most a type or an owner, a page is a slice of an index
// kept in that order; anything else (text, prices, both type and owner, the other sorts) is
// answered by the index's ListingSearch (listing-search.ts): the search module's index, from its
// smallest candidate list with the page taken by a bounded heap, or without the module a scan
// of the listed listings. `q` matches by word prefix (words.ts).

import { badRequest } from '../domain/errors.ts';
import { checkQueryNames, readPageRequest, type PageRequest } from '../http/lists.ts';
import { codePointLength } from '../http/validation.ts';
import { LISTING_TYPES, type ListingRecord } from '../domain/records.ts';
import { SORT_KEYS, type ListingIndex, type SortKey } from './index.ts';
import { queryWords } from './words.ts';

export const LISTING_QUERY_PARAMS = ['page', 'limit', 'type', 'q', 'min_price', 'max_price', 'owner_id', 'sort'] as const;

export interface ListingQuery extends PageRequest {
  type: string | null;
  q: string | null;
  /** The words of `q` that decide its matches (queryWords): none when q has no letters or digits. */
  words: string[];
  minPrice: number | null;
  maxPrice: number | null;
  ownerId: string | null;
  sort: SortKey;
}

export function parseListingQuery(query: URLSearchParams): ListingQuery {
  checkQueryNames(query, LISTING_QUERY_PARAMS);
  const { page, limit } = readPageRequest(query);
  const type = query.get('type');
  if (type !== null && !(LISTING_TYPES as readonly string[]).includes(type)) {
    throw badRequest(`Query parameter "type" must be one of ${LISTING_TYPES.join(', ')}.`, { type: 'unknown type' });
  }
  const sort = query.get('sort') ?? '-created_at';
  if (!(SORT_KEYS as readonly string[]).includes(sort)) {
    throw badRequest(`Query parameter "sort" must be one of ${SORT_KEYS.join(', ')}.`, { sort: 'unknown sort' });
  }
  const q = query.get('q');
  // Counted in code points, as the document's maxLength counts them (an emoji is one).
  if (q !== null && codePointLength(q) > 200) throw badRequest('Query parameter "q" must be at most 200 characters.', { q: 'too long' });
  const minPrice = priceParam(query, 'min_price');
  const maxPrice = priceParam(query, 'max_price');
  if (minPrice !== null && maxPrice !== null && minPrice > maxPrice) {
    throw badRequest('min_price must not be greater than max_price.', { min_price: 'greater than max_price' });
  }
  return {
    page,
    limit,
    type,
    q: q === null || q.trim() === '' ? null : q.trim().toLowerCase(),
    words: q === null ? [] : queryWords(q),
    minPrice,
    maxPrice,
    ownerId: query.get('owner_id'),
    sort: sort as SortKey,
  };
}

function priceParam(query: URLSearchParams, name: string): number | null {
  const raw = query.get(name);
  if (raw === null) return null;
  if (!/^\d{1,7}(\.\d{1,2})?$/.test(raw)) {
    throw badRequest(`Query parameter "${name}" must be a number ≥ 0 with at most 2 decimals.`, { [name]: 'not a price' });
  }
  return Number(raw);
}

/** The query without its page and limit, the key of its kept matches: equal exactly when the filters are. */
function filterKey(query: ListingQuery): string {
  // JSON, not a separator join: a q holding the separator must not pose as another filter.
  // By q's deciding words: "Zebra" and "zeb zebra" are one search.
  return JSON.stringify([query.type, query.words, query.minPrice, query.maxPrice, query.ownerId, query.sort]);
}

/** The whole query, the key of the page cache (page and limit are whole numbers, so the prefix is unambiguous). */
export function queryCacheKey(query: ListingQuery): string {
  return `${query.page},${query.limit},${filterKey(query)}`;
}

/**
 * Whether a page of this query is a slice of a sorted array (the default order, with at most a
 * type or an owner), or needs the index's search (the module's may still be loading just after a start).
 */
export function isSliceable(query: ListingQuery): boolean {
  const byCreation = query.sort === 'created_at' || query.sort === '-created_at';
  return byCreation && query.words.length === 0 && query.minPrice === null && query.maxPrice === null && (query.type === null || query.ownerId === null);
}

export function findListings(index: ListingIndex, query: ListingQuery): { items: ListingRecord[]; total: number } {
  const start = (query.page - 1) * query.limit;
  if (isSliceable(query)) {
    let base = index.active;
    if (query.type !== null) base = index.byType.get(query.type) ?? [];
    if (query.ownerId !== null) base = index.byOwner.get(query.ownerId) ?? [];
    const descending = query.sort === '-created_at';
    const items: ListingRecord[] = [];
    for (let rank = start; rank < Math.min(start + query.limit, base.length); rank += 1) {
      items.push(base[descending ? base.length - 1 - rank : rank]!);
    }
    return { items, total: base.length };
  }
  const key = filterKey(query);
  const kept = index.keptMatches(key);
  if (kept !== undefined) return { items: kept.slice(start, start + query.limit), total: kept.length };
  const filter = { type: query.type, ownerId: query.ownerId, minPrice: query.minPrice, maxPrice: query.maxPrice, words: query.words };
  const { items, total, sorted } = index.search.find(filter, query.sort, start, query.limit);
  if (sorted !== null) index.keepMatches(key, sorted);
  return { items, total };
}

/**
 * The operator's moderation search (not GET /v1/listings): a case-insensitive substring of
 * title, description or tags, over every listing whatever its status.
 */
/** `needle` must be lower-case already. */
export function matchesText(listing: ListingRecord, needle: string): boolean {
  // A needle holding the separator could match across two fields: check those field by field.
  if (needle.includes(FIELD_SEPARATOR)) return fieldsOf(listing).some((field) => field.toLowerCase().includes(needle));
  return searchTextOf(listing).includes(needle);
}

const FIELD_SEPARATOR = '\u0000';

/**
 * Each listing's searchable fields, lower-cased and joined, made at its first text search and
 * kept while the record lives (records are immutable; an update is a new object). Lower-casing
 * every field of every listing on each search was most of a filtered query's cost; one kept
 * string scans about twice as fast (10,000 listings: 1.8 → 0.8 ms) for its text's size in memory.
 */
const searchTexts = new WeakMap<ListingRecord, string>();

function searchTextOf(listing: ListingRecord): string {
  let text = searchTexts.get(listing);
  if (text === undefined) {
    text = fieldsOf(listing).join(FIELD_SEPARATOR).toLowerCase();
    searchTexts.set(listing, text);
  }
  return text;
}

function fieldsOf(listing: ListingRecord): string[] {
  return [listing.title, listing.description, ...listing.tags];
}
