// The listing endpoints: browse (cached pages), read one, create, update, archive. Handlers
// check input first, then role and ownership, then state (contract section 5), and write the
// change and its event in one atomic store write.

import type { UsageRecorder } from '../analytics/recorder.ts';
import type { Clock } from '../clock.ts';
import { isoTime } from '../clock.ts';
import { newId } from '../domain/ids.ts';
import { LISTINGS, LISTING_TYPES, type ListingRecord, type UserRecord } from '../domain/records.ts';
import { assertIfMatch } from '../http/conditional.ts';
import { conflict, forbidden, notFound } from '../domain/errors.ts';
import { pagination } from '../http/lists.ts';
import type { ApiRoute, KeyContext, Reply } from '../http/route.ts';
import { BodyChecker, definedOnly, requireNonEmpty } from '../http/validation.ts';
import type { ListingIndex } from '../listings/index.ts';
import type { ListingPageCache } from '../listings/page-cache.ts';
import { ParsedListingQueries } from '../listings/parsed-queries.ts';
import { findListings, isSliceable } from '../listings/search.ts';
import { SerialisedListings } from '../listings/serialised.ts';
import type { RecordReader, Store, Transaction } from '../store/store.ts';
import type { WriteOp } from '../store/format.ts';
import type { EventOutbox } from '../domain/events.ts';
import { isListingVisibleTo } from '../domain/visibility.ts';

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
      const { ops, json } = createdListingOps(tx, user, fields, clock.now(), outbox);
      return { ops, reply: { status: 201, bytes: Buffer.from(`{"data":${json}}`) } };
    });
  }

  /** A PUT changes only the fields it sent, on top of the listing as it is when the write commits. */
  async function update(context: KeyContext): Promise<Reply> {
    const fields = readListingChange(await context.readJsonBody());
    return context.commit((tx, { user }) => {
      const { ops, changed } = changedListingOps(tx, ownedListing(tx, context, user.id), fields, clock.now(), outbox);
      return { ops, reply: { status: 200, body: { data: changed } } };
    });
  }

  function archive(context: KeyContext): Promise<Reply> {
    return context.commit((tx, { user }) => {
      const { ops, archived } = archivedListingOps(tx, ownedListing(tx, context, user.id), clock.now(), outbox);
      return { ops, reply: { status: 200, body: { data: archived } } };
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

/** A new listing's fields from a request body (title, type and price required); throws one 400. */
export function readNewListing(body: Record<string, unknown>): ListingFields {
  const checker = new BodyChecker(body, EDITABLE_FIELDS, READ_ONLY_FIELDS);
  checker.requireFields(['title', 'type', 'price']);
  return readListingFields(checker);
}

/** The fields a change sends (at least one); throws one 400. */
export function readListingChange(body: Record<string, unknown>): ListingFields {
  const fields = readListingFields(new BodyChecker(body, EDITABLE_FIELDS, READ_ONLY_FIELDS));
  requireNonEmpty(body, EDITABLE_FIELDS);
  return fields;
}

/** 403 unless `user` (as read in the write, so a role changed a moment ago counts) is a creator. */
export function assertCreator(user: UserRecord, what: 'create' | 'edit or archive'): void {
  if (user.role !== 'creator') throw forbidden(`Only creators may ${what} listings. Ask the operator to give your user the creator role.`);
}

/** The ops creating a listing for `user` with its event; only creators may (403). */
export function createdListingOps(tx: Transaction, user: UserRecord, fields: ListingFields, nowMs: number, outbox: EventOutbox): { ops: WriteOp[]; listing: ListingRecord; json: string } {
  assertCreator(user, 'create');
  const now = isoTime(nowMs);
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
  return { ops: [{ op: 'put', collection: LISTINGS, id: listing.id, data: listing, json }, ...outbox.eventOps(tx, 'listing.created', listing.owner_id, listing)], listing, json };
}

/** The ops changing the sent fields of an owned listing; an archived or removed one is 409. */
export function changedListingOps(tx: Transaction, listing: ListingRecord, fields: ListingFields, nowMs: number, outbox: EventOutbox): { ops: WriteOp[]; changed: ListingRecord } {
  if (listing.status === 'archived') throw conflict('This listing is archived and can no longer be changed.');
  if (listing.status === 'removed') throw conflict(REMOVED_CONFLICT);
  const changed: ListingRecord = { ...listing, ...definedOnly(fields), updated_at: isoTime(nowMs) };
  return { ops: [{ op: 'put', collection: LISTINGS, id: changed.id, data: changed }, ...outbox.eventOps(tx, 'listing.updated', changed.owner_id, changed)], changed };
}

/** The ops archiving an owned listing (none when it already is); a removed one is 409. */
export function archivedListingOps(tx: Transaction, listing: ListingRecord, nowMs: number, outbox: EventOutbox): { ops: WriteOp[]; archived: ListingRecord } {
  if (listing.status === 'removed') throw conflict(REMOVED_CONFLICT);
  // Archiving twice is not an error: the second call finds what the first one left.
  if (listing.status === 'archived') return { ops: [], archived: listing };
  const archived: ListingRecord = { ...listing, status: 'archived', updated_at: isoTime(nowMs) };
  return { ops: [{ op: 'put', collection: LISTINGS, id: archived.id, data: archived }, ...outbox.eventOps(tx, 'listing.archived', archived.owner_id, archived)], archived };
}

export interface ListingFields {
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
