// The operator's moderation routes (/admin/v1): look at one user, suspend and unsuspend them,
// erase them; list every listing whatever its status, remove and restore one. Each write
// commits its audit entry in the same store write as the change.

import { fieldChanges, type AuditLog } from '../../audit/audit-log.ts';
import type { Clock } from '../../clock.ts';
import { isoTime } from '../../clock.ts';
import { newestFirst } from '../../domain/order.ts';
import { KEYS, LISTINGS, USERS, WEBHOOKS, userStatus, type ListingRecord, type ListingStatus, type UserRecord } from '../../domain/records.ts';
import { operatorUser } from '../../domain/views.ts';
import { badRequest, conflict, notFound } from '../../domain/errors.ts';
import { checkQueryNames, pageOf, readPageRequest } from '../../http/lists.ts';
import type { AdminRoute, Reply, RequestContext } from '../../http/route.ts';
import { BodyChecker, codePointLength } from '../../http/validation.ts';
import { matchesText } from '../../listings/search.ts';
import { erasureOps } from './erasure.ts';
import { endSessionsOps } from '../../domain/end-access.ts';
import type { RecordReader, Store } from '../../store/store.ts';
import type { EventOutbox } from '../../domain/events.ts';

export interface ModerationRoutesDeps {
  store: Store;
  clock: Clock;
  audit: AuditLog;
  outbox: EventOutbox;
}

const LISTING_STATUSES: readonly ListingStatus[] = ['active', 'archived', 'removed'];
const MAX_REASON = 500;

