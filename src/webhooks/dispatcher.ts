// Sends the deliveries the outbox recorded, in the background: each at its next_attempt_at, at
// most a few at once, at most two per user and one per webhook, retried on the configured
// schedule. Due deliveries wait in one queue per user, served in turn, so one user's slow or
// dead receivers can hold at most that user's own share of the senders. Every outcome is
// written back (the delivery, and the webhook's last_delivery) before the next attempt; since
// deliveries live in the store, a restart resumes them (at least once).

import type { Clock } from '../clock.ts';
import { isoTime } from '../clock.ts';
import { DELIVERIES, DELIVERY_OUTCOMES, EVENTS, WEBHOOKS } from '../domain/records.ts';
import { isUserBarred } from '../domain/visibility.ts';
import type { WriteOp } from '../store/format.ts';
import { StoreClosedError } from '../store/store.ts';
import type { ChangeEvent, Store } from '../store/store.ts';
import { skippedOutcomeOps, targetsChangedOp } from './outbox.ts';
import { outcomeLogged, type DeliveryOutcomeLogRecord } from './outcome-log.ts';
import { decideAttempt, failureReason } from './outcome-rules.ts';
import { isPaused, isPendingDelivery, signingSecrets } from '../domain/webhook-records.ts';
import type { DeliveryRecord, LastDelivery, WebhookRecord } from '../domain/webhook-records.ts';
import { sendWebhook } from './send.ts';
import type { SendOutcome } from './send.ts';
import { buildDeliveryHeaders } from './signing.ts';
import type { AttemptClaims } from './attempt-claim.ts';

export const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_MAX_IN_FLIGHT = 8;
/** Sends one user may have under way at once: the rest of the senders stay free for others. */
const DEFAULT_MAX_IN_FLIGHT_PER_USER = 2;
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
  /** Sends under way at once for one user's webhooks. */
  maxInFlightPerUser?: number;
  /** With many instances: claim each attempt so that one instance sends it (null/absent: one instance). */
  claims?: AttemptClaims | null;
  /** How long stop() waits for sends under way. */
  stopTimeoutMs?: number;
  /** First pause before writing an outcome again when the store refused it (doubles, up to a minute). */
  storeRetryMs?: number;
  maxRetryAfterMs?: number;
  warn?: (message: string) => void;
}

/** Switching off a webhook whose every delivery failed for `afterMs`, audited by the op `entryOp` makes. */
export interface FailingSwitchOff {
  afterMs: number;
  entryOp: (webhook: WebhookRecord, failingSince: string) => WriteOp;
}

export class WebhookDispatcher {
  private readonly store: Store;
  private readonly clock: Clock;
  private readonly retryDelaysMs: readonly number[];
  private readonly allowPrivate: boolean;
  private readonly send: typeof sendWebhook;
  private readonly timeoutMs: number;
  private readonly maxInFlight: number;
  private readonly maxInFlightPerUser: number;
  private readonly stopTimeoutMs: number;
  private readonly storeRetryMs: number;
  private readonly maxRetryAfterMs: number;
  private readonly warn: (message: string) => void;
  private readonly claims: AttemptClaims | null;
  /** Set by the webhook-tools module (switchOffFailing); null: a failing webhook keeps its retries. */
  private failingSwitchOff: FailingSwitchOff | null = null;

