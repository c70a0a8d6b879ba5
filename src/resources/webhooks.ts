// The rules of a webhook, with no request in sight: reading a registration from a body, and
// deciding a registration (at most 20 per user, its `ping` queued in the same write), a removal
// (its pending deliveries and outcomes with it) and a redelivery. /v1/webhooks and the portal's
// webhooks call the same functions, each as `decideX(tx, actor, input, now)` (src/domain/actor.ts),
// returning the store's Decision. Another user's webhook is always a missing one. Changing,
// pausing, rotating and recovering a webhook are resources/running-webhooks.ts.

import { isoTime } from '../clock.ts';
import type { UserActor } from '../domain/actor.ts';
import { conflict, notFound } from '../domain/errors.ts';
import { EVENT_TYPES, type EventType } from '../domain/events.ts';
import { newId } from '../domain/ids.ts';
import { DELIVERIES, WEBHOOK_TARGETS, WEBHOOKS } from '../domain/records.ts';
import { newestFirst } from '../domain/order.ts';
import { webhookView, type WebhookRecord } from '../domain/webhook-records.ts';
import { BodyChecker } from '../http/validation.ts';
import type { RateLimiter } from '../limits/rate-limiter.ts';
import type { RecordReader } from '../store/collections.ts';
import type { WriteOp } from '../store/format.ts';
import type { Decision, Transaction } from '../store/transaction.ts';
import { validateWebhookUrl } from '../webhooks/address-guard.ts';
import { targetsChangedOp, type WebhookOutbox } from '../webhooks/outbox.ts';
import { outcomeRemovalOps } from '../webhooks/outcome-log.ts';
import { checkRedelivery, checkSending, redeliveryOps, takeRedeliveryTurn, type QueuedRedelivery } from '../webhooks/redelivery.ts';
import { generateWebhookSecret } from '../webhooks/signing.ts';

export const MAX_WEBHOOKS_PER_USER = 20;
const MAX_URL_LENGTH = 2048;
const WRITABLE_FIELDS = ['url', 'events', 'description'] as const;
/** Fields a caller may not send (400 naming them), in a registration or a change alike. */
export const READ_ONLY_FIELDS = ['id', 'secret', 'active', 'created_at', 'last_delivery', 'user_id', 'disabled_reason'] as const;
export const MAX_DESCRIPTION_LENGTH = 500;

/** A webhook to register, as checked from a request body (the same rules under /v1 and the portal). */
export interface WebhookRegistration {
  url: string;
  events: EventType[];
  description: string;
}

/** The user's webhooks as their owner sees them (no secret), newest first: /v1 and the portal list the same. */
export function ownWebhookViews(outbox: WebhookOutbox, userId: string): ReturnType<typeof webhookView>[] {
  return outbox.webhooksOf(userId).sort(newestFirst).map(webhookView);
}

/** Reads and checks a registration body; throws one 400 listing every problem. */
export function readWebhookRegistration(body: Record<string, unknown>, allowPrivate: boolean): WebhookRegistration {
  const checker = new BodyChecker(body, WRITABLE_FIELDS, READ_ONLY_FIELDS);
  checker.requireFields(['url']);
  const url = readWebhookUrl(checker, allowPrivate);
  const events = readWebhookEvents(checker);
  const description = checker.string('description', 0, MAX_DESCRIPTION_LENGTH) ?? '';
  checker.finish();
  return { url: url!, events: events!, description };
}

/**
 * Registering `fields` for `userId` (the webhook, its owner's targets, its ping), decided on the
 * user's targets record, which every registration and removal rewrites: two registrations at
 * once are decided one after the other, so the cap holds.
 */
export function decideWebhookRegistration(tx: Transaction, actor: UserActor, input: { fields: WebhookRegistration; outbox: WebhookOutbox }, nowMs: number): Decision<WebhookRecord> {
  const userId = actor.user.id;
  const { fields, outbox } = input;
  tx.get(WEBHOOK_TARGETS, userId);
  if (outbox.webhooksOf(userId).length >= MAX_WEBHOOKS_PER_USER) {
    throw conflict(`You already have ${MAX_WEBHOOKS_PER_USER} webhooks, the most allowed. Delete one before registering another.`);
  }
  const createdAt = isoTime(nowMs);
  const webhook: WebhookRecord = {
    id: newId('wh'),
    user_id: userId,
    url: fields.url,
    events: fields.events,
    description: fields.description,
    active: true,
    secret: generateWebhookSecret(),
    created_at: createdAt,
    updated_at: createdAt,
    last_delivery: null,
  };
  const ops: WriteOp[] = [{ op: 'put', collection: WEBHOOKS, id: webhook.id, data: webhook }, targetsChangedOp(userId, createdAt), ...outbox.pingOps(tx, webhook)];
  return { ops, result: webhook };
}

