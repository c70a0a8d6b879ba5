// Listed listings kept in order, so a page of the default sort is a slice, not a sort: one
// array of every listed listing ordered by (created_at, id), and one per type and per owner.
// Listed = active and owned by a user in good standing (a suspension hides its listings).
// Every other filter and sort is answered by a ListingSearch (listing-search.ts): the search
// module's index (columns, word lists) once the module installs it with useSearch(), else a scan
// of these arrays (scanning-search.ts); both follow each listing change here. The matches of
// recent searches that were sorted whole are kept until the next listing write, so paging
// through them is a slice.

import { byCreation } from '../domain/order.ts';
import { LISTINGS, USERS, userStatus, type ListingRecord, type UserRecord } from '../domain/records.ts';
import type { ChangeEvent, Store } from '../store/store.ts';
import type { ListingSearch, SortKey } from './listing-search.ts';
import { ScanningListingSearch } from './scanning-search.ts';

/** Filtered results kept at once, and listings referenced by them all (memory stays bounded). */
const MAX_KEPT_FILTERS = 1_000;
const MAX_KEPT_MATCHES = 1_000_000;

export type { SortKey };
export const SORT_KEYS: readonly SortKey[] = ['created_at', '-created_at', 'price', '-price', 'title'];

export class ListingIndex {
  /** Every active listing, ordered by (created_at, id). */
  readonly active: ListingRecord[] = [];
  readonly byType = new Map<string, ListingRecord[]>();
  readonly byOwner = new Map<string, ListingRecord[]>();
  /** Answers filters, text search and the other sorts over the same listings: a scan of them until useSearch(). */
  search: ListingSearch = new ScanningListingSearch(this);
  /** Filter → its matches in display order; paging through a search reuses them. */
  private readonly filtered = new Map<string, ListingRecord[]>();
  private keptMatchCount = 0;
  /** Bumped on every listing change; cached pages and views belong to one version. */
  version = 0;
  /** Owners whose listings are hidden (suspended or erased users). */
  private readonly hiddenOwners = new Set<string>();
  private readonly store: Store;

  constructor(store: Store) {
    this.store = store;
    for (const user of store.values(USERS)) if (userStatus(user) !== 'active') this.hiddenOwners.add(user.id);
    const listings = [...store.values(LISTINGS)].filter((listing) => this.isListed(listing));
    listings.sort(byCreation);
    for (const listing of listings) {
      this.active.push(listing);
      groupOf(this.byType, listing.type).push(listing);
      groupOf(this.byOwner, listing.owner_id).push(listing);
    }
  }

  /**
   * From now on `search` (the search module's index, src/module.ts useListingSearch) answers the
   * searches: it takes in the listings listed now, and follows every change from here on.
   */
  useSearch(search: ListingSearch): void {
    this.invalidate();
    search.addAll(this.active.slice());
    this.search = search;
  }

  /**
   * Moves the changed listing in or out of the sorted arrays, and a suspended (or reinstated)
   * user's listings with them; wired to the store's changes in app.ts.
   */
  onStoreChange({ collection, before, after }: ChangeEvent): void {
    if (collection === USERS) this.onUserChange(after as UserRecord | undefined);
    if (collection !== LISTINGS) return;
    this.invalidate();
    const wasListed = before !== undefined && this.isListed(before as ListingRecord);
    const isListed = after !== undefined && this.isListed(after as ListingRecord);
    if (wasListed && isListed) this.replace(before as ListingRecord, after as ListingRecord);
    else if (wasListed) this.remove(before as ListingRecord);
    else if (isListed) this.insert(after as ListingRecord);
  }

  private isListed(listing: ListingRecord): boolean {
    return listing.status === 'active' && !this.hiddenOwners.has(listing.owner_id);
  }

  private invalidate(): void {
    this.version += 1;
    // Once per listing write; between reads the map is mostly empty already (clearing allocates).
    if (this.filtered.size > 0) this.filtered.clear();
    this.keptMatchCount = 0;
  }

