// Turns an event into delivery records, one per active webhook of the owner that subscribes to
// its kind. The records are ops for the caller's own write, so the change and its deliveries
// land together or not at all; the dispatcher sends them later, never inside the request.
// A webhook holds at most MAX_PENDING_PER_WEBHOOK pending deliveries: a new event past that
// drops the oldest ones in the same write (counted as failed), so writes piling up behind a
// dead receiver cannot grow the store and the log without bound.

import type { Clock } from '../clock.ts';
import { isoTime } from '../clock.ts';
import { DELIVERIES, WEBHOOK_TARGETS, WEBHOOKS } from '../domain/records.ts';
import { newId } from '../domain/ids.ts';
import { isUserBarred } from '../moderation/visibility.ts';
import type { WriteOp } from '../store/format.ts';
import type { ChangeEvent, RecordReader, Store } from '../store/store.ts';
import type { EventOutbox, EventType } from './events.ts';
import type { DeliveryCounts } from './delivery-counts.ts';
import type { DeliveryRecord, WebhookRecord, WebhookTargetsRecord } from './records.ts';
import { isPendingDelivery, webhookView } from './records.ts';

export const MAX_PENDING_PER_WEBHOOK = 1_000;

/**
 * The op every write changing which of `userId`'s webhooks receive events must carry (a webhook
 * registered, removed or switched off): events are decided on this record (see eventOps).
 */
export function targetsChangedOp(userId: string, at: string): WriteOp {
  const targets: WebhookTargetsRecord = { id: userId, changed_at: at };
  return { op: 'put', collection: WEBHOOK_TARGETS, id: userId, data: targets };
}
/** Far longer than any write takes: an older hand-out belongs to a write that failed. */
const INCOMING_FORGET_MS = 60_000;

export interface WebhookOutboxOptions {
  store: Store;
  clock: Clock;
  /** Where dropped deliveries are counted as failed. */
  counts?: DeliveryCounts;
  maxPendingPerWebhook?: number;
}

export class WebhookOutbox implements EventOutbox {
  private readonly store: Store;
  private readonly clock: Clock;
  /** Webhook ids by owner, kept current from the store's changes, so an event costs no scan. */
  private readonly idsByOwner = new Map<string, Set<string>>();
  /** Pending delivery ids by webhook, oldest first (a Set keeps insertion order). */
  private readonly pendingByWebhook = new Map<string, Set<string>>();
  /** Deliveries this outbox asked to drop; counted as failed when the delete lands. */
  private readonly dropping = new Set<string>();
  /**
   * Deliveries handed out in ops whose write has not landed yet (with when), by webhook: they
   * count against the cap, so requests running side by side cannot pass it together. An entry
   * whose write failed is forgotten after INCOMING_FORGET_MS.
   */
  private readonly incoming = new Map<string, Map<string, number>>();
  private readonly counts: DeliveryCounts | undefined;
  private readonly maxPendingPerWebhook: number;

  constructor(options: WebhookOutboxOptions) {
    this.store = options.store;
    this.clock = options.clock;
    this.counts = options.counts;
    this.maxPendingPerWebhook = Math.max(1, options.maxPendingPerWebhook ?? MAX_PENDING_PER_WEBHOOK);
    for (const webhook of this.store.values(WEBHOOKS)) this.index(webhook.user_id, webhook.id);
    for (const delivery of this.store.values(DELIVERIES)) {
      if (isPendingDelivery(delivery)) this.trackPending(delivery.webhook_id, delivery.id, true);
    }
  }

  /**
   * True while a write dropping this delivery is on its way. The dispatcher then deletes it
   * rather than writing a retry, which could land after the drop and bring it back.
   */
  isBeingDropped(deliveryId: string): boolean {
    return this.dropping.has(deliveryId);
  }

  /** How many deliveries a webhook has waiting (pending or retrying). */
  pendingCount(webhookId: string): number {
    return this.pendingByWebhook.get(webhookId)?.size ?? 0;
  }

  /** The owner's webhooks, active or not, in no particular order. */
  webhooksOf(ownerId: string): WebhookRecord[] {
    const ids = this.idsByOwner.get(ownerId);
    if (ids === undefined) return [];
    const webhooks: WebhookRecord[] = [];
    for (const id of ids) {
      const webhook = this.store.get(WEBHOOKS, id);
      if (webhook !== undefined) webhooks.push(webhook);
    }
    return webhooks;
  }

  /**
   * The ops that queue `type` for every active webhook of `ownerId` subscribed to it.
   * @example context.commit((tx, { user }) => ({ ops: [listingPut, ...outbox.eventOps(tx, 'listing.created', user.id, listing)], reply }))
   */
  eventOps(tx: RecordReader, type: EventType, ownerId: string, data: object): WriteOp[] {
    // A suspended user's webhooks receive nothing: no event is even queued for them.
    if (isUserBarred(tx, ownerId)) return [];
    // The webhooks come from this outbox's index, not through tx. The write depends on them
    // through the owner's targets record, which every change of who receives events rewrites:
    // another server registering, removing or switching off one of them makes it decided again,
    // while a delivery outcome written on a webhook does not.
    tx.get(WEBHOOK_TARGETS, ownerId);
    const targets = this.webhooksOf(ownerId).filter((webhook) => webhook.active && webhook.events.includes(type));
    return this.deliveryOps(type, data, targets);
  }

