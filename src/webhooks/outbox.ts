// Turns an event into records: the event itself, stored once with its payload, and one
// delivery referring to it per active webhook of the owner that subscribes to its kind. They are
// ops for the caller's own write, so the change, its event and its deliveries land together or
// not at all; the dispatcher sends them later, never inside the request. An event is kept while
// a delivery or one of its webhooks' last 50 outcomes refers to it (so its owner can have it
// sent again), and deleted right after the write that removed the last reference.
// A webhook holds at most MAX_PENDING_PER_WEBHOOK pending deliveries: a new event past that
// drops the oldest ones in the same write (counted as failed once it commits), so writes piling
// up behind a dead receiver cannot grow the store and the log without bound.
//
// Decisions change nothing here: the counts come from what the store holds, and every write
// queuing events for a user rewrites the user's targets record, which each such write reads, so
// two of them are never decided on the same counts (the second is decided again after the
// first). A write that fails therefore leaves nothing behind.

import type { Clock } from '../clock.ts';
import { isoTime } from '../clock.ts';
import { DELIVERIES, DELIVERY_OUTCOME_ENTRIES, DELIVERY_OUTCOMES, EVENT_LOG, EVENTS, WEBHOOK_TARGETS, WEBHOOKS } from '../domain/records.ts';
import { newId } from '../domain/ids.ts';
import { isUserBarred } from '../domain/visibility.ts';
import type { WriteOp } from '../store/format.ts';
import type { ChangeEvent, DecisionReader, Store } from '../store/store.ts';
import type { RecordReader } from '../store/collections.ts';
import type { EventOutbox, EventType } from '../domain/events.ts';
import type { DeliveryOutcome, DeliveryRecord, EventLogRecord, EventRecord, WebhookRecord, WebhookTargetsRecord } from '../domain/webhook-records.ts';
import { isPaused, isPendingDelivery, webhookView } from '../domain/webhook-records.ts';
import { eventsNamedBy, outcomeLogged } from './outcome-log.ts';

export const MAX_PENDING_PER_WEBHOOK = 1_000;

/**
 * The op every write changing which of `userId`'s webhooks receive events must carry (a webhook
 * registered, removed or switched off): events are decided on this record (see eventOps).
 */
export function targetsChangedOp(userId: string, at: string): WriteOp {
  const targets: WebhookTargetsRecord = { id: userId, changed_at: at };
  return { op: 'put', collection: WEBHOOK_TARGETS, id: userId, data: targets };
}

export interface WebhookOutboxOptions {
  store: Store;
  clock: Clock;
  /** Told the pending deliveries dropped past a webhook's cap, once their write has landed (GET /metrics counts them as failed). */
  onDropped?: (howMany: number) => void;
  maxPendingPerWebhook?: number;
  warn?: (message: string) => void;
}

/**
 * Each user's event log, as the outbox writes to it: the events module's log
 * (src/modules/events/event-log.ts). Without that module no event is logged.
 */
export interface EventRecorder {
  /** The op that logs an event for `ownerId`; `payload` null when an EVENTS record of the same write holds it. */
  recordOp(ownerId: string, eventId: string, type: EventType, createdAt: string, payload: string | null): WriteOp;
}

export class WebhookOutbox implements EventOutbox {
  private readonly store: Store;
  private readonly clock: Clock;
  /** Webhook ids by owner, kept current from the store's changes, so an event costs no scan. */
  private readonly idsByOwner = new Map<string, Set<string>>();
  /** Pending delivery ids by webhook, oldest first (a Set keeps insertion order). */
  private readonly pendingByWebhook = new Map<string, Set<string>>();
  /** Delivery ids by the event they refer to: an event is deleted when its set empties. */
  private readonly deliveriesByEvent = new Map<string, Set<string>>();
  /** Outcome records (outcomeHolder) by the event they name: such an event is kept, to be sent again on request. */
  private readonly outcomesByEvent = new Map<string, Set<string>>();
  /** Events no delivery refers to any more, to delete in the next write of them. */
  private readonly unreferenced = new Set<string>();
  private removalQueued = false;
  private readonly onDropped: ((howMany: number) => void) | undefined;
  private readonly maxPendingPerWebhook: number;
  private readonly warn: (message: string) => void;
  /** Where every event is also logged for its owner (GET /v1/events), webhooks or not: set by logEventsIn(). */
  private eventLog: EventRecorder | null = null;

