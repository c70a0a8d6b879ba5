// The rules of a webhook, with no request in sight: reading a registration from a body, and
// deciding a registration (at most 20 per user, its `ping` queued in the same write), a removal
// (its pending deliveries and outcomes with it), a test ping and a redelivery. /v1/webhooks and
// the portal's webhooks call the same functions, each as `decideX(tx, actor, input, now)`
// (src/domain/actor.ts), returning the store's Decision. Another user's webhook is always a
// missing one.

import { isoTime } from '../clock.ts';
import type { UserActor } from '../domain/actor.ts';
import { conflict, notFound } from '../domain/errors.ts';
import { EVENT_TYPES, type EventType } from '../domain/events.ts';
import { newId } from '../domain/ids.ts';
import { DELIVERIES, EVENTS, WEBHOOK_TARGETS, WEBHOOKS } from '../domain/records.ts';
import { newestFirst } from '../domain/order.ts';
import { webhookView, type DeliveryRecord, type WebhookRecord } from '../domain/webhook-records.ts';
import { BodyChecker } from '../http/validation.ts';
import type { RateLimiter } from '../limits/rate-limiter.ts';
import type { RecordReader } from '../store/collections.ts';
import type { WriteOp } from '../store/format.ts';
import type { Decision, Transaction } from '../store/transaction.ts';
import { validateWebhookUrl } from '../webhooks/address-guard.ts';
import { targetsChangedOp, type WebhookOutbox } from '../webhooks/outbox.ts';
import { loggedOutcomes, outcomeRemovalOps } from '../webhooks/outcome-log.ts';
import { checkRedelivery, checkSending, redeliveryOps, takeRedeliveryTurn, type QueuedRedelivery } from '../webhooks/redelivery.ts';
import { generateWebhookSecret } from '../webhooks/signing.ts';

export const MAX_WEBHOOKS_PER_USER = 20;
const MAX_URL_LENGTH = 2048;
const MAX_DESCRIPTION_LENGTH = 500;
const WRITABLE_FIELDS = ['url', 'events', 'description'] as const;
const READ_ONLY_FIELDS = ['id', 'secret', 'active', 'created_at', 'last_delivery', 'user_id', 'disabled_reason'] as const;
const PATCH_FIELDS = ['url', 'events', 'description', 'enabled'] as const;
export const MAX_GRACE_SECONDS = 7 * 24 * 60 * 60;
export const DEFAULT_GRACE_SECONDS = 24 * 60 * 60;
const DAY_MS = 24 * 60 * 60 * 1000;
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

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
  const url = readUrl(checker, allowPrivate);
  const events = readEvents(checker);
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

/** A test ping queued: the webhook, and the id of the event (null when none was queued). */
export interface TestPing {
  webhook: WebhookRecord;
  eventId: string | null;
}

