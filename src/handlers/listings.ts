// The listing endpoints: browse (cached pages), read one, create, update, archive. Handlers
// check input first, then role and ownership, then state (contract section 5), and write the
// change and its event in one atomic store write.

import type { UsageRecorder } from '../analytics/recorder.ts';
import type { Clock } from '../clock.ts';
import { isoTime } from '../clock.ts';
import { newId } from '../domain/ids.ts';
import { LISTINGS, LISTING_TYPES, type ListingRecord } from '../domain/records.ts';
import { assertIfMatch } from '../http/conditional.ts';
import { conflict, forbidden, notFound } from '../http/errors.ts';
import { pagination } from '../http/lists.ts';
import type { ApiRoute, KeyContext, Reply } from '../http/route.ts';
import { BodyChecker, definedOnly, requireNonEmpty } from '../http/validation.ts';
import type { ListingIndex } from '../listings/index.ts';
import type { ListingPageCache } from '../listings/page-cache.ts';
import { ParsedListingQueries } from '../listings/parsed-queries.ts';
import { findListings, isSliceable } from '../listings/search.ts';
import { SerialisedListings } from '../listings/serialised.ts';
import type { RecordReader, Store } from '../store/store.ts';
import type { EventOutbox } from '../webhooks/events.ts';
import { isListingVisibleTo } from '../moderation/visibility.ts';

export interface ListingRoutesDeps {
  store: Store;
  clock: Clock;
  index: ListingIndex;
  /** Pages ready to send; app.ts clears it on every listing change. */
  pageCache: ListingPageCache;
  usage: UsageRecorder;
  outbox: EventOutbox;
}

const EDITABLE_FIELDS = ['title', 'description', 'type', 'price', 'tags'] as const;
const READ_ONLY_FIELDS = ['id', 'owner_id', 'status', 'created_at', 'updated_at'];
const MAX_PRICE = 1_000_000;

const REMOVED_CONFLICT = 'This listing was removed by the marketplace operator and can no longer be changed.';

