// The counters' building blocks: UTC hour and day arithmetic, a tally of requests by status
// class, and the hourly buckets kept per key and per listing. Plain mutable objects, so the
// request path only adds to numbers it already holds.

export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

export type Granularity = 'hour' | 'day';
export const GRANULARITIES: readonly Granularity[] = ['hour', 'day'];

export function bucketMsOf(granularity: Granularity): number {
  return granularity === 'day' ? DAY_MS : HOUR_MS;
}

/** The start of the UTC hour (or day, with DAY_MS) holding `wallMs`. */
export function floorTo(wallMs: number, sizeMs: number): number {
  return Math.floor(wallMs / sizeMs) * sizeMs;
}

export function ceilTo(wallMs: number, sizeMs: number): number {
  return Math.ceil(wallMs / sizeMs) * sizeMs;
}

/** Requests per status class, as the API shows them. */
export interface StatusCounts {
  '2xx': number;
  '3xx': number;
  '4xx': number;
  '5xx': number;
}

/** The counts of a tally as the API and the snapshots show them. */
export interface UsageCounts {
  requests: number;
  by_status: StatusCounts;
  rate_limited: number;
}

export class Tally {
  requests = 0;
  success = 0;
  redirect = 0;
  clientError = 0;
  serverError = 0;
  rateLimited = 0;

  add(status: number): void {
    this.requests += 1;
    if (status < 300) this.success += 1;
    else if (status < 400) this.redirect += 1;
    else if (status < 500) {
      this.clientError += 1;
      if (status === 429) this.rateLimited += 1;
    } else this.serverError += 1;
  }

  addTally(other: Tally): void {
    this.requests += other.requests;
    this.success += other.success;
    this.redirect += other.redirect;
    this.clientError += other.clientError;
    this.serverError += other.serverError;
    this.rateLimited += other.rateLimited;
  }

  /** 4xx and 5xx answers other than 429 (rate-limited requests are counted apart). */
  errors(): number {
    return this.clientError - this.rateLimited + this.serverError;
  }

  counts(): UsageCounts {
    return {
      requests: this.requests,
      by_status: { '2xx': this.success, '3xx': this.redirect, '4xx': this.clientError, '5xx': this.serverError },
      rate_limited: this.rateLimited,
    };
  }

  static fromCounts(counts: UsageCounts): Tally {
    const tally = new Tally();
    tally.requests = counts.requests;
    tally.success = counts.by_status['2xx'];
    tally.redirect = counts.by_status['3xx'];
    tally.clientError = counts.by_status['4xx'];
    tally.serverError = counts.by_status['5xx'];
    tally.rateLimited = counts.rate_limited;
    return tally;
  }
}

/** What every hourly bucket carries for the flush: changed since the last one, saved at all. */
interface BucketState {
  readonly start: number;
  /** Changed since the last successful flush; set once, so a bucket is queued once. */
  dirty: boolean;
  /** A snapshot of it is in the store (so dropping it needs a tombstone). */
  stored: boolean;
  /** Expired by the retention; a pending flush skips it. */
  dropped: boolean;
  /**
   * Records of other instances (a store that multi-instance servers wrote) summed into this
   * bucket when it was loaded: deleted in the same write that saves the sum under this
   * instance's own id, so no later start counts them twice.
   */
  foldedIds?: string[];
}

export interface KeyHour extends BucketState {
  readonly kind: 'key';
  readonly keyId: string;
  readonly total: Tally;
  /** "METHOD /route/:pattern" → its tally. */
  readonly endpoints: Map<string, Tally>;
}

export interface ListingHour extends BucketState {
  readonly kind: 'listing';
  readonly listingId: string;
  views: number;
  impressions: number;
  /** The part of `views` and `impressions` in no saved record yet (saved as additions). */
  unsavedViews: number;
  unsavedImpressions: number;
}

export type HourBucket = KeyHour | ListingHour;

export function newKeyHour(keyId: string, start: number): KeyHour {
  return { kind: 'key', keyId, start, total: new Tally(), endpoints: new Map(), dirty: false, stored: false, dropped: false };
}

export function newListingHour(listingId: string, start: number): ListingHour {
  return { kind: 'listing', listingId, start, views: 0, impressions: 0, unsavedViews: 0, unsavedImpressions: 0, dirty: false, stored: false, dropped: false };
}

/** Everything counted for one key; `current` spares a Map look-up while the hour lasts. */
export interface KeyCounters {
  readonly hours: Map<number, KeyHour>;
  current: KeyHour | null;
  /** Wall ms of the last request, or -Infinity when none is known. */
  lastUsedMs: number;
}

/** Everything counted for one listing, with running totals over the retained hours. */
export interface ListingCounters {
  readonly hours: Map<number, ListingHour>;
  current: ListingHour | null;
  views: number;
  impressions: number;
}
