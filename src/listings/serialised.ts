// Listings kept as JSON bytes, so pages and look-ups are assembled by copying bytes instead of
// serialising records again: that was most of the own cost of a page miss and of a look-up,
// and hashing the answer much of the rest (profiled). Each listing's bytes are hashed once, and
// a page's tag is made from those hashes, not from its whole body. Records are immutable and a
// change stores a new object, so an entry made from the current object is never stale; one
// made from an older object is simply made again. Kept bytes have memory of their own
// (kept-bytes.ts). About 0.5 KiB each (twice that once shown alone); past 20,000 the oldest
// goes first.

import type { ListingRecord } from '../domain/records.ts';
import { digestOf, etagOf, etagOfParts } from '../http/conditional.ts';
import { keptCopy } from '../http/kept-bytes.ts';
import type { Pagination } from '../http/lists.ts';

const MAX_SERIALISED_LISTINGS = 20_000;

interface SerialisedListing {
  listing: ListingRecord;
  /** JSON.stringify(listing), as UTF-8. */
  bytes: Buffer;
  /** A hash of `bytes`, standing for the listing in the tag of a page that shows it. */
  digest: string;
  /** The GET /v1/listings/:id answer, made on first request. */
  shown: { bytes: Buffer; etag: string } | null;
}

const PAGE_OPEN = Buffer.from('{"data":[');
const COMMA = Buffer.from(',');
const SHOWN_OPEN = Buffer.from('{"data":');
const SHOWN_CLOSE = Buffer.from('}');

export class SerialisedListings {
  private readonly entries = new Map<string, SerialisedListing>();

  /**
   * The bytes of `{ "data": listings, "pagination": pagination }`, the same text as
   * JSON.stringify makes, and their tag.
   */
  page(listings: readonly ListingRecord[], pagination: Pagination): { bytes: Buffer; etag: string } {
    const paginationJson = JSON.stringify(pagination);
    const parts: Buffer[] = [PAGE_OPEN];
    const digests: string[] = [];
    for (const listing of listings) {
      const entry = this.entryOf(listing);
      if (digests.length > 0) parts.push(COMMA);
      parts.push(entry.bytes);
      digests.push(entry.digest);
    }
    parts.push(Buffer.from(`],"pagination":${paginationJson}}`));
    return { bytes: keptCopy(parts), etag: etagOfParts(digests, paginationJson) };
  }

  /** The bytes of `{ "data": listing }` and their ETag. */
  shown(listing: ListingRecord): { bytes: Buffer; etag: string } {
    const entry = this.entryOf(listing);
    if (entry.shown === null) {
      const bytes = keptCopy([SHOWN_OPEN, entry.bytes, SHOWN_CLOSE]);
      entry.shown = { bytes, etag: etagOf(bytes) };
    }
    return entry.shown;
  }

  /**
   * Drops a changed listing's bytes at once: they would be made again on its next use anyway,
   * and the old text must not outlive the change (an erasure empties it).
   */
  forget(listingId: string): void {
    this.entries.delete(listingId);
  }

  private entryOf(listing: ListingRecord): SerialisedListing {
    let entry = this.entries.get(listing.id);
    if (entry === undefined || entry.listing !== listing) {
      const bytes = keptCopy([Buffer.from(JSON.stringify(listing))]);
      entry = { listing, bytes, digest: digestOf(bytes), shown: null };
      this.entries.delete(listing.id);
      if (this.entries.size >= MAX_SERIALISED_LISTINGS) this.entries.delete(this.entries.keys().next().value!);
      this.entries.set(listing.id, entry);
    }
    return entry;
  }
}