  constructor(options: WebhookOutboxOptions) {
    this.store = options.store;
    this.clock = options.clock;
    this.onDropped = options.onDropped;
    this.maxPendingPerWebhook = Math.max(1, options.maxPendingPerWebhook ?? MAX_PENDING_PER_WEBHOOK);
    this.warn = options.warn ?? ((message: string) => console.warn(message));
    for (const webhook of this.store.values(WEBHOOKS)) addTo(this.idsByOwner, webhook.user_id, webhook.id);
    for (const delivery of this.store.values(DELIVERIES)) {
      if (isPendingDelivery(delivery)) addTo(this.pendingByWebhook, delivery.webhook_id, delivery.id);
      addTo(this.deliveriesByEvent, delivery.event_id, delivery.id);
    }
    for (const log of this.store.values(DELIVERY_OUTCOMES)) this.trackOutcomes(outcomeHolder(DELIVERY_OUTCOMES, log.id), [], eventsNamedBy(DELIVERY_OUTCOMES, log));
    for (const entry of this.store.values(DELIVERY_OUTCOME_ENTRIES)) this.trackOutcomes(outcomeHolder(DELIVERY_OUTCOME_ENTRIES, entry.id), [], eventsNamedBy(DELIVERY_OUTCOME_ENTRIES, entry));
    // Events left without references (a removal that did not land before a stop) go now.
    for (const event of this.store.values(EVENTS)) if (!this.isReferenced(event.id)) this.unreferenced.add(event.id);
    this.queueRemoval();
  }

