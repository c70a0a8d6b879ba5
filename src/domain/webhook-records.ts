// The stored shapes of webhooks and their deliveries, and the views shown to API callers
// and to the operator. The secret lives only in the stored record: no view carries it.

import type { EventType } from './events.ts';

export type DeliveryStatus = 'pending' | 'retrying' | 'delivered' | 'failed';

/** The outcome of a webhook's most recent attempt, shown on the webhook. */
export interface LastDelivery {
  readonly event_id: string;
  readonly type: EventType;
  readonly status: 'delivered' | 'retrying' | 'failed';
  readonly attempts: number;
  /** The receiver's HTTP status, or null when none arrived (timeout, refused connection). */
  readonly response_status: number | null;
  readonly at: string;
}

export interface WebhookRecord {
  readonly id: string;
  readonly user_id: string;
  readonly url: string;
  readonly events: readonly EventType[];
  readonly description: string;
  readonly active: boolean;
  /** `whsec_…`; kept so deliveries can be signed. The data dir's files are mode 0600. */
  readonly secret: string;
  readonly created_at: string;
  readonly updated_at: string;
  readonly last_delivery: LastDelivery | null;
  /**
   * How many attempt outcomes have been written for it as records of their own
   * (webhooks/outcome-log.ts): names the next one and the 50 newest. Absent before the first.
   */
  readonly outcomes_written?: number;
  /**
   * Why `active` is false: `paused` by its owner (events meanwhile are `skipped` outcomes),
   * `gone` (its receiver answered 410), `failing` (every delivery failed for 5 days). Absent or
   * null while active; absent on one switched off by a 410 before the reason was kept.
   */
  readonly disabled_reason?: DisabledReason | null;
  /** During a rotation's grace: the secret before the newest, still signing deliveries until `previous_secret_expires_at` (ms). */
  readonly previous_secret?: string | null;
  readonly previous_secret_expires_at?: number | null;
  /** When its deliveries began failing without one delivered since (ISO); null or absent otherwise. */
  readonly failing_since?: string | null;
}

export type DisabledReason = 'paused' | 'gone' | 'failing';

/** The secrets a delivery sent at `nowMs` is signed with: the newest first, then the previous one during its grace. */
export function signingSecrets(webhook: WebhookRecord, nowMs: number): string[] {
  const previous = webhook.previous_secret;
  const until = webhook.previous_secret_expires_at ?? 0;
  return previous !== undefined && previous !== null && nowMs < until ? [webhook.secret, previous] : [webhook.secret];
}

/** Whether the owner paused it: such a webhook gets a `skipped` outcome for each event instead of a delivery. */
export function isPaused(webhook: WebhookRecord): boolean {
  return !webhook.active && webhook.disabled_reason === 'paused';
}

/**
 * One per user who has registered a webhook (its id is the user's). Rewritten by every write
 * that changes which of the user's webhooks receive events (one registered, removed or switched
 * off), so a write that queues events depends on this one record rather than on the webhooks
 * themselves, whose delivery outcomes (`last_delivery`) are rewritten after every send. With
 * many instances, a delivery finishing on one instance then no longer makes another instance's
 * listing writes be decided again.
 */
export interface WebhookTargetsRecord {
  readonly id: string;
  readonly changed_at: string;
  /**
   * The last event queued for the user's webhooks. Every write queuing one rewrites this record,
   * so two such writes are never decided on the same pending counts (see outbox.ts).
   */
  readonly last_event_id?: string;
}

/**
 * One event, stored once however many webhooks it goes to: its deliveries refer to it by id
 * (as a message is kept apart from its delivery attempts). Deleted once no delivery refers to it.
 */
export interface EventRecord {
  /** `evt_…`, also the `webhook-id` header of every delivery of it. */
  readonly id: string;
  /** Whose resources it tells of (erasure removes the user's events). */
  readonly owner_id: string;
  readonly type: EventType;
  /** The exact JSON body sent on every attempt to every webhook: {id, type, created_at, data}. */
  readonly payload: string;
  readonly created_at: string;
}

/**
 * One event of a user's event log (GET /v1/events and its stream), kept EVENT_RETENTION_DAYS
 * whether or not a webhook receives it; same id, type and time as the webhook event.
 */
export interface EventLogRecord {
  readonly id: string;
  readonly owner_id: string;
  readonly type: EventType;
  readonly created_at: string;
  /** Order among all logged events, increasing with each one written (a user's events are read in this order). */
  readonly seq: number;
  /**
   * The event's JSON body, the bytes its webhooks get. Absent while the webhook event record
   * (EVENTS) of the same id holds them: the payload is stored once, and moves here in the write
   * that deletes that record (webhooks/outbox.ts).
   */
  readonly payload?: string;
}