export function listingRoutes(deps: ListingRoutesDeps): ApiRoute[] {
  const { store, clock, index, pageCache, usage, outbox } = deps;
  const parsedQueries = new ParsedListingQueries();
  const serialised = new SerialisedListings();

  function browse(context: KeyContext): Reply | Promise<Reply> {
    const { query, cacheKey } = parsedQueries.get(context);
    let page = pageCache.get(cacheKey);
    if (page === undefined) {
      // Just after the start of a large store the search index is still filling: a query needing it waits.
      if (!index.search.ready && !isSliceable(query)) return index.search.whenReady().then(() => browse(context));
      const { items, total } = findListings(index, query);
      const { bytes, etag } = serialised.page(items, pagination(query, total));
      page = { bytes, etag, listingIds: items.map((listing) => listing.id) };
      pageCache.set(cacheKey, page);
    }
    usage.recordListingImpressions(page.listingIds, clock.now());
    return { status: 200, bytes: page.bytes, etag: page.etag };
  }

  function show(context: KeyContext): Reply {
    const listing = store.get(LISTINGS, context.params.id!);
    // A removed listing, or one of a suspended user, is not found by anyone but its owner.
    if (!listing || !isListingVisibleTo(store, listing, context.user.id)) throw notFound('Listing');
    usage.recordListingView(listing.id, clock.now());
    const { bytes, etag } = serialised.shown(listing);
    return { status: 200, bytes, etag };
  }

  async function create(context: KeyContext): Promise<Reply> {
    const checker = new BodyChecker(await context.readJsonBody(), EDITABLE_FIELDS, READ_ONLY_FIELDS);
    checker.requireFields(['title', 'type', 'price']);
    const fields = readListingFields(checker);
    return context.commit((tx, { user }) => {
      if (user.role !== 'creator') {
        throw forbidden('Only creators may create listings. Ask the operator to give your user the creator role.');
      }
      const now = isoTime(clock.now());
      const listing: ListingRecord = {
        id: newId('lst'),
        title: fields.title!,
        description: fields.description ?? '',
        type: fields.type!,
        price: fields.price!,
        tags: fields.tags ?? [],
        status: 'active',
        owner_id: user.id,
        created_at: now,
        updated_at: now,
      };
      // Serialised once, for the answer and the log line.
      const json = JSON.stringify(listing);
      return {
        ops: [{ op: 'put', collection: LISTINGS, id: listing.id, data: listing, json }, ...outbox.eventOps(tx, 'listing.created', listing.owner_id, listing)],
        reply: { status: 201, bytes: Buffer.from(`{"data":${json}}`) },
      };
    });
  }

  /** A PUT changes only the fields it sent, on top of the listing as it is when the write commits. */
  async function update(context: KeyContext): Promise<Reply> {
    const body = await context.readJsonBody();
    const checker = new BodyChecker(body, EDITABLE_FIELDS, READ_ONLY_FIELDS);
    const fields = readListingFields(checker);
    requireNonEmpty(body, EDITABLE_FIELDS);
    return context.commit((tx, { user }) => {
      const listing = ownedListing(tx, context, user.id);
      if (listing.status === 'archived') throw conflict('This listing is archived and can no longer be changed.');
      if (listing.status === 'removed') throw conflict(REMOVED_CONFLICT);
      const changed: ListingRecord = { ...listing, ...definedOnly(fields), updated_at: isoTime(clock.now()) };
      return {
        ops: [{ op: 'put', collection: LISTINGS, id: changed.id, data: changed }, ...outbox.eventOps(tx, 'listing.updated', changed.owner_id, changed)],
        reply: { status: 200, body: { data: changed } },
      };
    });
  }

  function archive(context: KeyContext): Promise<Reply> {
    return context.commit((tx, { user }) => {
      const listing = ownedListing(tx, context, user.id);
      if (listing.status === 'removed') throw conflict(REMOVED_CONFLICT);
      // Archiving twice is not an error: the second call finds what the first one left.
      if (listing.status === 'archived') return { ops: [], reply: { status: 200, body: { data: listing } } };
      const archived: ListingRecord = { ...listing, status: 'archived', updated_at: isoTime(clock.now()) };
      return {
        ops: [{ op: 'put', collection: LISTINGS, id: archived.id, data: archived }, ...outbox.eventOps(tx, 'listing.archived', archived.owner_id, archived)],
        reply: { status: 200, body: { data: archived } },
      };
    });
  }

  /** The listing as it is now: 404 when missing, 403 when not the caller's, 412 when If-Match names another version. */
  function ownedListing(reader: RecordReader, context: KeyContext, userId: string): ListingRecord {
    const listing = reader.get(LISTINGS, context.params.id!);
    if (!listing || !isListingVisibleTo(reader, listing, userId)) throw notFound('Listing');
    if (listing.owner_id !== userId) throw forbidden('Only the owner of this listing may change or archive it.');
    assertIfMatch(context.req.headers['if-match'], () => serialised.shown(listing).etag);
    return listing;
  }

  return [
    { method: 'GET', pattern: '/v1/listings', resource: 'listings', summary: 'List active listings', handle: browse },
    { method: 'POST', pattern: '/v1/listings', resource: 'listings', summary: 'Create a listing (creators only)', handle: create },
    { method: 'GET', pattern: '/v1/listings/:id', resource: 'listings', summary: 'Get one listing', handle: show },
    { method: 'PUT', pattern: '/v1/listings/:id', resource: 'listings', summary: 'Update your listing', handle: update },
    { method: 'DELETE', pattern: '/v1/listings/:id', resource: 'listings', summary: 'Archive your listing', handle: archive },
  ];
}

interface ListingFields {
  title?: string;
  description?: string;
  type?: ListingRecord['type'];
  price?: number;
  tags?: string[];
}

/** Reads and checks every listing field present; throws one 400 listing all problems. */
function readListingFields(checker: BodyChecker): ListingFields {
  const fields: ListingFields = {
    title: checker.string('title', 1, 200),
    description: checker.string('description', 0, 5_000),
    type: checker.oneOf('type', LISTING_TYPES),
    price: readPrice(checker),
    tags: checker.stringList('tags', 10, 32),
  };
  checker.finish();
  return fields;
}

function readPrice(checker: BodyChecker): number | undefined {
  // Cents, not fractions of them: 9.99 is fine, 9.999 is not.
  return checker.decimalNumber('price', 0, MAX_PRICE, 2);
}