  private started = false;
  private stopped = false;
  private readonly timers = new Map<string, NodeJS.Timeout>();
  /**
   * Due deliveries waiting for a free slot: per user, then per webhook, oldest first. A user
   * whose turn came goes to the back, and so does the webhook within the user's queue, so
   * neither one user's backlog nor one webhook's can starve the others.
   */
  private readonly ready = new Map<string, Map<string, string[]>>();
  private readonly readyPlaceOf = new Map<string, { userId: string; webhookId: string }>();
  /** Deliveries being sent or having their outcome written; not scheduled meanwhile. */
  private readonly inFlight = new Set<string>();
  private readonly busyWebhooks = new Set<string>();
  private readonly sendsPerUser = new Map<string, number>();
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
    this.maxInFlightPerUser = Math.max(1, options.maxInFlightPerUser ?? DEFAULT_MAX_IN_FLIGHT_PER_USER);
    this.stopTimeoutMs = options.stopTimeoutMs ?? DEFAULT_STOP_TIMEOUT_MS;
    this.storeRetryMs = options.storeRetryMs ?? DEFAULT_STORE_RETRY_MS;
    this.maxRetryAfterMs = options.maxRetryAfterMs ?? DEFAULT_MAX_RETRY_AFTER_MS;
    this.warn = options.warn ?? ((message: string) => console.warn(message));
    this.claims = options.claims ?? null;
  }

  /**
   * From now on a webhook whose every delivery has failed for `switchOff.afterMs` (none
   * delivered) is switched off. The webhook-tools module sets it, as it can resume one (PATCH);
   * without it a failing webhook keeps its retries, as a server with no way back should.
   */
  switchOffFailing(switchOff: FailingSwitchOff): void {
    this.failingSwitchOff = switchOff;
  }

  /** Schedules every pending delivery in the store, then each new one as it is written. Once only. */
  start(): void {
    if (this.started || this.stopped) return;
    this.started = true;
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
    this.readyPlaceOf.clear();
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
    return { scheduled: this.timers.size, ready: this.readyPlaceOf.size, inFlight: this.inFlight.size };
  }

  /**
   * Schedules a new or retried delivery, unschedules one that is done; wired to the store's
   * changes in app.ts. Changes before start() are ignored: start() finds them in the store.
   */
  onStoreChange(change: ChangeEvent): void {
    if (!this.started || this.stopped || change.collection !== DELIVERIES) return;
    const delivery = change.after as DeliveryRecord | undefined;
    if (delivery !== undefined && isPendingDelivery(delivery)) this.schedule(delivery);
    else this.unschedule(change.id);
  }

  private schedule(delivery: DeliveryRecord): void {
    if (this.stopped || this.inFlight.has(delivery.id)) return;
    this.unschedule(delivery.id);
    const now = this.clock.now();
    // An attempt another instance is sending is looked at again when its claim lapses.
    const due = Math.max(delivery.next_attempt_at, this.claims?.heldElsewhereUntil(delivery, now) ?? 0);
    const wait = Math.max(0, due - now);
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
    const place = this.readyPlaceOf.get(deliveryId);
    if (place === undefined) return;
    this.readyPlaceOf.delete(deliveryId);
    const webhooks = this.ready.get(place.userId);
    const queue = webhooks?.get(place.webhookId) ?? [];
    const position = queue.indexOf(deliveryId);
    if (position !== -1) queue.splice(position, 1);
    if (queue.length === 0) webhooks?.delete(place.webhookId);
    if (webhooks?.size === 0) this.ready.delete(place.userId);
  }

  private markReady(delivery: DeliveryRecord): void {
    // A delivery whose webhook is gone waits under no user; its attempt just drops it.
    const userId = this.store.get(WEBHOOKS, delivery.webhook_id)?.user_id ?? '';
    let webhooks = this.ready.get(userId);
    if (webhooks === undefined) {
      webhooks = new Map();
      this.ready.set(userId, webhooks);
    }
    const queue = webhooks.get(delivery.webhook_id);
    if (queue === undefined) webhooks.set(delivery.webhook_id, [delivery.id]);
    else queue.push(delivery.id);
    this.readyPlaceOf.set(delivery.id, { userId, webhookId: delivery.webhook_id });
  }

  /** The oldest due delivery that still needs sending, taken off its queue; empty queues are dropped. */
  private takeReady(webhooks: Map<string, string[]>, webhookId: string, queue: string[]): DeliveryRecord | undefined {
    for (let deliveryId = queue.shift(); deliveryId !== undefined; deliveryId = queue.shift()) {
      this.readyPlaceOf.delete(deliveryId);
      const delivery = this.store.get(DELIVERIES, deliveryId);
      if (delivery !== undefined && isPendingDelivery(delivery) && !this.inFlight.has(deliveryId)) {
        // The webhook's turn came: it goes to the back of its user's queue.
        webhooks.delete(webhookId);
        if (queue.length > 0) webhooks.set(webhookId, queue);
        return delivery;
      }
    }
    webhooks.delete(webhookId);
    return undefined;
  }

  /** The next delivery of one user: from the first of its webhooks with nothing under way. */
  private takeReadyOfUser(webhooks: Map<string, string[]>): DeliveryRecord | undefined {
    for (const [webhookId, queue] of [...webhooks]) {
      if (this.busyWebhooks.has(webhookId)) continue;
      const delivery = this.takeReady(webhooks, webhookId, queue);
      if (delivery !== undefined) return delivery;
    }
    return undefined;
  }

  /**
   * Starts due deliveries while slots are free: users in turn, one delivery per user per round,
   * skipping users at their own limit and webhooks with a send under way.
   */
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
        let startedOne = true;
        while (startedOne) {
          startedOne = false;
          // A snapshot: users moved to the back below are not visited twice in one round.
          for (const [userId, webhooks] of [...this.ready]) {
            if (this.stopped || this.sendsUnderWay >= this.maxInFlight) return;
            if ((this.sendsPerUser.get(userId) ?? 0) >= this.maxInFlightPerUser) continue;
            const delivery = this.takeReadyOfUser(webhooks);
            this.ready.delete(userId);
            if (webhooks.size > 0) this.ready.set(userId, webhooks);
            if (delivery === undefined) continue;
            this.startAttempt(delivery, userId);
            startedOne = true;
          }
        }
      } while (this.pumpAgain);
    } finally {
      this.pumping = false;
    }
  }

  private startAttempt(delivery: DeliveryRecord, userId: string): void {
    this.inFlight.add(delivery.id);
    this.busyWebhooks.add(delivery.webhook_id);
    this.sendsUnderWay += 1;
    this.sendsPerUser.set(userId, (this.sendsPerUser.get(userId) ?? 0) + 1);
    const attempt = this.attempt(delivery, userId)
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

  private async attempt(delivery: DeliveryRecord, userId: string): Promise<void> {
    let slotHeld = true;
    const releaseSlot = (): void => {
      if (!slotHeld) return;
      slotHeld = false;
      this.sendsUnderWay -= 1;
      const userSends = (this.sendsPerUser.get(userId) ?? 1) - 1;
      if (userSends > 0) this.sendsPerUser.set(userId, userSends);
      else this.sendsPerUser.delete(userId);
      this.pump();
    };
    try {
      const webhook = this.store.get(WEBHOOKS, delivery.webhook_id);
      const payload = payloadOf(this.store, delivery);
      if (webhook !== undefined && isPaused(webhook)) {
        // Paused since it was queued: not sent, and its outcome says so.
        releaseSlot();
        await this.record(delivery, (current, currentWebhook) => {
          if (current === undefined) return [];
          if (currentWebhook === undefined || !isPaused(currentWebhook)) return currentWebhook === undefined ? [deleteDelivery(current.id)] : [];
          return [deleteDelivery(current.id), ...skippedOutcomeOps(this.store, currentWebhook, current.event_id, current.type, isoTime(this.clock.now()))];
        });
        return;
      }
      if (webhook === undefined || !webhook.active || isUserBarred(this.store, webhook.user_id) || payload === undefined) {
        // Removed or turned off (a 410) since the event, or its owner suspended: the delivery
        // is dropped unsent (a suspended user's webhooks receive nothing). So is one whose
        // event is gone (erased with its owner).
        releaseSlot();
        await this.record(delivery, (current) => (current === undefined ? [] : [deleteDelivery(current.id)]));
        return;
      }
      if (this.claims && !(await this.claims.claim(delivery.id, this.clock.now()))) return;
      const sendStarted = this.clock.monotonic();
      const outcome = await this.sendOnce(webhook, delivery, payload);
      const durationMs = Math.max(0, Math.round(this.clock.monotonic() - sendStarted));
      releaseSlot();
      await this.record(delivery, (current, currentWebhook, outcomeLog) => this.outcomeOps(outcome, current, currentWebhook, outcomeLog, durationMs));
    } finally {
      releaseSlot();
    }
  }

  /** One signed POST. The id stays the event's on every attempt; the timestamp and signature are new. */
  private async sendOnce(webhook: WebhookRecord, delivery: DeliveryRecord, payload: string): Promise<SendOutcome> {
    const body = Buffer.from(payload);
    const timestampSeconds = Math.floor(this.clock.now() / 1000);
    try {
      return await this.send({
        url: webhook.url,
        body,
        headers: buildDeliveryHeaders(signingSecrets(webhook, this.clock.now()), delivery.event_id, timestampSeconds, body),
        timeoutMs: this.timeoutMs,
        allowPrivate: this.allowPrivate,
        clock: this.clock,
      });
    } catch (error) {
      return { delivered: false, status: null, error: (error as Error)?.message ?? 'send failed', gone: false };
    }
  }

  /**
   * Writes what `buildOps` makes of the delivery and webhook as they are when the write commits
   * (so an outcome never brings back a webhook deleted meanwhile).
   * A refused write is tried again after a pause (doubling), until it lands or we stop; the
   * delivery meanwhile stays pending in the store, so a restart sends it again.
   */
  private async record(
    delivery: DeliveryRecord,
    buildOps: (current: DeliveryRecord | undefined, webhook: WebhookRecord | undefined, outcomeLog: DeliveryOutcomeLogRecord | undefined) => WriteOp[],
  ): Promise<void> {
    let pause = this.storeRetryMs;
    for (;;) {
      try {
        await this.store.commit((tx) => ({
          ops: buildOps(tx.get(DELIVERIES, delivery.id), tx.get(WEBHOOKS, delivery.webhook_id), tx.get(DELIVERY_OUTCOMES, delivery.webhook_id)),
          result: undefined,
        }));
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

  private outcomeOps(
    outcome: SendOutcome,
    current: DeliveryRecord | undefined,
    webhook: WebhookRecord | undefined,
    outcomeLog: DeliveryOutcomeLogRecord | undefined,
    durationMs: number,
  ): WriteOp[] {
    // Deleted (with its webhook, or dropped beyond the pending cap) while we were sending.
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

    // The owner's view of this attempt (portal: the last 50), written with the outcome itself:
    // one small record of its own, and the webhook counting it (its last_delivery changes alike).
    const logged = (status: LastDelivery['status'], nextAttemptMs: number | null = null): { webhook: WebhookRecord; ops: WriteOp[] } =>
      outcomeLogged(
        { ...webhook, last_delivery: lastDelivery(status), updated_at: at },
        {
          at,
          event_id: current.event_id,
          event: current.type,
          status,
          attempts,
          response_status: outcome.status,
          duration_ms: durationMs,
          next_attempt_at: nextAttemptMs === null ? null : isoTime(nextAttemptMs),
        },
        outcomeLog,
      );

    const decided = decideAttempt(outcome, attempts, { retryDelaysMs: this.retryDelaysMs, maxRetryAfterMs: this.maxRetryAfterMs });
    // Every delivery failing since `failingSince` (none delivered): past the switch-off's time, switched off.
    const failingSince = decided.kind === 'delivered' ? null : (webhook.failing_since ?? at);
    const switchOff = this.failingSwitchOff;
    const failingTooLong = switchOff !== null && failingSince !== null && webhook.active && nowMs - Date.parse(failingSince) >= switchOff.afterMs;
    // A webhook failing too long gets no retry: it is switched off, and the delivery has failed.
    const decision = decided.kind === 'retry' && failingTooLong ? { kind: 'failed' as const } : decided;
    const switchedOff = (written: WebhookRecord, reason: 'gone' | 'failing'): WriteOp[] => [
      // Switched off: it receives no more events, so its owner's targets change too.
      putWebhook({ ...written, active: false, disabled_reason: reason, failing_since: null }),
      targetsChangedOp(webhook.user_id, at),
      ...(reason === 'failing' && switchOff !== null ? [switchOff.entryOp(webhook, failingSince!)] : []),
    ];
    switch (decision.kind) {
      case 'delivered': {
        const { webhook: written, ops } = logged('delivered');
        return [deleteDelivery(current.id), putWebhook({ ...written, failing_since: null }), ...ops];
      }
      case 'deactivate': {
        const { webhook: written, ops } = logged('failed');
        return [deleteDelivery(current.id), ...switchedOff(written, 'gone'), ...ops];
      }
      case 'failed': {
        const { webhook: written, ops } = logged('failed');
        const kept = failingTooLong ? switchedOff(written, 'failing') : [putWebhook({ ...written, failing_since: failingSince })];
        return [deleteDelivery(current.id), ...kept, ...ops];
      }
      case 'retry': {
        const retry: DeliveryRecord = {
          ...current,
          status: 'retrying',
          attempts,
          next_attempt_at: nowMs + decision.delayMs,
          response_status: outcome.status,
          last_error: failureReason(outcome),
          updated_at: at,
        };
        const { webhook: written, ops } = logged('retrying', retry.next_attempt_at);
        return [{ op: 'put', collection: DELIVERIES, id: retry.id, data: retry }, putWebhook({ ...written, failing_since: failingSince }), ...ops];
      }
    }
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

/** The body to send: the event record's, or the delivery's own for one written before events were stored apart. */
function payloadOf(store: Store, delivery: DeliveryRecord): string | undefined {
  return delivery.payload ?? store.get(EVENTS, delivery.event_id)?.payload;
}

function deleteDelivery(id: string): WriteOp {
  return { op: 'del', collection: DELIVERIES, id };
}

function putWebhook(webhook: WebhookRecord): WriteOp {
  return { op: 'put', collection: WEBHOOKS, id: webhook.id, data: webhook };
}