  /** From now on every event is also logged in `recorder` (the events module, at its install). */
  logEventsIn(recorder: EventRecorder): void {
    this.eventLog = recorder;
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
   * @example context.commit((tx, { user }) => ({ ops: [listingPut, ...outbox.eventOps(tx, 'listing.created', user.id, listing)], result: reply }))
   */
  eventOps(tx: DecisionReader, type: EventType, ownerId: string, data: object): WriteOp[] {
    // A suspended user's webhooks receive nothing: no event is even queued for them.
    if (isUserBarred(tx, ownerId)) return [];
    // The webhooks come from this outbox's index, not through tx. The write depends on them
    // through the owner's targets record, which every change of who receives events rewrites:
    // another server registering, removing or switching off one of them makes it decided again,
    // while a delivery outcome written on a webhook does not. Reading it also orders this write
    // after any other queuing events for the owner in the same batch (each one rewrites it).
    tx.get(WEBHOOK_TARGETS, ownerId);
    const subscribed = this.webhooksOf(ownerId).filter((webhook) => webhook.events.includes(type));
    const targets = subscribed.filter((webhook) => webhook.active);
    const paused = subscribed.filter(isPaused);
    if (targets.length === 0 && paused.length === 0) return this.logOnlyOps(type, ownerId, data);
    const ops = this.deliveryOps(tx, type, ownerId, data, targets);
    const eventId = (ops[0] as Extract<WriteOp, { op: 'put' }>).id;
    if (this.eventLog !== null) {
      // The event record just made holds the payload; the log's record refers to it by id.
      const event = (ops[0] as Extract<WriteOp, { op: 'put' }>).data as EventRecord;
      ops.push(this.eventLog.recordOp(ownerId, eventId, type, event.created_at, null));
    }
    // A paused webhook is sent nothing: the event is a `skipped` outcome of it, which keeps the
    // event (so a recovery can send it once resumed). Read through tx: a resume or another
    // outcome written meanwhile makes this write decided again. Paused, it has no delivery
    // whose outcomes the dispatcher could be writing.
    for (const { id } of paused) {
      const webhook = tx.get(WEBHOOKS, id);
      if (webhook === undefined || !isPaused(webhook)) continue;
      ops.push(...skippedOutcomeOps(tx, webhook, eventId, type, isoTime(this.clock.now())));
    }
    ops.push(touchedTargetsOp(tx, ownerId, eventId, isoTime(this.clock.now())));
    return ops;
  }

  /**
   * The ping for a webhook being registered (not yet in the store), written with it (and with
   * its owner's targets record, which registration rewrites). Sent only when its `events`
   * include `ping`, as the default does.
   */
  pingOps(tx: DecisionReader, webhook: WebhookRecord): WriteOp[] {
    if (!webhook.events.includes('ping')) return [];
    return this.deliveryOps(tx, 'ping', webhook.user_id, webhookView(webhook), [webhook]);
  }

  /**
   * Deletes of every delivery still waiting for `ownerId`'s webhooks (a suspension drops them
   * unsent), counted as failed once the write commits.
   */
  dropPendingOps(tx: DecisionReader, ownerId: string): WriteOp[] {
    const ops: WriteOp[] = [];
    for (const webhook of this.webhooksOf(ownerId)) {
      for (const deliveryId of this.pendingByWebhook.get(webhook.id) ?? []) {
        // Read through tx: an outcome being written for it is decided before or after this.
        if (tx.get(DELIVERIES, deliveryId) !== undefined) ops.push({ op: 'del', collection: DELIVERIES, id: deliveryId });
      }
    }
    this.countDropsOnCommit(tx, ops.length);
    return ops;
  }

  /** A `ping` its owner asked for now (the portal's test), whatever events the webhook receives. */
  testPingOps(tx: DecisionReader, webhook: WebhookRecord): WriteOp[] {
    return this.deliveryOps(tx, 'ping', webhook.user_id, webhookView(webhook), [webhook]);
  }

  /**
   * Sending `eventId` to the owner's `webhook` now (a redelivery or a recovery): the same event
   * record, so the same webhook-id and body, signed afresh when sent. A delivery of it still
   * waiting (a retry) is made due now instead, so it replaces the pending retry; otherwise a new
   * delivery, decided on the owner's targets record, which it rewrites, so two redeliveries at
   * once are decided one after the other and the second sees the first's delivery. Null when the
   * event is no longer kept.
   */
  sendNowOps(tx: DecisionReader, webhook: WebhookRecord, eventId: string): { ops: WriteOp[]; event: EventRecord } | null {
    const event = tx.get(EVENTS, eventId);
    if (event === undefined) return null;
    const nowMs = this.clock.now();
    for (const deliveryId of this.deliveriesByEvent.get(eventId) ?? []) {
      const delivery = tx.get(DELIVERIES, deliveryId);
      if (delivery === undefined || delivery.webhook_id !== webhook.id || !isPendingDelivery(delivery)) continue;
      const due: DeliveryRecord = { ...delivery, next_attempt_at: nowMs, updated_at: isoTime(nowMs) };
      return { event, ops: [{ op: 'put', collection: DELIVERIES, id: due.id, data: due }] };
    }
    const drops = this.dropOldestOps(tx, webhook.id);
    this.countDropsOnCommit(tx, drops.length);
    const delivery = newDelivery(webhook.id, event.id, event.type, nowMs);
    return { event, ops: [...drops, { op: 'put', collection: DELIVERIES, id: delivery.id, data: delivery }, touchedTargetsOp(tx, webhook.user_id, event.id, isoTime(nowMs))] };
  }

  /** The event for the owner's log alone, when no webhook of theirs receives it. */
  private logOnlyOps(type: EventType, ownerId: string, data: object): WriteOp[] {
    if (this.eventLog === null) return [];
    const eventId = newId('evt');
    const createdAt = isoTime(this.clock.now());
    return [this.eventLog.recordOp(ownerId, eventId, type, createdAt, eventPayload(eventId, type, createdAt, data))];
  }

  /** The event record first, then the drops that keep each target at its cap, then a delivery per target. */
  private deliveryOps(tx: DecisionReader, type: EventType, ownerId: string, data: object, targets: readonly WebhookRecord[]): WriteOp[] {
    const nowMs = this.clock.now();
    const createdAt = isoTime(nowMs);
    const eventId = newId('evt');
    // Serialised once and stored once: every webhook, and every retry, gets exactly these bytes.
    const event: EventRecord = { id: eventId, owner_id: ownerId, type, payload: eventPayload(eventId, type, createdAt, data), created_at: createdAt };
    const drops = targets.flatMap((webhook) => this.dropOldestOps(tx, webhook.id));
    this.countDropsOnCommit(tx, drops.length);
    const puts = targets.map((webhook): WriteOp => {
      const delivery = newDelivery(webhook.id, eventId, type, nowMs);
      return { op: 'put', collection: DELIVERIES, id: delivery.id, data: delivery };
    });
    return [{ op: 'put', collection: EVENTS, id: eventId, data: event }, ...drops, ...puts];
  }

  /** Deletes of the oldest pending deliveries, so that one more leaves the webhook at its cap. */
  private dropOldestOps(tx: DecisionReader, webhookId: string): WriteOp[] {
    const pending = this.pendingByWebhook.get(webhookId);
    if (pending === undefined) return [];
    let excess = pending.size + 1 - this.maxPendingPerWebhook;
    const ops: WriteOp[] = [];
    for (const deliveryId of pending) {
      if (excess <= 0) break;
      // Read through tx, so an outcome written for it meanwhile is decided before or after the drop, never across it.
      tx.get(DELIVERIES, deliveryId);
      ops.push({ op: 'del', collection: DELIVERIES, id: deliveryId });
      excess -= 1;
    }
    return ops;
  }

  private countDropsOnCommit(tx: DecisionReader, dropped: number): void {
    if (dropped > 0) tx.afterCommit(() => this.onDropped?.(dropped));
  }

  /** Keeps the owner index, pending counts and event references current; wired to the store's changes in app.ts. */
  onStoreChange(change: ChangeEvent): void {
    if (change.collection === DELIVERIES) {
      const after = change.after as DeliveryRecord | undefined;
      const delivery = after ?? (change.before as DeliveryRecord | undefined);
      if (delivery === undefined) return;
      if (after !== undefined && isPendingDelivery(after)) addTo(this.pendingByWebhook, delivery.webhook_id, change.id);
      else removeFrom(this.pendingByWebhook, delivery.webhook_id, change.id);
      if (after !== undefined) addTo(this.deliveriesByEvent, delivery.event_id, change.id);
      else if (removeFrom(this.deliveriesByEvent, delivery.event_id, change.id)) this.forgetIfUnreferenced(delivery.event_id);
      return;
    }
    if (change.collection === EVENTS) {
      if (change.after === undefined) this.unreferenced.delete(change.id);
      return;
    }
    if (change.collection === DELIVERY_OUTCOMES || change.collection === DELIVERY_OUTCOME_ENTRIES) {
      this.trackOutcomes(outcomeHolder(change.collection, change.id), eventsNamedBy(change.collection, change.before), eventsNamedBy(change.collection, change.after));
      return;
    }
    if (change.collection !== WEBHOOKS) return;
    const before = change.before as WebhookRecord | undefined;
    const after = change.after as WebhookRecord | undefined;
    if (before !== undefined && before.user_id !== after?.user_id) removeFrom(this.idsByOwner, before.user_id, before.id);
    if (after !== undefined) addTo(this.idsByOwner, after.user_id, after.id);
  }

  /**
   * Follows which events an outcome record (an entry, or a list-form log) names, as it is
   * rewritten or removed. `holder` is the record's own key: one webhook's entries may name the
   * same event (its retries), and the event is kept while any of them does.
   */
  private trackOutcomes(holder: string, before: readonly string[], after: readonly string[]): void {
    const named = new Set(after);
    for (const eventId of named) {
      addTo(this.outcomesByEvent, eventId, holder);
      // Named again in the same write that removed its last delivery: kept after all.
      this.unreferenced.delete(eventId);
    }
    for (const eventId of before) {
      if (!named.has(eventId) && removeFrom(this.outcomesByEvent, eventId, holder)) this.forgetIfUnreferenced(eventId);
    }
  }

  private isReferenced(eventId: string): boolean {
    return this.deliveriesByEvent.has(eventId) || this.outcomesByEvent.has(eventId);
  }

  /** Queues the event's deletion once neither a delivery nor an outcome names it. */
  private forgetIfUnreferenced(eventId: string): void {
    if (this.isReferenced(eventId) || this.store.get(EVENTS, eventId) === undefined) return;
    this.unreferenced.add(eventId);
    this.queueRemoval();
  }

  /**
   * Deletes the events no delivery refers to, in one write after the current one has been
   * applied. Decided on the events as they are then, so another server deleting one first
   * changes nothing; one that fails to land is deleted at the next start.
   */
  private queueRemoval(): void {
    if (this.removalQueued || this.unreferenced.size === 0) return;
    this.removalQueued = true;
    queueMicrotask(() => {
      this.removalQueued = false;
      const candidates = [...this.unreferenced];
      this.store
        .commit((tx) => {
          const ops: WriteOp[] = [];
          for (const eventId of candidates) {
            const event = tx.get(EVENTS, eventId);
            if (this.isReferenced(eventId) || event === undefined) continue;
            ops.push({ op: 'del', collection: EVENTS, id: eventId });
            // The owner's event log still keeps it: the payload moves there, in the same write.
            const logged = tx.get(EVENT_LOG, eventId);
            if (logged !== undefined && logged.payload === undefined) {
              const complete: EventLogRecord = { ...logged, payload: event.payload };
              ops.push({ op: 'put', collection: EVENT_LOG, id: eventId, data: complete });
            }
          }
          return { ops, result: undefined };
        })
        .then(() => {
          // Deleted by this write or before it (by another server): nothing left to do for them.
          for (const eventId of candidates) if (this.store.get(EVENTS, eventId) === undefined || this.isReferenced(eventId)) this.unreferenced.delete(eventId);
        })
        .catch((error: Error) => {
          if (error.name !== 'StoreClosedError') this.warn(`Could not delete finished webhook events (they go at the next start): ${error.message}`);
        });
    });
  }
}

/** The outcome `skipped` of event `eventId` for the paused `webhook` (its last_delivery unchanged: nothing was sent). */
export function skippedOutcomeOps(tx: RecordReader, webhook: WebhookRecord, eventId: string, type: EventType, at: string): WriteOp[] {
  const outcome: DeliveryOutcome = { at, event_id: eventId, event: type, status: 'skipped', attempts: 0, response_status: null, duration_ms: 0, next_attempt_at: null };
  const logged = outcomeLogged(webhook, outcome, tx.get(DELIVERY_OUTCOMES, webhook.id));
  return [{ op: 'put', collection: WEBHOOKS, id: webhook.id, data: logged.webhook }, ...logged.ops];
}

/** The JSON body of an event, as every webhook and the event log get it. */
function eventPayload(eventId: string, type: EventType, createdAt: string, data: object): string {
  return JSON.stringify({ id: eventId, type, created_at: createdAt, data });
}

/** A delivery of `eventId` to `webhookId`, due now. */
function newDelivery(webhookId: string, eventId: string, type: EventType, nowMs: number): DeliveryRecord {
  const createdAt = isoTime(nowMs);
  return {
    id: newId('dlv'),
    webhook_id: webhookId,
    event_id: eventId,
    type,
    status: 'pending',
    attempts: 0,
    next_attempt_at: nowMs,
    response_status: null,
    last_error: null,
    created_at: createdAt,
    updated_at: createdAt,
  };
}

/** The key an outcome record is known by among the holders of an event (ids of the two collections never meet, but the name makes sure). */
function outcomeHolder(collection: string, id: string): string {
  return `${collection}/${id}`;
}

/**
 * The op rewriting `ownerId`'s targets record with the last event queued for their webhooks
 * (read through tx, so the write is decided on it): see eventOps.
 */
function touchedTargetsOp(tx: DecisionReader, ownerId: string, eventId: string, at: string): WriteOp {
  const touched: WebhookTargetsRecord = { id: ownerId, changed_at: tx.get(WEBHOOK_TARGETS, ownerId)?.changed_at ?? at, last_event_id: eventId };
  return { op: 'put', collection: WEBHOOK_TARGETS, id: ownerId, data: touched };
}

/** Adds `value` to the set under `key`, made with the first. */
function addTo(sets: Map<string, Set<string>>, key: string, value: string): void {
  const set = sets.get(key);
  if (set === undefined) sets.set(key, new Set([value]));
  else set.add(value);
}

/** Removes `value` from the set under `key`; true when that emptied the set, which goes too. */
function removeFrom(sets: Map<string, Set<string>>, key: string, value: string): boolean {
  const set = sets.get(key);
  if (set === undefined || !set.delete(value) || set.size > 0) return false;
  sets.delete(key);
  return true;
}
