// A creator's own listings in the developer portal: every status (active, archived, and
// removed by the operator, with the reason), each with its performance figures from analytics
// (views and impressions, all time); create, edit and archive with the same rules as /v1
// (resources/listings.ts), creators only, checked on the role as each write commits.
// Another user's listing is 404 here, as if it did not exist.
// Audited with the user as actor.

import type { UsageReader } from '../../../analytics/reader.ts';
import type { AuditLog } from '../../../audit/audit-log.ts';
import { userActor } from '../../../audit/audit-log.ts';
import type { Clock } from '../../../clock.ts';
import { actingUser } from '../../../domain/actor.ts';
import { newestFirst } from '../../../domain/order.ts';
import { LISTINGS, type ListingRecord, type ListingStatus } from '../../../domain/records.ts';
import { badRequest } from '../../../domain/errors.ts';
import { checkQueryNames, pageOf, readPageRequest } from '../../../http/lists.ts';
import type { PortalContext, PortalRoute, Reply } from '../../../http/route.ts';
import type { Store } from '../../../store/store.ts';
import type { EventOutbox } from '../../../domain/events.ts';
import { assertCreator, decideListingArchive, decideListingChange, decideListingCreate, ownListing, readListingChange, readNewListing } from '../../../resources/listings.ts';

export interface PortalListingRoutesDeps {
  store: Store;
  clock: Clock;
  outbox: EventOutbox;
  audit: AuditLog;
  usage: UsageReader;
}

const STATUSES: readonly ListingStatus[] = ['active', 'archived', 'removed'];
const ALL_TIME = { fromMs: null, toMs: null };

export function portalListingRoutes(deps: PortalListingRoutesDeps): PortalRoute[] {
  const { store, clock, outbox, audit } = deps;
  /** The listing with how it performed: views of its page and appearances in lists, since it was made. */
  const withPerformance = (listing: ListingRecord) => ({ ...listing, performance: deps.usage.listingCounts(listing.id, ALL_TIME) });

  function list(context: PortalContext): Reply {
    checkQueryNames(context.query, ['status', 'page', 'limit']);
    const status = context.query.get('status');
    if (status !== null && !STATUSES.includes(status as ListingStatus)) {
      throw badRequest(`Query parameter "status" must be one of: ${STATUSES.join(', ')}.`, { status: `must be one of ${STATUSES.join(', ')}` });
    }
    const request = readPageRequest(context.query);
    const own = [...store.values(LISTINGS)].filter((listing) => listing.owner_id === context.user.id && (status === null || listing.status === status)).sort(newestFirst);
    const page = pageOf(own, request);
    return { status: 200, body: { data: page.data.map(withPerformance), pagination: page.pagination } };
  }

  async function create(context: PortalContext): Promise<Reply> {
    const fields = readNewListing(await context.readJsonBody());
    return context.commit((tx, user) => {
      const { ops, result: { listing } } = decideListingCreate(tx, actingUser(user), { fields, outbox }, clock.now());
      const changes = { title: listing.title, type: listing.type, price: listing.price };
      return {
        ops: [...ops, audit.entryOp(context.requestId, { action: 'portal.listing_create', target_type: 'listing', target_id: listing.id, changes, actor: userActor(user.id) })],
        result: { status: 201, body: { data: withPerformance(listing) } },
      };
    });
  }

  async function update(context: PortalContext): Promise<Reply> {
    const fields = readListingChange(await context.readJsonBody());
    return context.commit((tx, user) => {
      // The role as it is now: a creator made member by the operator edits nothing more.
      assertCreator(user, 'edit or archive');
      const listing = ownListing(tx, context.params.id!, user);
      const { ops, result: changed } = decideListingChange(tx, actingUser(user), { listing, fields, outbox }, clock.now());
      const changes = Object.fromEntries(Object.keys(fields).filter((field) => fields[field as keyof typeof fields] !== undefined).map((field) => [field, { from: listing[field as keyof ListingRecord], to: changed[field as keyof ListingRecord] }]));
      return {
        ops: [...ops, audit.entryOp(context.requestId, { action: 'portal.listing_update', target_type: 'listing', target_id: listing.id, changes, actor: userActor(user.id) })],
        result: { status: 200, body: { data: withPerformance(changed) } },
      };
    });
  }

  function archive(context: PortalContext): Promise<Reply> {
    return context.commit((tx, user) => {
      assertCreator(user, 'edit or archive');
      const listing = ownListing(tx, context.params.id!, user);
      const { ops, result: archived } = decideListingArchive(tx, actingUser(user), { listing, outbox }, clock.now());
      const audited = ops.length === 0 ? [] : [audit.entryOp(context.requestId, { action: 'portal.listing_archive', target_type: 'listing', target_id: listing.id, changes: { status: { from: listing.status, to: 'archived' } }, actor: userActor(user.id) })];
      return { ops: [...ops, ...audited], result: { status: 200, body: { data: withPerformance(archived) } } };
    });
  }

  return [
    { method: 'GET', pattern: '/portal/v1/listings', summary: 'Your listings in every status, with their views and impressions', handle: list },
    { method: 'POST', pattern: '/portal/v1/listings', summary: 'Create a listing (creators only)', handle: create },
    { method: 'PUT', pattern: '/portal/v1/listings/:id', summary: 'Edit your listing', handle: update },
    { method: 'DELETE', pattern: '/portal/v1/listings/:id', summary: 'Archive your listing', handle: archive },
  ];
}

