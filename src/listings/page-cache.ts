// Pages of GET /v1/listings kept ready to send: the bytes, their ETag and which listings they
// show (impressions are counted on every hit). Any listing write drops every page at once, so
// no client sees a page older than the last acknowledged write; otherwise a page lives 30 s.

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

export interface CachedPage {
  bytes: Buffer;
  etag: string;
  listingIds: string[];
}

export class ListingPageCache {
  private readonly pages: TtlCache<string, CachedPage>;

  constructor(monotonicNow: () => number) {
    this.pages = new TtlCache({ ttlMs: PAGE_TTL_MS, maxEntries: MAX_PAGES, monotonicNow, weigh: (page) => page.bytes.length, maxWeight: MAX_PAGE_BYTES });
  }

  /** The page kept under `cacheKey` (see `queryCacheKey` in search.ts), if still fresh. */
  get(cacheKey: string): CachedPage | undefined {
    return this.pages.get(cacheKey);
  }

  set(cacheKey: string, page: CachedPage): void {
    this.pages.set(cacheKey, page);
  }

  /** Wired to the store's changes in app.ts. A user's change may hide or show their listings (a suspension). */
  onStoreChange(change: ChangeEvent): void {
    if (change.collection === LISTINGS || change.collection === USERS) this.pages.clear();
  }
}
