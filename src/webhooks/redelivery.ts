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
 * The ops queuing `eventId` again for the owner's `webhook`: 404 unless the event is among the
 * webhook's outcomes, 409 while a delivery of it is still under way, when the webhook is
 * switched off, or when the event's body is no longer kept.
 */
export function redeliveryOps(tx: DecisionReader, outbox: WebhookOutbox, webhook: WebhookRecord, eventId: string): { ops: WriteOp[]; queued: QueuedRedelivery } {
  const known = loggedOutcomes(tx, webhook.id).some((outcome) => outcome.event_id === eventId);
  if (!known) throw notFound('Delivery');
  if (!webhook.active) throw conflict('This webhook is switched off (its receiver answered 410 Gone); register it again to receive events.');
  if (outbox.isUnderWay(tx, webhook.id, eventId)) throw conflict('This event is still being delivered to this webhook; wait for its outcome before sending it again.');
  const made = outbox.redeliveryOps(tx, webhook, eventId);
  if (made === null) throw conflict('This event is no longer kept, so it cannot be sent again.');
  return { ops: made.ops, queued: { webhook_id: webhook.id, event_id: eventId, type: made.event.type, status: 'pending' } };
}
