// Sends the deliveries the outbox recorded, in the background: each at its next_attempt_at, at
// most a few at once and one at a time per webhook, retried on the configured schedule. Every
// outcome is written back (the delivery, and the webhook's last_delivery) before the next
// attempt; since deliveries live in the store, a restart resumes them (at least once).

import type { Clock } from '../clock.ts';
import { isoTime } from '../clock.ts';
import { DELIVERIES, WEBHOOKS } from '../domain/records.ts';
import type { WriteOp } from '../store/format.ts';
import { StoreClosedError } from '../store/store.ts';
import type { ChangeEvent, Store } from '../store/store.ts';
import { isPendingDelivery } from './records.ts';
import type { DeliveryRecord, LastDelivery, WebhookRecord } from './records.ts';
import { sendWebhook } from './send.ts';
import type { SendOutcome } from './send.ts';
import { buildDeliveryHeaders } from './signing.ts';
import { withWebhookLock } from './webhook-lock.ts';

const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_MAX_IN_FLIGHT = 8;
const DEFAULT_STOP_TIMEOUT_MS = 5_000;
const DEFAULT_STORE_RETRY_MS = 1_000;
const MAX_STORE_RETRY_MS = 60_000;
/** A receiver's Retry-After is honoured up to a day; beyond that it reads as a mistake. */
const DEFAULT_MAX_RETRY_AFTER_MS = 24 * 60 * 60 * 1000;
/** setTimeout's longest wait; a later attempt sleeps in several steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface WebhookDispatcherOptions {
  store: Store;
  clock: Clock;
  /** The pause before each retry; after the last one the delivery is failed. */
  retryDelaysMs: readonly number[];
  allowPrivate: boolean;
  send?: typeof sendWebhook;
  /** Per attempt: only a 2xx within this time counts. */
  timeoutMs?: number;
  /** Sends under way at once, over all webhooks (each webhook has at most one). */
  maxInFlight?: number;
  /** How long stop() waits for sends under way. */
  stopTimeoutMs?: number;
  /** First pause before writing an outcome again when the store refused it (doubles, up to a minute). */
  storeRetryMs?: number;
  maxRetryAfterMs?: number;
  warn?: (message: string) => void;
}

export class WebhookDispatcher {
  private readonly store: Store;
  private readonly clock: Clock;
  private readonly retryDelaysMs: readonly number[];
  private readonly allowPrivate: boolean;
  private readonly send: typeof sendWebhook;
  private readonly timeoutMs: number;
  private readonly maxInFlight: number;
  private readonly stopTimeoutMs: number;
  private readonly storeRetryMs: number;
  private readonly maxRetryAfterMs: number;
  private readonly warn: (message: string) => void;

  private started = false;
  private stopped = false;
  private readonly timers = new Map<string, NodeJS.Timeout>();
  /**
   * Due deliveries waiting for a free slot, per webhook, oldest first. A webhook whose turn came
   * goes to the back, so one webhook's backlog cannot starve the others.
   */
  private readonly ready = new Map<string, string[]>();
  private readonly readyWebhookOf = new Map<string, string>();
  /** Deliveries being sent or having their outcome written; not scheduled meanwhile. */
  private readonly inFlight = new Set<string>();
  private readonly busyWebhooks = new Set<string>();
  private sendsUnderWay = 0;
  private pumping = false;
  private pumpAgain = false;
  private readonly attempts = new Set<Promise<void>>();
  private readonly sleepers = new Set<() => void>();

  constructor(options: WebhookDispatcherOptions) {
    this.store = options.store;
    this.clock = options.clock;
    this.retryDelaysMs = [...options.retryDelaysMs];
    this.allowPrivate = options.allowPrivate;
    this.send = options.send ?? sendWebhook;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.maxInFlight = Math.max(1, options.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT);
    this.stopTimeoutMs = options.stopTimeoutMs ?? DEFAULT_STOP_TIMEOUT_MS;
    this.storeRetryMs = options.storeRetryMs ?? DEFAULT_STORE_RETRY_MS;
    this.maxRetryAfterMs = options.maxRetryAfterMs ?? DEFAULT_MAX_RETRY_AFTER_MS;
    this.warn = options.warn ?? ((message: string) => console.warn(message));
  }

  /** Schedules every pending delivery in the store, then each new one as it is written. Once only. */
  start(): void {
    if (this.started || this.stopped) return;
    this.started = true;
    this.store.onChange((change) => this.onStoreChange(change));
    for (const delivery of this.store.values(DELIVERIES)) {
      if (isPendingDelivery(delivery)) this.schedule(delivery);
    }
  }

  /** Stops scheduling and waits (at most stopTimeoutMs) for sends under way and their outcomes. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    this.ready.clear();
    this.readyWebhookOf.clear();
    for (const wake of this.sleepers) wake();
    let bound: NodeJS.Timeout | undefined;
    const timeUp = new Promise<void>((resolve) => {
      bound = setTimeout(resolve, this.stopTimeoutMs);
      bound.unref();
    });
    await Promise.race([Promise.allSettled([...this.attempts]), timeUp]);
    clearTimeout(bound);
  }

  /** Deliveries waiting for their time or a free slot, and those being sent now. */
  stats(): { scheduled: number; ready: number; inFlight: number } {
    return { scheduled: this.timers.size, ready: this.readyWebhookOf.size, inFlight: this.inFlight.size };
  }

