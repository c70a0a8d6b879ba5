// Listings kept as JSON text, so pages and look-ups are assembled from strings instead of
// serialising records again: that was most of the own cost of a page miss and of a look-up,
// and hashing a look-up's answer much of the rest (profiled). Records are immutable and a
// change stores a new object, so an entry made from the current object is never stale; one
// made from an older object is simply made again. About 0.4 KiB each (twice that once shown
// alone); past 20,000 the oldest goes first.

import type { ListingRecord } from '../domain/records.ts';
import { etagOf } from '../http/conditional.ts';

const MAX_SERIALISED_LISTINGS = 20_000;

interface SerialisedListing {
  listing: ListingRecord;
  json: string;
  /** The GET /v1/listings/:id answer, made on first request. */
  shown: { bytes: Buffer; etag: string } | null;
}

export class SerialisedListings {
  private readonly entries = new Map<string, SerialisedListing>();

  /** The same text as JSON.stringify(listing). */
  json(listing: ListingRecord): string {
    return this.entryOf(listing).json;
  }

  /** The bytes of `{ "data": listing }` and their ETag. */
  shown(listing: ListingRecord): { bytes: Buffer; etag: string } {
    const entry = this.entryOf(listing);
    if (entry.shown === null) {
      const bytes = Buffer.from(`{"data":${entry.json}}`);
      entry.shown = { bytes, etag: etagOf(bytes) };
    }
    return entry.shown;
  }

  private entryOf(listing: ListingRecord): SerialisedListing {
    let entry = this.entries.get(listing.id);
    if (entry === undefined || entry.listing !== listing) {
      entry = { listing, json: JSON.stringify(listing), shown: null };
      this.entries.delete(listing.id);
      if (this.entries.size >= MAX_SERIALISED_LISTINGS) this.entries.delete(this.entries.keys().next().value!);
      this.entries.set(listing.id, entry);
    }
    return entry;
  }
}
