// The rules of a listing, with no request in sight: reading a new listing or a change from a
// body, and deciding a create, a change or an archive inside a write. /v1/listings and the
// portal's listings call the same functions, so a listing follows one set of rules however it
// is written. Each decision is `decideX(tx, actor, input, now)` (src/domain/actor.ts) and returns
// the store's Decision: the ops to commit (the record and its event) and the record it leaves as
// its result; a change or an archive checks If-Match too. Refusals are the domain's errors
// (src/domain/errors.ts).

import { isoTime } from '../clock.ts';
import type { UserActor } from '../domain/actor.ts';
import { conflict, forbidden, notFound } from '../domain/errors.ts';
import type { EventOutbox } from '../domain/events.ts';
import { newId } from '../domain/ids.ts';
import { LISTINGS, LISTING_TYPES, type ListingRecord, type UserRecord } from '../domain/records.ts';
import { isListingVisibleTo } from '../domain/visibility.ts';
import { assertIfMatch, etagOf } from '../http/conditional.ts';
import { BodyChecker, definedOnly, requireNonEmpty } from '../http/validation.ts';
import type { RecordReader } from '../store/collections.ts';
import type { Decision, Transaction } from '../store/transaction.ts';

const EDITABLE_FIELDS = ['title', 'description', 'type', 'price', 'tags'] as const;
const READ_ONLY_FIELDS = ['id', 'owner_id', 'status', 'created_at', 'updated_at'];
const MAX_PRICE = 1_000_000;

const REMOVED_CONFLICT = 'This listing was removed by the marketplace operator and can no longer be changed.';

export interface ListingFields {
  title?: string;
  description?: string;
  type?: ListingRecord['type'];
  price?: number;
  tags?: string[];
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

/**
 * The listing `userId` may change under /v1: 404 when missing or hidden from them (removed, or
 * its owner suspended), 403 when they can see it but it is not theirs.
 */
export function changeableListing(reader: RecordReader, listingId: string, userId: string): ListingRecord {
  const listing = reader.get(LISTINGS, listingId);
  if (!listing || !isListingVisibleTo(reader, listing, userId)) throw notFound('Listing');
  if (listing.owner_id !== userId) throw forbidden('Only the owner of this listing may change or archive it.');
  return listing;
}

/** The user's own listing, in any status; anyone else's is answered like a missing one (the portal's rule). */
export function ownListing(reader: RecordReader, listingId: string, user: UserRecord): ListingRecord {
  const listing = reader.get(LISTINGS, listingId);
  if (listing === undefined || listing.owner_id !== user.id) throw notFound('Listing');
  return listing;
}

/** A new listing, and its record serialised once for the answer and the log line. */
export interface CreatedListing {
  listing: ListingRecord;
  json: string;
}

/** Creating a listing for the acting user with its event; only creators may (403). */
export function decideListingCreate(tx: Transaction, actor: UserActor, input: { fields: ListingFields; outbox: EventOutbox }, nowMs: number): Decision<CreatedListing> {
  const { user } = actor;
  const { fields, outbox } = input;
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
  const json = JSON.stringify(listing);
  return { ops: [{ op: 'put', collection: LISTINGS, id: listing.id, data: listing, json }, ...outbox.eventOps(tx, 'listing.created', listing.owner_id, listing)], result: { listing, json } };
}

/** What a change or an archive of one listing is given: the listing as read in the write (the caller's to find). */
export interface ListingWrite {
  listing: ListingRecord;
  /** The If-Match header sent, when the surface supports it: 412 unless it names the listing's current ETag. */
  ifMatch?: string | undefined;
  outbox: EventOutbox;
}

/** Changing the sent fields of an owned listing (If-Match first, 412); an archived or removed one is 409. */
export function decideListingChange(tx: Transaction, _actor: UserActor, input: ListingWrite & { fields: ListingFields }, nowMs: number): Decision<ListingRecord> {
  const { listing, fields, outbox } = input;
  assertListingIfMatch(input);
  if (listing.status === 'archived') throw conflict('This listing is archived and can no longer be changed.');
  if (listing.status === 'removed') throw conflict(REMOVED_CONFLICT);
  const changed: ListingRecord = { ...listing, ...definedOnly(fields), updated_at: isoTime(nowMs) };
  return { ops: [{ op: 'put', collection: LISTINGS, id: changed.id, data: changed }, ...outbox.eventOps(tx, 'listing.updated', changed.owner_id, changed)], result: changed };
}

/** Archiving an owned listing (If-Match first, 412; no ops when it already is); a removed one is 409. */
export function decideListingArchive(tx: Transaction, _actor: UserActor, input: ListingWrite, nowMs: number): Decision<ListingRecord> {
  const { listing, outbox } = input;
  assertListingIfMatch(input);
  if (listing.status === 'removed') throw conflict(REMOVED_CONFLICT);
  // Archiving twice is not an error: the second call finds what the first one left.
  if (listing.status === 'archived') return { ops: [], result: listing };
  const archived: ListingRecord = { ...listing, status: 'archived', updated_at: isoTime(nowMs) };
  return { ops: [{ op: 'put', collection: LISTINGS, id: archived.id, data: archived }, ...outbox.eventOps(tx, 'listing.archived', archived.owner_id, archived)], result: archived };
}

/**
 * The ETag of GET /v1/listings/:id's answer, `{"data":listing}` (src/listings/serialised.ts makes
 * the same bytes, kept): what If-Match is compared with.
 */
export function shownListingEtag(listing: ListingRecord): string {
  return etagOf(Buffer.from(`{"data":${JSON.stringify(listing)}}`));
}

/** 412 unless If-Match (when sent) names the listing's current ETag. */
function assertListingIfMatch({ listing, ifMatch }: ListingWrite): void {
  assertIfMatch(ifMatch, () => shownListingEtag(listing));
}

/** Reads and checks every listing field present; throws one 400 listing all problems. */
function readListingFields(checker: BodyChecker): ListingFields {
  const fields: ListingFields = {
    title: checker.visibleString('title', 1, 200),
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