  private onStoreChange(change: ChangeEvent): void {
    if (this.stopped || change.collection !== DELIVERIES) return;
    const delivery = change.after as DeliveryRecord | undefined;
    if (delivery !== undefined && isPendingDelivery(delivery)) this.schedule(delivery);
    else this.unschedule(change.id);
  }

  private schedule(delivery: DeliveryRecord): void {
    if (this.stopped || this.inFlight.has(delivery.id)) return;
    this.unschedule(delivery.id);
    const wait = Math.max(0, delivery.next_attempt_at - this.clock.now());
    // Always through a timer, even when due: the write (and the request) that created the
    // delivery finishes first, and no send starts inside a store callback.
    const timer = setTimeout(() => {
      this.timers.delete(delivery.id);
      if (wait > MAX_TIMER_MS) {
        const current = this.store.get(DELIVERIES, delivery.id);
        if (current !== undefined && isPendingDelivery(current)) this.schedule(current);
        return;
      }
      this.markReady(delivery);
      this.pump();
    }, Math.min(wait, MAX_TIMER_MS));
    timer.unref();
    this.timers.set(delivery.id, timer);
  }

  private unschedule(deliveryId: string): void {
    const timer = this.timers.get(deliveryId);
    if (timer !== undefined) {
      clearTimeout(timer);
      this.timers.delete(deliveryId);
    }
    const webhookId = this.readyWebhookOf.get(deliveryId);
    if (webhookId === undefined) return;
    this.readyWebhookOf.delete(deliveryId);
    const queue = this.ready.get(webhookId) ?? [];
    const position = queue.indexOf(deliveryId);
    if (position !== -1) queue.splice(position, 1);
    if (queue.length === 0) this.ready.delete(webhookId);
  }

  private markReady(delivery: DeliveryRecord): void {
    const queue = this.ready.get(delivery.webhook_id);
    if (queue === undefined) this.ready.set(delivery.webhook_id, [delivery.id]);
    else queue.push(delivery.id);
    this.readyWebhookOf.set(delivery.id, delivery.webhook_id);
  }

  /** The oldest due delivery of a webhook that still needs sending, taken off its queue. */
  private takeReady(webhookId: string, queue: string[]): DeliveryRecord | undefined {
    for (let deliveryId = queue.shift(); deliveryId !== undefined; deliveryId = queue.shift()) {
      this.readyWebhookOf.delete(deliveryId);
      const delivery = this.store.get(DELIVERIES, deliveryId);
      if (delivery !== undefined && isPendingDelivery(delivery) && !this.inFlight.has(deliveryId)) return delivery;
    }
    this.ready.delete(webhookId);
    return undefined;
  }

  /** Starts due deliveries while slots are free, one per webhook that has none under way. */
  private pump(): void {
    // An attempt can free its slot at once (a dropped delivery) and ask for another pump; that
    // becomes one more pass here rather than a nested call.
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    this.pumping = true;
    try {
      do {
        this.pumpAgain = false;
        // A snapshot: webhooks moved to the back below are not visited twice in one pass.
        for (const [webhookId, queue] of [...this.ready]) {
          if (this.stopped || this.sendsUnderWay >= this.maxInFlight) return;
          if (this.busyWebhooks.has(webhookId)) continue;
          const delivery = this.takeReady(webhookId, queue);
          if (delivery === undefined) continue;
          this.ready.delete(webhookId);
          if (queue.length > 0) this.ready.set(webhookId, queue);
          this.startAttempt(delivery);
        }
      } while (this.pumpAgain);
    } finally {
      this.pumping = false;
    }
  }

  private startAttempt(delivery: DeliveryRecord): void {
    this.inFlight.add(delivery.id);
    this.busyWebhooks.add(delivery.webhook_id);
    this.sendsUnderWay += 1;
    const attempt = this.attempt(delivery)
      .catch((error: unknown) => this.warn(`Webhook delivery ${delivery.id} failed unexpectedly: ${(error as Error)?.message ?? String(error)}`))
      .finally(() => {
        this.attempts.delete(attempt);
        this.inFlight.delete(delivery.id);
        this.busyWebhooks.delete(delivery.webhook_id);
        // A retry written while in flight was not scheduled by the change listener; do it now.
        const current = this.store.get(DELIVERIES, delivery.id);
        if (current !== undefined && isPendingDelivery(current)) this.schedule(current);
        this.pump();
      });
    this.attempts.add(attempt);
  }

