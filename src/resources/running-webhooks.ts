// The rules of running a webhook once it is registered (contract section 23's "webhooks people
// run", and the portal's test ping of section 20), with no request in sight: a change (url,
// events, description; `enabled` pauses and resumes), a new secret with a grace for the old one,
// a recovery of every event not delivered since a time, and a `ping` sent now. The webhook-tools
// module serves them under /v1/webhooks, the portal under /portal/v1/webhooks; the core's rules
// (registration, removal, redelivery) are resources/webhooks.ts. Another user's webhook is
// always a missing one. Each rule is `decideX(tx, actor, input, now)`, as resources/webhooks.ts's.

import { isoTime } from '../clock.ts';
import type { UserActor } from '../domain/actor.ts';
import { conflict } from '../domain/errors.ts';
import type { EventType } from '../domain/events.ts';
import { DELIVERIES, EVENTS, WEBHOOKS } from '../domain/records.ts';
import type { DeliveryRecord, WebhookRecord } from '../domain/webhook-records.ts';
import { BodyChecker } from '../http/validation.ts';
import type { WriteOp } from '../store/format.ts';
import type { Decision, Transaction } from '../store/transaction.ts';
import { targetsChangedOp, type WebhookOutbox } from '../webhooks/outbox.ts';
import { loggedOutcomes } from '../webhooks/outcome-log.ts';
import { checkSending } from '../webhooks/redelivery.ts';
import { generateWebhookSecret } from '../webhooks/signing.ts';
import { MAX_DESCRIPTION_LENGTH, ownWebhook, READ_ONLY_FIELDS, readWebhookEvents, readWebhookUrl } from './webhooks.ts';

const PATCH_FIELDS = ['url', 'events', 'description', 'enabled'] as const;
export const MAX_GRACE_SECONDS = 7 * 24 * 60 * 60;
export const DEFAULT_GRACE_SECONDS = 24 * 60 * 60;
const DAY_MS = 24 * 60 * 60 * 1000;
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

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
  const url = readWebhookUrl(checker, allowPrivate);
  if (url !== undefined) patch.url = url;
  if (checker.has('events')) {
    const events = readWebhookEvents(checker);
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
export function decideWebhookUpdate(tx: Transaction, actor: UserActor, input: { webhookId: string; patch: WebhookPatch }, nowMs: number): Decision<{ webhook: WebhookRecord; changes: Record<string, unknown> }> {
  const { webhookId, patch } = input;
  const userId = actor.user.id;
  const before = ownWebhook(tx, webhookId, userId);
  const at = isoTime(nowMs);
  let webhook: WebhookRecord = { ...before, ...(patch.url === undefined ? {} : { url: patch.url }), ...(patch.events === undefined ? {} : { events: patch.events }), ...(patch.description === undefined ? {} : { description: patch.description }), updated_at: at };
  if (patch.enabled === false && before.active) webhook = { ...webhook, active: false, disabled_reason: 'paused' };
  if (patch.enabled === true && !before.active) webhook = { ...webhook, active: true, disabled_reason: null, failing_since: null };
  const ops: WriteOp[] = [{ op: 'put', collection: WEBHOOKS, id: webhook.id, data: webhook }, targetsChangedOp(userId, at)];
  return { ops, result: { webhook, changes: { ...patch } } };
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
export function decideSecretRotation(tx: Transaction, actor: UserActor, input: { webhookId: string; graceSeconds: number }, nowMs: number): Decision<{ webhook: WebhookRecord; previousExpiresAt: string }> {
  const { webhookId, graceSeconds } = input;
  const before = ownWebhook(tx, webhookId, actor.user.id);
  const expiresMs = nowMs + graceSeconds * 1000;
  const webhook: WebhookRecord = {
    ...before,
    secret: generateWebhookSecret(),
    previous_secret: graceSeconds > 0 ? before.secret : null,
    previous_secret_expires_at: graceSeconds > 0 ? expiresMs : null,
    updated_at: isoTime(nowMs),
  };
  return { ops: [{ op: 'put', collection: WEBHOOKS, id: webhook.id, data: webhook }], result: { webhook, previousExpiresAt: isoTime(expiresMs) } };
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
export function decideRecovery(tx: Transaction, actor: UserActor, input: { webhookId: string; sinceMs: number; outbox: WebhookOutbox }, _nowMs: number): Decision<{ webhook: WebhookRecord; eventIds: string[] }> {
  const { webhookId, sinceMs, outbox } = input;
  const webhook = ownWebhook(tx, webhookId, actor.user.id);
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
  return { ops, result: { webhook, eventIds } };
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
