// Pages of GET /v1/listings kept ready to send: the bytes, their ETag and which listings they
// show (impressions are counted on every hit). Any listing write drops every page at once, so
// no client sees a page older than the last acknowledged write; otherwise a page lives 30 s.
// A page is kept the second time it is made within the last 2,000 misses, not the first: pages
// asked for again soon (a home page, a popular search, a client paging through) are kept, and
// a stream of distinct searches, which a cache of 2,000 pages could not serve again anyway,
// does not churn through it. That churn was the largest cost at a million listings: every page
// kept and dropped a little later lived long enough to reach the old generation of the heap,
// and the full collections it caused (tens of ms each, every two seconds) set the p99.

import { LISTINGS, USERS } from '../domain/records.ts';
import { TtlCache } from '../limits/ttl-cache.ts';
import type { ChangeEvent } from '../store/store.ts';

const PAGE_TTL_MS = 30_000;
const MAX_PAGES = 2_000;
/**
 * The bytes all kept pages may hold: by count alone, 2,000 distinct queries for pages of long
 * listings pinned about a gigabyte for as long as nobody asked for them again.
 */
const MAX_PAGE_BYTES = 32 * 1024 * 1024;
/** Keys of pages made once that are remembered. */
const MADE_ONCE_KEPT = 500;

export interface CachedPage {
  bytes: Buffer;
  etag: string;
  listingIds: string[];
}

export class ListingPageCache {
  private readonly pages: TtlCache<string, CachedPage>;
  /** Keys of pages made once and not kept, oldest first (bounded like the pages). */
  private readonly madeOnce = new Set<string>();

  constructor(monotonicNow: () => number) {
    this.pages = new TtlCache({ ttlMs: PAGE_TTL_MS, maxEntries: MAX_PAGES, monotonicNow, weigh: (page) => page.bytes.length, maxWeight: MAX_PAGE_BYTES });
  }

  /** The page kept under `cacheKey` (see `queryCacheKey` in search.ts), if still fresh. */
  get(cacheKey: string): CachedPage | undefined {
    return this.pages.get(cacheKey);
  }

  /** Offers a page just made: kept if it was made once before, recently. */
  offer(cacheKey: string, page: CachedPage): void {
    if (this.madeOnce.delete(cacheKey)) {
      this.pages.set(cacheKey, page);
      return;
    }
    if (this.madeOnce.size >= MADE_ONCE_KEPT) this.madeOnce.delete(this.madeOnce.values().next().value!);
    this.madeOnce.add(cacheKey);
  }

  /** Wired to the store's changes in app.ts. A user's change may hide or show their listings (a suspension). */
  onStoreChange(change: ChangeEvent): void {
    if (change.collection === LISTINGS || change.collection === USERS) this.pages.clear();
    // Kept keys only, no pages: a page asked for before a write is still worth keeping after it.
  }
}
