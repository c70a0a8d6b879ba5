// The listing endpoints: browse (cached pages), read one, create, update, archive. Input is
// checked first, then role and ownership, then state (contract section 5); the rules are
// resources/listings.ts, and each write commits the change and its event at once.

import type { UsageRecorder } from '../../analytics/recorder.ts';
import type { Clock } from '../../clock.ts';
import { actingUser } from '../../domain/actor.ts';
import { LISTINGS } from '../../domain/records.ts';
import { notFound } from '../../domain/errors.ts';
import { pagination } from '../../http/lists.ts';
import type { ApiRoute, KeyContext, Reply } from '../../http/route.ts';
import type { ListingIndex } from '../../listings/index.ts';
import type { ListingPageCache } from '../../listings/page-cache.ts';
import { ParsedListingQueries } from '../../listings/parsed-queries.ts';
import { findListings, isSliceable } from '../../listings/search.ts';
import { SerialisedListings } from '../../listings/serialised.ts';
import type { Store } from '../../store/store.ts';
import type { EventOutbox } from '../../domain/events.ts';
import { isListingVisibleTo } from '../../domain/visibility.ts';
import { changeableListing, decideListingArchive, decideListingChange, decideListingCreate, readListingChange, readNewListing } from '../../resources/listings.ts';

export interface ListingRoutesDeps {
  store: Store;
  clock: Clock;
  index: ListingIndex;
  /** Pages ready to send; app.ts clears it on every listing change. */
  pageCache: ListingPageCache;
  usage: UsageRecorder;
  outbox: EventOutbox;
}

export function listingRoutes(deps: ListingRoutesDeps): ApiRoute[] {
  const { store, clock, index, pageCache, usage, outbox } = deps;
  const parsedQueries = new ParsedListingQueries();
  const serialised = new SerialisedListings();
  store.onChange((change) => {
    if (change.collection === LISTINGS) serialised.forget(change.id);
  });

  function browse(context: KeyContext): Reply | Promise<Reply> {
    const { query, cacheKey } = parsedQueries.get(context);
    let page = pageCache.get(cacheKey);
    if (page === undefined) {
      // Just after the start of a large store the search index is still filling: a query needing it waits.
      if (!index.search.ready && !isSliceable(query)) return index.search.whenReady().then(() => browse(context));
      const { items, total } = findListings(index, query);
      const { bytes, etag } = serialised.page(items, pagination(query, total));
      page = { bytes, etag, listingIds: items.map((listing) => listing.id) };
      pageCache.offer(cacheKey, page);
    }
    // A HEAD (answered by this route) shows nothing: it is neither a view nor an impression.
    if (context.method !== 'HEAD') usage.recordListingImpressions(page.listingIds, clock.now());
    return { status: 200, bytes: page.bytes, etag: page.etag };
  }

  function show(context: KeyContext): Reply {
    const listing = store.get(LISTINGS, context.params.id!);
    // A removed listing, or one of a suspended user, is not found by anyone but its owner.
    if (!listing || !isListingVisibleTo(store, listing, context.user.id)) throw notFound('Listing');
    if (context.method !== 'HEAD') usage.recordListingView(listing.id, clock.now());
    const { bytes, etag } = serialised.shown(listing);
    return { status: 200, bytes, etag };
  }

  async function create(context: KeyContext): Promise<Reply> {
    const fields = readNewListing(await context.readJsonBody());
    return context.commit((tx, { user }) => {
      const { ops, result } = decideListingCreate(tx, actingUser(user), { fields, outbox }, clock.now());
      return { ops, result: { status: 201, bytes: Buffer.from(`{"data":${result.json}}`) } };
    });
  }

  /**
   * A PUT changes only the fields it sent, on top of the listing as it is when the write commits:
   * 404 when missing, 403 when not the caller's, then the rule's 412 (If-Match) and 409.
   */
  async function update(context: KeyContext): Promise<Reply> {
    const fields = readListingChange(await context.readJsonBody());
    return context.commit((tx, { user }) => {
      const listing = changeableListing(tx, context.params.id!, user.id);
      const { ops, result: changed } = decideListingChange(tx, actingUser(user), { listing, fields, ifMatch: context.req.headers['if-match'], outbox }, clock.now());
      return { ops, result: { status: 200, body: { data: changed } } };
    });
  }

  function archive(context: KeyContext): Promise<Reply> {
    return context.commit((tx, { user }) => {
      const listing = changeableListing(tx, context.params.id!, user.id);
      const { ops, result: archived } = decideListingArchive(tx, actingUser(user), { listing, ifMatch: context.req.headers['if-match'], outbox }, clock.now());
      return { ops, result: { status: 200, body: { data: archived } } };
    });
  }

  return [
    { method: 'GET', pattern: '/v1/listings', resource: 'listings', summary: 'List active listings', handle: browse },
    { method: 'POST', pattern: '/v1/listings', resource: 'listings', summary: 'Create a listing (creators only)', checkedAtCommit: true, handle: create },
    { method: 'GET', pattern: '/v1/listings/:id', resource: 'listings', summary: 'Get one listing', handle: show },
    { method: 'PUT', pattern: '/v1/listings/:id', resource: 'listings', summary: 'Update your listing', checkedAtCommit: true, handle: update },
    { method: 'DELETE', pattern: '/v1/listings/:id', resource: 'listings', summary: 'Archive your listing', checkedAtCommit: true, handle: archive },
  ];
}