/** A `ping` due now for the acting user's webhook (409 when its receiver switched it off with 410). */
export function decideWebhookTestPing(tx: Transaction, actor: UserActor, input: { webhookId: string; outbox: WebhookOutbox }, _nowMs: number): Decision<TestPing> {
  const { webhookId, outbox } = input;
  const webhook = ownWebhook(tx, webhookId, actor.user.id);
  if (!webhook.active) throw conflict('This webhook is switched off (its receiver answered 410 Gone); register it again to receive events.');
  const ops = outbox.testPingOps(tx, webhook);
  const queued = ops.find((op) => op.op === 'put' && op.collection === DELIVERIES);
  const eventId = queued?.op === 'put' ? (queued.data as DeliveryRecord).event_id : null;
  return { ops, result: { webhook, eventId } };
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

/** A change to a webhook, as checked from a PATCH body: only the fields given. */
export interface WebhookPatch {
  url?: string;
  events?: EventType[];
  description?: string;
  enabled?: boolean;
}

/** Reads and checks a PATCH body (the registration's rules, the URL guard included); one 400 naming every bad or unknown field. */
export function readWebhookPatch(body: Record<string, unknown>, allowPrivate: boolean): WebhookPatch {
  const checker = new BodyChecker(body, PATCH_FIELDS, READ_ONLY_FIELDS);
  const patch: WebhookPatch = {};
  const url = readUrl(checker, allowPrivate);
  if (url !== undefined) patch.url = url;
  if (checker.has('events')) {
    const events = readEvents(checker);
    if (events !== undefined) patch.events = events;
  }
  const description = checker.string('description', 0, MAX_DESCRIPTION_LENGTH);
  if (description !== undefined) patch.description = description;
  if (checker.has('enabled')) {
    const enabled = checker.value('enabled');
    if (typeof enabled === 'boolean') patch.enabled = enabled;
    else checker.fail('enabled', 'must be true or false');
  }
  checker.finish();
  return patch;
}

/**
 * The user's webhook with `patch` applied (404 for anyone else's). `enabled: false` pauses it;
 * `enabled: true` resumes it, also one switched off by a 410 or for failing, keeping its id and
 * secret. Rewrites the owner's targets record: which webhooks receive events may change.
 */
export function decideWebhookUpdate(tx: Transaction, userId: string, webhookId: string, patch: WebhookPatch, nowMs: number): { ops: WriteOp[]; webhook: WebhookRecord; changes: Record<string, unknown> } {
  const before = ownWebhook(tx, webhookId, userId);
  const at = isoTime(nowMs);
  let webhook: WebhookRecord = { ...before, ...(patch.url === undefined ? {} : { url: patch.url }), ...(patch.events === undefined ? {} : { events: patch.events }), ...(patch.description === undefined ? {} : { description: patch.description }), updated_at: at };
  if (patch.enabled === false && before.active) webhook = { ...webhook, active: false, disabled_reason: 'paused' };
  if (patch.enabled === true && !before.active) webhook = { ...webhook, active: true, disabled_reason: null, failing_since: null };
  const ops: WriteOp[] = [{ op: 'put', collection: WEBHOOKS, id: webhook.id, data: webhook }, targetsChangedOp(userId, at)];
  return { ops, webhook, changes: { ...patch } };
}

/** Reads `{grace_seconds}` (0 to 7 days, a day when left out). */
export function readSecretRotation(body: Record<string, unknown>): { graceSeconds: number } {
  const checker = new BodyChecker(body, ['grace_seconds']);
  const graceSeconds = checker.integer('grace_seconds', 0, MAX_GRACE_SECONDS) ?? DEFAULT_GRACE_SECONDS;
  checker.finish();
  return { graceSeconds };
}

/**
 * A new secret for the user's webhook. The one it replaces keeps signing deliveries (second)
 * for `graceSeconds`; an older one still in its grace ends at once.
 */
export function decideSecretRotation(tx: Transaction, userId: string, webhookId: string, graceSeconds: number, nowMs: number): { ops: WriteOp[]; webhook: WebhookRecord; previousExpiresAt: string } {
  const before = ownWebhook(tx, webhookId, userId);
  const expiresMs = nowMs + graceSeconds * 1000;
  const webhook: WebhookRecord = {
    ...before,
    secret: generateWebhookSecret(),
    previous_secret: graceSeconds > 0 ? before.secret : null,
    previous_secret_expires_at: graceSeconds > 0 ? expiresMs : null,
    updated_at: isoTime(nowMs),
  };
  return { ops: [{ op: 'put', collection: WEBHOOKS, id: webhook.id, data: webhook }], webhook, previousExpiresAt: isoTime(expiresMs) };
}

/** Reads `{since}`: an ISO time no older than the kept events (`retentionDays`). */
export function readRecovery(body: Record<string, unknown>, nowMs: number, retentionDays: number): { sinceMs: number } {
  const checker = new BodyChecker(body, ['since']);
  checker.requireFields(['since']);
  let sinceMs = 0;
  const since = checker.string('since', 1, 64);
  if (since !== undefined) {
    const parsed = ISO_TIME.test(since) ? Date.parse(since) : Number.NaN;
    if (Number.isNaN(parsed)) checker.fail('since', 'must be an ISO 8601 time such as 2026-01-31T12:00:00Z');
    else if (retentionDays > 0 && parsed < nowMs - retentionDays * DAY_MS) checker.fail('since', `must be within the kept events: the last ${retentionDays} days`);
    else sinceMs = parsed;
  }
  checker.finish();
  return { sinceMs };
}

/**
 * Sending again now every event of the webhook's kept outcomes created at or after `sinceMs`
 * whose latest outcome is not `delivered` (failed, retrying, skipped), oldest first; each with
 * its own `webhook-id`. A retrying one is made due now (replacing its retry). 409 unless the
 * webhook is being sent events.
 */
export function decideRecovery(tx: Transaction, userId: string, webhookId: string, sinceMs: number, outbox: WebhookOutbox): { ops: WriteOp[]; webhook: WebhookRecord; eventIds: string[] } {
  const webhook = ownWebhook(tx, webhookId, userId);
  checkSending(webhook);
  const outcomes = loggedOutcomes(tx, webhook.id);
  // Newest first: the first outcome met of each event is its latest; the last met, its first.
  const latest = new Map<string, { status: string; first: number }>();
  outcomes.forEach((outcome, position) => {
    const seen = latest.get(outcome.event_id);
    if (seen === undefined) latest.set(outcome.event_id, { status: outcome.status, first: position });
    else seen.first = position;
  });
  const chosen: { id: string; createdMs: number; first: number }[] = [];
  for (const [eventId, { status, first }] of latest) {
    if (status === 'delivered') continue;
    const event = tx.get(EVENTS, eventId);
    if (event === undefined) continue;
    const createdMs = Date.parse(event.created_at);
    if (createdMs >= sinceMs) chosen.push({ id: eventId, createdMs, first });
  }
  // Oldest first; events of the same millisecond in the order their first outcomes were written.
  chosen.sort((a, b) => a.createdMs - b.createdMs || b.first - a.first);
  const ops: WriteOp[] = [];
  const eventIds: string[] = [];
  for (const { id } of chosen) {
    const made = outbox.sendNowOps(tx, webhook, id);
    if (made === null) continue;
    ops.push(...made.ops);
    eventIds.push(id);
  }
  return { ops, webhook, eventIds };
}

function readUrl(checker: BodyChecker, allowPrivate: boolean): string | undefined {
  const raw = checker.string('url', 1, MAX_URL_LENGTH);
  if (raw === undefined) return undefined;
  const checked = validateWebhookUrl(raw, allowPrivate);
  if (!checked.ok) return checker.fail('url', `is refused: ${checked.reason}`);
  // Stored as parsed, so what the owner sees is what will be dialled.
  const normalised = checked.url.href;
  if (normalised.length > MAX_URL_LENGTH) return checker.fail('url', `must be at most ${MAX_URL_LENGTH} characters`);
  return normalised;
}

function readEvents(checker: BodyChecker): EventType[] | undefined {
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