/** Removing the acting user's webhook `webhookId` with its pending deliveries and outcome log; 404 for anyone else's. */
export function decideWebhookRemoval(tx: Transaction, actor: UserActor, input: { webhookId: string }, nowMs: number): Decision<WebhookRecord> {
  const userId = actor.user.id;
  const webhook = ownWebhook(tx, input.webhookId, userId);
  const ops: WriteOp[] = [{ op: 'del', collection: WEBHOOKS, id: webhook.id }, targetsChangedOp(userId, isoTime(nowMs))];
  ops.push(...outcomeRemovalOps(tx, webhook.id));
  for (const delivery of tx.values(DELIVERIES)) {
    if (delivery.webhook_id === webhook.id) ops.push({ op: 'del', collection: DELIVERIES, id: delivery.id });
  }
  return { ops, result: webhook };
}

/** Sending event `eventId` of the acting user's webhook again, decided on the webhook as it is in the write. */
export function decideRedelivery(tx: Transaction, actor: UserActor, input: { webhookId: string; eventId: string; outbox: WebhookOutbox }, _nowMs: number): Decision<QueuedRedelivery> {
  const { webhookId, eventId, outbox } = input;
  const { ops, queued } = redeliveryOps(tx, outbox, ownWebhook(tx, webhookId, actor.user.id), eventId);
  return { ops, result: queued };
}

/** The user's own webhook; anyone else's is answered exactly like a missing one: its existence is not theirs to learn. */
export function ownWebhook(reader: RecordReader, webhookId: string, userId: string): WebhookRecord {
  const webhook = reader.get(WEBHOOKS, webhookId);
  if (webhook === undefined || webhook.user_id !== userId) throw notFound('Webhook');
  return webhook;
}

/**
 * Takes one of the user's redelivery turns (429 past 60 an hour) once the webhook is found to be
 * theirs and the redelivery of `eventId` possible (when given; a recovery passes none): asking
 * about anyone else's webhook, or an event that cannot be sent, costs no turn.
 */
export async function takeRedeliveryRequest(reader: RecordReader, limiter: RateLimiter, webhookId: string, userId: string, eventId?: string): Promise<void> {
  const webhook = ownWebhook(reader, webhookId, userId);
  if (eventId === undefined) checkSending(webhook);
  else checkRedelivery(reader, webhook, eventId);
  await takeRedeliveryTurn(limiter, userId);
}

/** The `url` field checked (the address guard included) and stored as parsed; undefined when absent or refused. */
export function readWebhookUrl(checker: BodyChecker, allowPrivate: boolean): string | undefined {
  const raw = checker.string('url', 1, MAX_URL_LENGTH);
  if (raw === undefined) return undefined;
  const checked = validateWebhookUrl(raw, allowPrivate);
  if (!checked.ok) return checker.fail('url', `is refused: ${checked.reason}`);
  // Stored as parsed, so what the owner sees is what will be dialled.
  const normalised = checked.url.href;
  if (normalised.length > MAX_URL_LENGTH) return checker.fail('url', `must be at most ${MAX_URL_LENGTH} characters`);
  return normalised;
}

/** The `events` field checked (every kind when absent); undefined when refused. */
export function readWebhookEvents(checker: BodyChecker): EventType[] | undefined {
  if (!checker.has('events')) return [...EVENT_TYPES];
  const value = checker.value('events');
  const allowed = EVENT_TYPES.join(', ');
  if (!Array.isArray(value) || value.length === 0) {
    return checker.fail('events', `must be a non-empty array of event kinds (${allowed})`);
  }
  const events: EventType[] = [];
  for (const item of value) {
    if (typeof item !== 'string' || !(EVENT_TYPES as readonly string[]).includes(item)) {
      return checker.fail('events', `holds ${JSON.stringify(item)}, which is not an event kind (allowed: ${allowed})`);
    }
    if (events.includes(item as EventType)) return checker.fail('events', `lists "${item}" more than once`);
    events.push(item as EventType);
  }
  return events;
}
