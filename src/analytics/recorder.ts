// What the request path tells analytics. Implementations must be cheap: a few Map updates,
// no I/O, because they run on every request, cached list hits included.

export interface UsageRecorder {
  /** One authenticated /v1 request; `endpoint` is "METHOD /route/:pattern" (never a raw path). */
  recordRequest(keyId: string, endpoint: string, status: number, wallMs: number): void;
  /** A successful GET /v1/listings/:id. */
  recordListingView(listingId: string, wallMs: number): void;
  /**
   * Listings that appeared on a served GET /v1/listings page. Pass the same array for every
   * serving of a cached page, and never change it afterwards: it may be held until the next
   * flush, so that counting a cached page costs one Map update.
   */
  recordListingImpressions(listingIds: readonly string[], wallMs: number): void;
}
