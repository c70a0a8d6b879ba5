// Turns an event into delivery records, one per active webhook of the owner that subscribes to
// its kind. The records are ops for the caller's own write, so the change and its deliveries
// land together or not at all; the dispatcher sends them later, never inside the request.

import type { Clock } from '../clock.ts';
import { isoTime } from '../clock.ts';
import { DELIVERIES, WEBHOOKS } from '../domain/records.ts';
import { newId } from '../domain/ids.ts';
import type { WriteOp } from '../store/format.ts';
import type { ChangeEvent, Store } from '../store/store.ts';
import type { EventOutbox, EventType } from './events.ts';
import type { DeliveryRecord, WebhookRecord } from './records.ts';
import { webhookView } from './records.ts';

export interface WebhookOutboxOptions {
  store: Store;
  clock: Clock;
}

export class WebhookOutbox implements EventOutbox {
  private readonly store: Store;
  private readonly clock: Clock;
  /** Webhook ids by owner, kept current from the store's changes, so an event costs no scan. */
  private readonly idsByOwner = new Map<string, Set<string>>();

  constructor(options: WebhookOutboxOptions) {
    this.store = options.store;
    this.clock = options.clock;
    for (const webhook of this.store.values(WEBHOOKS)) this.index(webhook.user_id, webhook.id);
    this.store.onChange((change) => this.track(change));
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
   * @example context.commit([listingPut, ...outbox.eventOps('listing.created', user.id, listing)], reply)
   */
  eventOps(type: EventType, ownerId: string, data: object): WriteOp[] {
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

  private deliveryOps(type: EventType, data: object, targets: readonly WebhookRecord[]): WriteOp[] {
    if (targets.length === 0) return [];
    const nowMs = this.clock.now();
    const createdAt = isoTime(nowMs);
    const eventId = newId('evt');
    // Serialised once: every webhook, and every retry, gets exactly these bytes.
    const payload = JSON.stringify({ id: eventId, type, created_at: createdAt, data });
    return targets.map((webhook) => {
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
      return { op: 'put', collection: DELIVERIES, id: delivery.id, data: delivery };
    });
  }

  private track(change: ChangeEvent): void {
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

  private index(ownerId: string, webhookId: string): void {
    let ids = this.idsByOwner.get(ownerId);
    if (ids === undefined) {
      ids = new Set();
      this.idsByOwner.set(ownerId, ids);
    }
    ids.add(webhookId);
  }
}