/**
 * One event on its way to one webhook. It exists while the event is pending or retrying;
 * the write that records a final outcome (delivered or failed) on the webhook deletes it.
 * Its body is the event record's (`event_id`); deliveries written before events were stored
 * apart carry it themselves, in `payload`, and are sent with it.
 */
export interface DeliveryRecord {
  readonly id: string;
  readonly webhook_id: string;
  readonly event_id: string;
  readonly type: EventType;
  /** Only on deliveries written before event records existed: the body itself. */
  readonly payload?: string;
  readonly status: DeliveryStatus;
  readonly attempts: number;
  /** Wall-clock milliseconds of the next attempt. */
  readonly next_attempt_at: number;
  readonly response_status: number | null;
  /** Why the last attempt failed ('timeout', 'ECONNREFUSED', 'HTTP 500'); never the receiver's body. */
  readonly last_error: string | null;
  readonly created_at: string;
  readonly updated_at: string;
  /** With many instances: the one sending attempt number `attempt`, until `until` (ms); see attempt-claim.ts. */
  readonly claim?: { readonly by: string; readonly attempt: number; readonly until: number };
}

export interface WebhookView {
  id: string;
  url: string;
  events: EventType[];
  description: string;
  active: boolean;
  /** The same as `active`: whether it is sent events. */
  enabled: boolean;
  disabled_reason: DisabledReason | null;
  created_at: string;
  last_delivery: LastDelivery | null;
}

/** What the owner sees: the contract's webhook shape, never the secret. */
export function webhookView(record: WebhookRecord): WebhookView {
  return {
    id: record.id,
    url: record.url,
    events: [...record.events],
    description: record.description,
    active: record.active,
    enabled: record.active,
    disabled_reason: record.active ? null : (record.disabled_reason ?? 'gone'),
    created_at: record.created_at,
    last_delivery: record.last_delivery,
  };
}

/** What the operator sees: the owner's view plus whose webhook it is. */
export function operatorWebhookView(record: WebhookRecord): WebhookView & { user_id: string } {
  return { ...webhookView(record), user_id: record.user_id };
}

export function isPendingDelivery(record: DeliveryRecord): boolean {
  return record.status === 'pending' || record.status === 'retrying';
}

/** One attempt's outcome as its owner sees it in the portal (never a body). */
export interface DeliveryOutcome {
  /** When the attempt's outcome was known. */
  readonly at: string;
  readonly event_id: string;
  readonly event: EventType;
  /** `retrying`: this attempt failed and another is scheduled; `skipped`: the webhook was paused, nothing was sent. */
  readonly status: 'delivered' | 'retrying' | 'failed' | 'skipped';
  /** Which attempt this was (1 for the first; 0 when skipped). */
  readonly attempts: number;
  /** The receiver's HTTP status, or null when none arrived (timeout, refused connection). */
  readonly response_status: number | null;
  /** From dialling to the end of the receiver's answer (or the failure), in milliseconds. */
  readonly duration_ms: number;
  /** When `retrying`: when the next attempt is due; else null (absent on outcomes written before it was kept). */
  readonly next_attempt_at?: string | null;
}

/** An outcome as answers show it: `next_attempt_at` always present. */
export function deliveryOutcomeView(outcome: DeliveryOutcome): DeliveryOutcome {
  return { ...outcome, next_attempt_at: outcome.next_attempt_at ?? null };
}

/**
 * The list form of a webhook's outcomes, as data directories written before outcome entries
 * hold it: one record with the whole list, rewritten by every attempt. Still read (after the
 * entries), and deleted once 50 entries are kept.
 */
export interface DeliveryOutcomeLogRecord {
  /** The webhook's id. */
  readonly id: string;
  readonly user_id: string;
  /** Newest first, at most MAX_OUTCOMES_PER_WEBHOOK. */
  readonly outcomes: readonly DeliveryOutcome[];
}

/**
 * One attempt's outcome as its own record (webhooks/outcome-log.ts). Its fields are kept as a
 * list, in STORED_OUTCOME_FIELDS order, not under their names: the record is written once per
 * attempt and kept 50 times per webhook, and the names would be a third of it.
 */
export interface DeliveryOutcomeEntryRecord {
  /** `<webhook id>.<n>`: the webhook's n-th outcome written as an entry, counting from 0. */
  readonly id: string;
  readonly o: readonly [
    at: string,
    event_id: string,
    event: EventType,
    status: DeliveryOutcome['status'],
    attempts: number,
    response_status: number | null,
    duration_ms: number,
    next_attempt_at: string | null,
  ];
}