  private async attempt(delivery: DeliveryRecord): Promise<void> {
    let slotHeld = true;
    const releaseSlot = (): void => {
      if (!slotHeld) return;
      slotHeld = false;
      this.sendsUnderWay -= 1;
      this.pump();
    };
    try {
      const webhook = this.store.get(WEBHOOKS, delivery.webhook_id);
      if (webhook === undefined || !webhook.active) {
        // Removed or turned off (a 410) since the event: the delivery is dropped unsent.
        releaseSlot();
        await this.record(delivery, (current) => (current === undefined ? [] : [deleteDelivery(current.id)]));
        return;
      }
      const outcome = await this.sendOnce(webhook, delivery);
      releaseSlot();
      await this.record(delivery, (current, currentWebhook) => this.outcomeOps(outcome, current, currentWebhook));
    } finally {
      releaseSlot();
    }
  }

  /** One signed POST. The id stays the event's on every attempt; the timestamp and signature are new. */
  private async sendOnce(webhook: WebhookRecord, delivery: DeliveryRecord): Promise<SendOutcome> {
    const body = Buffer.from(delivery.payload);
    const timestampSeconds = Math.floor(this.clock.now() / 1000);
    try {
      return await this.send({
        url: webhook.url,
        body,
        headers: buildDeliveryHeaders(webhook.secret, delivery.event_id, timestampSeconds, body),
        timeoutMs: this.timeoutMs,
        allowPrivate: this.allowPrivate,
        clock: this.clock,
      });
    } catch (error) {
      return { delivered: false, status: null, error: (error as Error)?.message ?? 'send failed', gone: false };
    }
  }

  /**
   * Writes what `buildOps` makes of the current delivery and webhook, under the webhook's lock.
   * A refused write is tried again after a pause (doubling), until it lands or we stop; the
   * delivery meanwhile stays pending in the store, so a restart sends it again.
   */
  private async record(
    delivery: DeliveryRecord,
    buildOps: (current: DeliveryRecord | undefined, webhook: WebhookRecord | undefined) => WriteOp[],
  ): Promise<void> {
    let pause = this.storeRetryMs;
    for (;;) {
      try {
        await withWebhookLock(this.store, delivery.webhook_id, async () => {
          const current = this.store.get(DELIVERIES, delivery.id);
          const webhook = this.store.get(WEBHOOKS, delivery.webhook_id);
          await this.store.write(buildOps(current, webhook));
        });
        return;
      } catch (error) {
        if (error instanceof StoreClosedError || this.stopped) return;
        this.warn(`Could not record webhook delivery ${delivery.id} (${(error as Error)?.message ?? String(error)}); trying again in ${pause} ms.`);
        await this.sleep(pause);
        if (this.stopped) return;
        pause = Math.min(pause * 2, MAX_STORE_RETRY_MS);
      }
    }
  }

  private outcomeOps(outcome: SendOutcome, current: DeliveryRecord | undefined, webhook: WebhookRecord | undefined): WriteOp[] {
    // Deleted (with its webhook) while we were sending: nothing to record.
    if (current === undefined) return [];
    if (webhook === undefined) return [deleteDelivery(current.id)];
    const nowMs = this.clock.now();
    const at = isoTime(nowMs);
    const attempts = current.attempts + 1;
    const lastDelivery = (status: LastDelivery['status']): LastDelivery => ({
      event_id: current.event_id,
      type: current.type,
      status,
      attempts,
      response_status: outcome.status,
      at,
    });

    if (outcome.delivered) {
      return [deleteDelivery(current.id), putWebhook({ ...webhook, last_delivery: lastDelivery('delivered'), updated_at: at })];
    }
    if (outcome.gone) {
      // 410 Gone: the receiver asks for no more; the webhook stays, inactive, for its owner to see.
      return [deleteDelivery(current.id), putWebhook({ ...webhook, active: false, last_delivery: lastDelivery('failed'), updated_at: at })];
    }
    const scheduledDelay = this.retryDelaysMs[attempts - 1];
    if (scheduledDelay === undefined) {
      return [deleteDelivery(current.id), putWebhook({ ...webhook, last_delivery: lastDelivery('failed'), updated_at: at })];
    }
    const retryAfterMs = outcome.retryAfterMs === undefined ? 0 : Math.min(outcome.retryAfterMs, this.maxRetryAfterMs);
    const retry: DeliveryRecord = {
      ...current,
      status: 'retrying',
      attempts,
      next_attempt_at: nowMs + Math.max(scheduledDelay, retryAfterMs),
      response_status: outcome.status,
      last_error: failureReason(outcome),
      updated_at: at,
    };
    return [
      { op: 'put', collection: DELIVERIES, id: retry.id, data: retry },
      putWebhook({ ...webhook, last_delivery: lastDelivery('retrying'), updated_at: at }),
    ];
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        this.sleepers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      timer.unref();
      this.sleepers.add(wake);
    });
  }
}

function failureReason(outcome: SendOutcome): string {
  if (outcome.status === null) return outcome.error ?? 'no response';
  if (outcome.status >= 300 && outcome.status < 400) return `HTTP ${outcome.status} (redirects are not followed)`;
  return `HTTP ${outcome.status}`;
}

function deleteDelivery(id: string): WriteOp {
  return { op: 'del', collection: DELIVERIES, id };
}

function putWebhook(webhook: WebhookRecord): WriteOp {
  return { op: 'put', collection: WEBHOOKS, id: webhook.id, data: webhook };
}