  /**
   * The ping for a webhook being registered (not yet in the store), written with it. Sent only
   * when its `events` include `ping`, as the default does.
   */
  pingOps(webhook: WebhookRecord): WriteOp[] {
    if (!webhook.events.includes('ping')) return [];
    return this.deliveryOps('ping', webhookView(webhook), [webhook]);
  }

  /** A `ping` its owner asked for now (the portal's test), whatever events the webhook receives. */
  testPingOps(webhook: WebhookRecord): WriteOp[] {
    return this.deliveryOps('ping', webhookView(webhook), [webhook]);
  }

  private deliveryOps(type: EventType, data: object, targets: readonly WebhookRecord[]): WriteOp[] {
    if (targets.length === 0) return [];
    const nowMs = this.clock.now();
    const createdAt = isoTime(nowMs);
    const eventId = newId('evt');
    // Serialised once: every webhook, and every retry, gets exactly these bytes.
    const payload = JSON.stringify({ id: eventId, type, created_at: createdAt, data });
    const drops: WriteOp[] = targets.flatMap((webhook) => this.dropOldestOps(webhook.id, nowMs));
    const puts = targets.map((webhook): WriteOp => {
      const delivery: DeliveryRecord = {
        id: newId('dlv'),
        webhook_id: webhook.id,
        event_id: eventId,
        type,
        payload,
        status: 'pending',
        attempts: 0,
        next_attempt_at: nowMs,
        response_status: null,
        last_error: null,
        created_at: createdAt,
        updated_at: createdAt,
      };
      let handedOut = this.incoming.get(webhook.id);
      if (handedOut === undefined) {
        handedOut = new Map();
        this.incoming.set(webhook.id, handedOut);
      }
      handedOut.set(delivery.id, nowMs);
      return { op: 'put', collection: DELIVERIES, id: delivery.id, data: delivery };
    });
    return [...drops, ...puts];
  }

  /** Deletes of the oldest pending deliveries, so that one more leaves the webhook at its cap. */
  private dropOldestOps(webhookId: string, nowMs: number): WriteOp[] {
    const pending = this.pendingByWebhook.get(webhookId);
    if (pending === undefined) return [];
    let beingDropped = 0;
    for (const deliveryId of this.dropping) if (pending.has(deliveryId)) beingDropped += 1;
    let excess = pending.size - beingDropped + this.incomingCount(webhookId, nowMs) + 1 - this.maxPendingPerWebhook;
    const ops: WriteOp[] = [];
    for (const deliveryId of pending) {
      if (excess <= 0) break;
      if (this.dropping.has(deliveryId)) continue;
      this.dropping.add(deliveryId);
      ops.push({ op: 'del', collection: DELIVERIES, id: deliveryId });
      excess -= 1;
    }
    return ops;
  }

  private incomingCount(webhookId: string, nowMs: number): number {
    const handedOut = this.incoming.get(webhookId);
    if (handedOut === undefined) return 0;
    for (const [deliveryId, atMs] of handedOut) {
      // Oldest first: the first recent one ends the clean-up.
      if (nowMs - atMs < INCOMING_FORGET_MS) break;
      handedOut.delete(deliveryId);
    }
    return handedOut.size;
  }

  /** Keeps the owner index and pending counts current; wired to the store's changes in app.ts. */
  onStoreChange(change: ChangeEvent): void {
    if (change.collection === DELIVERIES) {
      const after = change.after as DeliveryRecord | undefined;
      const before = change.before as DeliveryRecord | undefined;
      const webhookId = after?.webhook_id ?? before?.webhook_id;
      if (webhookId !== undefined) {
        this.trackPending(webhookId, change.id, after !== undefined && isPendingDelivery(after));
        const handedOut = this.incoming.get(webhookId);
        handedOut?.delete(change.id);
        if (handedOut?.size === 0) this.incoming.delete(webhookId);
      }
      if (after === undefined && this.dropping.delete(change.id)) this.counts?.add('failed', 1, 'dropped');
      return;
    }
    if (change.collection !== WEBHOOKS) return;
    const before = change.before as WebhookRecord | undefined;
    const after = change.after as WebhookRecord | undefined;
    if (before !== undefined && before.user_id !== after?.user_id) {
      const ids = this.idsByOwner.get(before.user_id);
      ids?.delete(before.id);
      if (ids?.size === 0) this.idsByOwner.delete(before.user_id);
    }
    if (after !== undefined) this.index(after.user_id, after.id);
  }

  private trackPending(webhookId: string, deliveryId: string, pending: boolean): void {
    let ids = this.pendingByWebhook.get(webhookId);
    if (pending) {
      if (ids === undefined) {
        ids = new Set();
        this.pendingByWebhook.set(webhookId, ids);
      }
      ids.add(deliveryId);
      return;
    }
    ids?.delete(deliveryId);
    if (ids?.size === 0) this.pendingByWebhook.delete(webhookId);
  }

  private index(ownerId: string, webhookId: string): void {
    let ids = this.idsByOwner.get(ownerId);
    if (ids === undefined) {
      ids = new Set();
      this.idsByOwner.set(ownerId, ids);
    }
    ids.add(webhookId);
  }
}