export function moderationRoutes(deps: ModerationRoutesDeps): AdminRoute[] {
  const { store, clock, audit, outbox } = deps;

  /** The user as the records are now (404 when unknown). */
  function existingUser(reader: RecordReader, context: RequestContext): UserRecord {
    const user = reader.get(USERS, context.params.id!);
    if (!user) throw notFound('User');
    return user;
  }

  function showUser(context: RequestContext): Reply {
    const user = existingUser(store, context);
    return { status: 200, body: { data: { ...operatorUser(user, store), counts: countsOf(store, user.id) } } };
  }

  async function suspend(context: RequestContext): Promise<Reply> {
    const reason = await readReason(context);
    return context.commit((tx) => {
      const user = existingUser(tx, context);
      if (userStatus(user) === 'erased') throw notFound('User');
      if (userStatus(user) === 'suspended') throw conflict('This user is already suspended.');
      const now = isoTime(clock.now());
      const suspended: UserRecord = { ...user, status: 'suspended', suspended_at: now, suspension_reason: reason, updated_at: now };
      const changes = { status: { from: 'active', to: 'suspended' }, reason };
      return {
        ops: [
          { op: 'put', collection: USERS, id: user.id, data: suspended },
          // Portal sessions end (not pause): an unsuspension brings none back.
          ...endSessionsOps(tx, user.id),
          audit.entryOp(context.requestId, { action: 'user.suspend', target_type: 'user', target_id: user.id, changes }),
          // Deliveries still waiting are dropped unsent, so none goes out after an unsuspension.
          ...outbox.dropPendingOps(tx, user.id),
        ],
        result: { status: 200, body: { data: operatorUser(suspended, tx) } },
      };
    });
  }

  function unsuspend(context: RequestContext): Promise<Reply> {
    return context.commit((tx) => {
      const user = existingUser(tx, context);
      if (userStatus(user) === 'erased') throw notFound('User');
      if (userStatus(user) !== 'suspended') throw conflict('This user is not suspended.');
      const active: UserRecord = { ...user, status: 'active', suspended_at: null, suspension_reason: null, updated_at: isoTime(clock.now()) };
      const changes = { status: { from: 'suspended', to: 'active' } };
      return {
        ops: [{ op: 'put', collection: USERS, id: user.id, data: active }, audit.entryOp(context.requestId, { action: 'user.unsuspend', target_type: 'user', target_id: user.id, changes })],
        result: { status: 200, body: { data: operatorUser(active, tx) } },
      };
    });
  }

  async function erase(context: RequestContext): Promise<Reply> {
    // Her earlier values in the log's older lines (file back-end), read before the write: they
    // are looked for in what others' records say. An edit made in between is still current
    // when the plan is decided, so it is known too.
    const known = existingUser(store, context);
    const earlierVersions = userStatus(known) === 'erased' ? [] : await store.earlierVersions(USERS, known.id);
    // Decided in the store's write queue on the current records, so nothing written before it
    // (a delivery outcome, a profile edit) slips past the plan.
    const reply = await context.commit((tx) => {
      const user = existingUser(tx, context);
      // Asked again (say, after a failed compaction): nothing left to change, but compact again.
      if (userStatus(user) === 'erased') return { ops: [], result: { status: 200, body: { data: operatorUser(user, tx) } } };
      const plan = erasureOps(tx, user, isoTime(clock.now()), earlierVersions);
      const changes = { status: { from: userStatus(user), to: 'erased' }, ...plan.summary };
      return {
        ops: [...plan.ops, audit.entryOp(context.requestId, { action: 'user.erase', target_type: 'user', target_id: user.id, changes })],
        result: { status: 200, body: { data: operatorUser(plan.erased, tx) } },
      };
    });
    // The superseded log lines still hold the personal data: rewrite the log before answering.
    await store.compact();
    return reply;
  }

  function listListings(context: RequestContext): Reply {
    checkQueryNames(context.query, ['status', 'owner_id', 'q', 'page', 'limit']);
    const status = context.query.get('status');
    if (status !== null && !(LISTING_STATUSES as readonly string[]).includes(status)) {
      throw badRequest(`Query parameter "status" must be one of ${LISTING_STATUSES.join(', ')}.`, { status: 'unknown status' });
    }
    const ownerId = context.query.get('owner_id');
    const q = context.query.get('q');
    // Code points, as the document's maxLength counts them (an emoji is one).
    if (q !== null && codePointLength(q) > 200) throw badRequest('Query parameter "q" must be at most 200 characters.', { q: 'too long' });
    const needle = q?.trim().toLowerCase() || null;
    const request = readPageRequest(context.query);
    const found: ListingRecord[] = [];
    for (const listing of store.values(LISTINGS)) {
      if (status !== null && listing.status !== status) continue;
      if (ownerId !== null && listing.owner_id !== ownerId) continue;
      if (needle !== null && !matchesText(listing, needle)) continue;
      found.push(listing);
    }
    found.sort(newestFirst);
    return { status: 200, body: pageOf(found, request) };
  }

  function existingListing(reader: RecordReader, context: RequestContext): ListingRecord {
    const listing = reader.get(LISTINGS, context.params.id!);
    if (!listing) throw notFound('Listing');
    return listing;
  }

  async function removeListing(context: RequestContext): Promise<Reply> {
    const reason = await readReason(context);
    return context.commit((tx) => {
      const listing = existingListing(tx, context);
      if (listing.status === 'removed') throw conflict('This listing is already removed.');
      const now = isoTime(clock.now());
      const removed: ListingRecord = { ...listing, status: 'removed', removal_reason: reason, removed_at: now, updated_at: now };
      const changes = { status: { from: listing.status, to: 'removed' }, reason };
      return {
        ops: [
          { op: 'put', collection: LISTINGS, id: listing.id, data: removed },
          ...outbox.eventOps(tx, 'listing.removed', listing.owner_id, removed),
          audit.entryOp(context.requestId, { action: 'listing.remove', target_type: 'listing', target_id: listing.id, changes }),
        ],
        result: { status: 200, body: { data: removed } },
      };
    });
  }

  function restoreListing(context: RequestContext): Promise<Reply> {
    return context.commit((tx) => {
      const listing = existingListing(tx, context);
      if (listing.status !== 'removed') throw conflict('Only a removed listing can be restored.');
      const owner = tx.get(USERS, listing.owner_id);
      if (owner !== undefined && userStatus(owner) === 'erased') throw conflict("This listing's owner was erased; it cannot be restored.");
      const { removal_reason: _reason, removed_at: _removedAt, ...rest } = listing;
      const restored: ListingRecord = { ...rest, status: 'active', updated_at: isoTime(clock.now()) };
      const changes = fieldChanges(listing, restored, ['status', 'removal_reason', 'removed_at']);
      return {
        ops: [{ op: 'put', collection: LISTINGS, id: listing.id, data: restored }, audit.entryOp(context.requestId, { action: 'listing.restore', target_type: 'listing', target_id: listing.id, changes })],
        result: { status: 200, body: { data: restored } },
      };
    });
  }

  return [
    { method: 'GET', pattern: '/admin/v1/users/:id', summary: 'One user, with counts of listings, keys and webhooks', handle: showUser },
    { method: 'DELETE', pattern: '/admin/v1/users/:id', summary: 'Erase a user and their personal data', handle: erase },
    { method: 'POST', pattern: '/admin/v1/users/:id/suspend', summary: 'Suspend a user', handle: suspend },
    { method: 'POST', pattern: '/admin/v1/users/:id/unsuspend', summary: 'End a suspension', handle: unsuspend },
    { method: 'GET', pattern: '/admin/v1/listings', summary: 'Every listing, whatever its status', handle: listListings },
    { method: 'POST', pattern: '/admin/v1/listings/:id/remove', summary: 'Remove (take down) a listing', handle: removeListing },
    { method: 'POST', pattern: '/admin/v1/listings/:id/restore', summary: 'Restore a removed listing', handle: restoreListing },
  ];
}

async function readReason(context: RequestContext): Promise<string> {
  const checker = new BodyChecker(await context.readJsonBody(), ['reason']);
  checker.requireFields(['reason']);
  const reason = checker.string('reason', 1, MAX_REASON);
  checker.finish();
  return reason!;
}

function countsOf(store: Store, userId: string): { listings: number; keys: number; active_keys: number; webhooks: number } {
  const counts = { listings: 0, keys: 0, active_keys: 0, webhooks: 0 };
  for (const listing of store.values(LISTINGS)) if (listing.owner_id === userId) counts.listings += 1;
  for (const key of store.values(KEYS)) {
    if (key.user_id !== userId) continue;
    counts.keys += 1;
    if (key.revoked_at === null) counts.active_keys += 1;
  }
  for (const webhook of store.values(WEBHOOKS)) if (webhook.user_id === userId) counts.webhooks += 1;
  return counts;
}

