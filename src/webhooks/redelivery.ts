// Sending one of a webhook's recent events again on its owner's request (the portal and
// /v1, as Stripe and GitHub offer): a new delivery of the same event record — the same
// `webhook-id` and body, a fresh timestamp and signature when the dispatcher sends it — for
// an event among the webhook's last 50 outcomes. At most 60 per user per hour, on every
// instance (the limiter's windows are shared where Redis holds them).

import { conflict, HttpError, notFound } from '../domain/errors.ts';
import { deliveryOutcomeView, type DeliveryOutcome, type WebhookRecord } from '../domain/webhook-records.ts';
import { retryAfterSeconds } from '../http/rate-limit-headers.ts';
import type { RateLimiter } from '../limits/rate-limiter.ts';
import type { WriteOp } from '../store/format.ts';
import type { DecisionReader } from '../store/store.ts';
import type { RecordReader } from '../store/collections.ts';
import type { WebhookOutbox } from './outbox.ts';
import { loggedOutcomes } from './outcome-log.ts';
import { EVENTS } from '../domain/records.ts';

export const REDELIVERY_LIMIT = 60;
export const REDELIVERY_WINDOW_MS = 60 * 60 * 1000;

/** The 202 answer's body: what was queued. */
export interface QueuedRedelivery {
  webhook_id: string;
  event_id: string;
  type: string;
  status: 'pending';
}

/** The webhook's last outcomes, newest first, as its owner sees them. */
export function deliveryOutcomes(reader: RecordReader, webhookId: string): DeliveryOutcome[] {
  return loggedOutcomes(reader, webhookId).map(deliveryOutcomeView);
}

/** Counts one redelivery for the user; 429 with Retry-After past 60 in the last hour. */
export async function takeRedeliveryTurn(limiter: RateLimiter, userId: string): Promise<void> {
  const decision = await limiter.hit(userId, REDELIVERY_LIMIT);
  if (decision.allowed) return;
  const seconds = retryAfterSeconds(decision);
  throw new HttpError(429, `You have asked for ${REDELIVERY_LIMIT} redeliveries in the last hour, the most allowed. Try again in ${seconds} seconds.`, {
    headers: { 'Retry-After': String(seconds) },
  });
}

/**
 * Refuses a redelivery of `eventId` to the owner's `webhook` that cannot be made: 404 unless the
 * event is among the webhook's outcomes, 409 when the webhook is switched off or paused, or when
 * the event's body is no longer kept. Checked before a redelivery turn is taken (a refused one
 * costs none) and again when the write is decided.
 */
export function checkRedelivery(reader: RecordReader, webhook: WebhookRecord, eventId: string): void {
  const known = loggedOutcomes(reader, webhook.id).some((outcome) => outcome.event_id === eventId);
  if (!known) throw notFound('Delivery');
  checkSending(webhook);
  if (reader.get(EVENTS, eventId) === undefined) throw conflict('This event is no longer kept, so it cannot be sent again.');
}

/** 409 unless the webhook is being sent events. */
export function checkSending(webhook: WebhookRecord): void {
  if (webhook.active) return;
  if (webhook.disabled_reason === 'paused') throw conflict('This webhook is paused; resume it (PATCH with enabled: true) to send it events.');
  throw conflict('This webhook is switched off; resume it (PATCH with enabled: true) to send it events again.');
}

/**
 * The ops sending `eventId` again to the owner's `webhook` now: a delivery of it still waiting
 * (a retry) is made due now, replacing the pending retry; otherwise a new delivery of the same
 * event record. Refused as checkRedelivery says.
 */
export function redeliveryOps(tx: DecisionReader, outbox: WebhookOutbox, webhook: WebhookRecord, eventId: string): { ops: WriteOp[]; queued: QueuedRedelivery } {
  checkRedelivery(tx, webhook, eventId);
  const made = outbox.sendNowOps(tx, webhook, eventId);
  if (made === null) throw conflict('This event is no longer kept, so it cannot be sent again.');
  return { ops: made.ops, queued: { webhook_id: webhook.id, event_id: eventId, type: made.event.type, status: 'pending' } };
}
