// Active listings kept in order, so a page of the default sort is a slice, not a sort: one
// array of every active listing ordered by (created_at, id), and one per type and per owner.
// Other sorts, and the matches of recent filtered queries, are built on first use and kept
// until the next listing write.

import { byCreation, compareText } from '../domain/order.ts';
import { LISTINGS, type ListingRecord } from '../domain/records.ts';
import type { ChangeEvent, Store } from '../store/store.ts';

/** Filtered results kept at once, and listings referenced by them all (memory stays bounded). */
const MAX_KEPT_FILTERS = 1_000;
const MAX_KEPT_MATCHES = 1_000_000;

export type SortKey = 'created_at' | '-created_at' | 'price' | '-price' | 'title';
export const SORT_KEYS: readonly SortKey[] = ['created_at', '-created_at', 'price', '-price', 'title'];

function byPrice(left: ListingRecord, right: ListingRecord): number {
  return left.price - right.price || compareText(left.id, right.id);
}

function byTitle(left: ListingRecord, right: ListingRecord): number {
  return compareText(left.title.toLowerCase(), right.title.toLowerCase()) || compareText(left.id, right.id);
}

/** Sorted views: ascending order, read backwards for the descending sorts. */
const COMPARATORS = { created_at: byCreation, price: byPrice, title: byTitle } as const;

export class ListingIndex {
  /** Every active listing, ordered by (created_at, id). */
  readonly active: ListingRecord[] = [];
  readonly byType = new Map<string, ListingRecord[]>();
  readonly byOwner = new Map<string, ListingRecord[]>();
  private readonly derived = new Map<string, ListingRecord[]>();
  /** Filter → its matches in display order; paging through a search reuses them. */
  private readonly filtered = new Map<string, ListingRecord[]>();
  private keptMatches = 0;
  /** Bumped on every listing change; cached pages and views belong to one version. */
  version = 0;

  constructor(store: Store) {
    const listings = [...store.values(LISTINGS)].filter((listing) => listing.status === 'active');
    listings.sort(byCreation);
    for (const listing of listings) {
      this.active.push(listing);
      groupOf(this.byType, listing.type).push(listing);
      groupOf(this.byOwner, listing.owner_id).push(listing);
    }
  }

  /** Moves the changed listing in or out of the sorted arrays; wired to the store's changes in app.ts. */
  onStoreChange({ collection, before, after }: ChangeEvent): void {
    if (collection !== LISTINGS) return;
    this.version += 1;
    this.derived.clear();
    this.filtered.clear();
    this.keptMatches = 0;
    if (before && (before as ListingRecord).status === 'active') this.remove(before as ListingRecord);
    if (after && (after as ListingRecord).status === 'active') this.insert(after as ListingRecord);
  }

  /** `base` in ascending order of `sort`'s field (callers read it backwards for "-field"). */
  ordered(base: ListingRecord[], baseName: string, sort: SortKey): ListingRecord[] {
    const field = sort.replace('-', '') as keyof typeof COMPARATORS;
    if (field === 'created_at') return base;
    const cacheKey = `${baseName}|${field}`;
    let view = this.derived.get(cacheKey);
    if (!view) {
      view = [...base].sort(COMPARATORS[field]);
      this.derived.set(cacheKey, view);
    }
    return view;
  }

  /**
   * The matches of one filter (everything but page and limit), found once by `find` and kept
   * until the next listing write: every page of a search, and its total, then costs a slice
   * instead of a scan. The oldest are dropped first when too many are kept.
   */
  matchesOf(filterKey: string, find: () => ListingRecord[]): ListingRecord[] {
    let matches = this.filtered.get(filterKey);
    if (matches !== undefined) return matches;
    matches = find();
    if (matches.length > MAX_KEPT_MATCHES) return matches;
    for (const [oldestKey, oldest] of this.filtered) {
      if (this.filtered.size < MAX_KEPT_FILTERS && this.keptMatches + matches.length <= MAX_KEPT_MATCHES) break;
      this.filtered.delete(oldestKey);
      this.keptMatches -= oldest.length;
    }
    this.filtered.set(filterKey, matches);
    this.keptMatches += matches.length;
    return matches;
  }

  private insert(listing: ListingRecord): void {
    insertSorted(this.active, listing);
    insertSorted(groupOf(this.byType, listing.type), listing);
    insertSorted(groupOf(this.byOwner, listing.owner_id), listing);
  }

  private remove(listing: ListingRecord): void {
    removeSorted(this.active, listing);
    removeSorted(groupOf(this.byType, listing.type), listing);
    removeSorted(groupOf(this.byOwner, listing.owner_id), listing);
  }
}

function groupOf(groups: Map<string, ListingRecord[]>, name: string): ListingRecord[] {
  let group = groups.get(name);
  if (!group) {
    group = [];
    groups.set(name, group);
  }
  return group;
}

/** First position whose element is not before `listing` in (created_at, id) order. */
function lowerBound(items: ListingRecord[], listing: ListingRecord): number {
  let low = 0;
  let high = items.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (byCreation(items[middle]!, listing) < 0) low = middle + 1;
    else high = middle;
  }
  return low;
}

function insertSorted(items: ListingRecord[], listing: ListingRecord): void {
  // New listings are the newest: appending is the common case and costs nothing.
  const last = items[items.length - 1];
  if (last === undefined || byCreation(last, listing) < 0) items.push(listing);
  else items.splice(lowerBound(items, listing), 0, listing);
}

function removeSorted(items: ListingRecord[], listing: ListingRecord): void {
  const position = lowerBound(items, listing);
  if (items[position]?.id === listing.id) items.splice(position, 1);
}