  /** A suspension (or its end) hides (or shows again) every active listing of that user. */
  private onUserChange(after: UserRecord | undefined): void {
    if (after === undefined) return;
    const wasHidden = this.hiddenOwners.has(after.id);
    const hidden = userStatus(after) !== 'active';
    if (wasHidden === hidden) return;
    const owned = [...this.store.values(LISTINGS)].filter((listing) => listing.owner_id === after.id && listing.status === 'active');
    this.invalidate();
    if (hidden) {
      for (const listing of owned) this.remove(listing);
      this.hiddenOwners.add(after.id);
    } else {
      this.hiddenOwners.delete(after.id);
      for (const listing of owned) this.insert(listing);
    }
  }

  /** The kept matches of one filter (everything but page and limit), if sorted whole since the last write. */
  keptMatches(filterKey: string): ListingRecord[] | undefined {
    return this.filtered.get(filterKey);
  }

  /**
   * Keeps the matches of one filter, sorted whole, until the next listing write: the next pages
   * of that search, and its total, are then slices. The oldest are dropped first when too many are kept.
   */
  keepMatches(filterKey: string, matches: ListingRecord[]): void {
    if (matches.length > MAX_KEPT_MATCHES) return;
    for (const [oldestKey, oldest] of this.filtered) {
      if (this.filtered.size < MAX_KEPT_FILTERS && this.keptMatchCount + matches.length <= MAX_KEPT_MATCHES) break;
      this.filtered.delete(oldestKey);
      this.keptMatchCount -= oldest.length;
    }
    this.filtered.set(filterKey, matches);
    this.keptMatchCount += matches.length;
  }

  private insert(listing: ListingRecord): void {
    this.search.add(listing);
    insertSorted(this.active, listing);
    insertSorted(groupOf(this.byType, listing.type), listing);
    insertSorted(groupOf(this.byOwner, listing.owner_id), listing);
  }

  /**
   * A listed listing changed and stays listed. Its place in (created_at, id) order never
   * changes, so it is put where it was, with no array moved; only a new type moves it
   * between the type arrays.
   */
  private replace(before: ListingRecord, after: ListingRecord): void {
    if (byCreation(before, after) !== 0) {
      this.remove(before);
      this.insert(after);
      return;
    }
    this.search.update(after);
    replaceSorted(this.active, before, after);
    replaceSorted(groupOf(this.byOwner, after.owner_id), before, after);
    if (before.type === after.type) replaceSorted(groupOf(this.byType, after.type), before, after);
    else {
      removeSorted(groupOf(this.byType, before.type), before);
      insertSorted(groupOf(this.byType, after.type), after);
    }
  }

  private remove(listing: ListingRecord): void {
    this.search.remove(listing);
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

/** How far from the end a new listing is looked for, and the later ones moved up by hand. */
const MOVED_BY_HAND = 64;

function insertSorted(items: ListingRecord[], listing: ListingRecord): void {
  // New listings are the newest, so they land at the end, or a few places before it: listings
  // made in the same millisecond are ordered by their random ids. Walking back from the end
  // and moving those few up costs less than a binary search and a splice, which on a long
  // array cost about as much as copying all of it (measured).
  let position = items.length;
  while (position > 0 && items.length - position < MOVED_BY_HAND && byCreation(items[position - 1]!, listing) > 0) position -= 1;
  if (position > 0 && byCreation(items[position - 1]!, listing) > 0) {
    // Far from the end (a restored or reinstated listing): found by binary search.
    items.splice(lowerBound(items, listing), 0, listing);
    return;
  }
  items.push(listing);
  for (let index = items.length - 1; index > position; index -= 1) items[index] = items[index - 1]!;
  items[position] = listing;
}

function replaceSorted(items: ListingRecord[], before: ListingRecord, after: ListingRecord): void {
  const position = lowerBound(items, before);
  if (items[position]?.id === before.id) items[position] = after;
  else insertSorted(items, after);
}

function removeSorted(items: ListingRecord[], listing: ListingRecord): void {
  const position = lowerBound(items, listing);
  if (items[position]?.id === listing.id) items.splice(position, 1);
}
