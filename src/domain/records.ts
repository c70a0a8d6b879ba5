// The shapes of the records the store keeps, one collection each. Records are immutable:
// a change writes a new object, so anything holding an old one (a cache, a snapshot) is safe.
// Each collection's name carries its record type, so reading one needs no cast.

import { collectionName } from '../store/collections.ts';
import type { StoredRecord } from '../store/format.ts';
import type { DeliveryOutcomeLogRecord, DeliveryOutcomeEntryRecord, DeliveryRecord, EventLogRecord, EventRecord, WebhookRecord, WebhookTargetsRecord } from './webhook-records.ts';

export const USERS = collectionName<UserRecord>('users');
export const KEYS = collectionName<KeyRecord>('keys');
export const LISTINGS = collectionName<ListingRecord>('listings');
export const WEBHOOKS = collectionName<WebhookRecord>('webhooks');
/** Which of a user's webhooks receive events, as one record that changes with them (webhook-records.ts). */
export const WEBHOOK_TARGETS = collectionName<WebhookTargetsRecord>('webhook_targets');
export const DELIVERIES = collectionName<DeliveryRecord>('deliveries');
/** Each event's payload, once; its deliveries refer to it by id (webhooks/records.ts). */
export const EVENTS = collectionName<EventRecord>('events');
/** Every event of each user, kept EVENT_RETENTION_DAYS for GET /v1/events and its stream (webhooks/event-log.ts). */
export const EVENT_LOG = collectionName<EventLogRecord>('event_log');
/** Each webhook's last 50 delivery outcomes, one small record per attempt (webhooks/outcome-log.ts). */
export const DELIVERY_OUTCOME_ENTRIES = collectionName<DeliveryOutcomeEntryRecord>('delivery_outcome_entries');
/** The same as one whole list per webhook, as older data directories hold it (read, then replaced by the entries). */
export const DELIVERY_OUTCOMES = collectionName<DeliveryOutcomeLogRecord>('delivery_outcomes');
export const IDEMPOTENCY = collectionName<IdempotencyRecord>('idempotency');
/** Usage snapshots; their shape is checked when read back (analytics/snapshots.ts). */
export const USAGE = collectionName<StoredRecord>('usage');
export const AUDIT = collectionName<AuditRecord>('audit');
/** The operator's plans, one record (PLAN_LIST_ID) holding the whole list (auth/plans.ts). */
export const PLANS = collectionName<PlanListRecord>('plans');
/** Users' requests for a plan they may not pick themselves, decided by the operator. */
export const PLAN_REQUESTS = collectionName<PlanRequestRecord>('plan_requests');
/** Each user's count against a plan's quota, saved with the other aggregates (modules/plans/quota-counters.ts). */
export const QUOTA_COUNTS = collectionName<QuotaCountRecord>('quota_counts');

export type Role = 'creator' | 'member';
export const ROLES: readonly Role[] = ['creator', 'member'];

/** `erased`: the user was deleted; the record stays, emptied of personal data, so ids resolve. */
export type UserStatus = 'active' | 'suspended' | 'erased';

export interface UserRecord {
  readonly id: string;
  readonly name: string;
  readonly email: string;
  readonly bio: string;
  readonly website: string;
  readonly avatar_url: string;
  readonly role: Role;
  readonly created_at: string;
  readonly updated_at: string;
  /** Absent on records written before moderation existed: read as `active` (see userStatus). */
  readonly status?: UserStatus;
  readonly suspended_at?: string | null;
  readonly suspension_reason?: string | null;
  readonly erased_at?: string | null;
}

export function userStatus(user: UserRecord): UserStatus {
  return user.status ?? 'active';
}

export interface KeyRecord {
  readonly id: string;
  readonly user_id: string;
  readonly name: string;
  /** The key's visible start, e.g. "market_live_"; with last_four it identifies a key to a person. */
  readonly prefix: string;
  readonly last_four: string;
  /** SHA-256 (hex) of the plain key. */
  readonly hash: string;
  readonly permissions: readonly string[];
  readonly rate_limit: number;
  readonly created_at: string;
  readonly updated_at: string;
  readonly revoked_at: string | null;
  /** When the key stops working (absent or null: never). */
  readonly expires_at?: string | null;
  /** The plan that set `rate_limit`; absent or null when the operator set a limit of its own. */
  readonly plan?: string | null;
  /** After a roll: the previous secret's SHA-256, accepted until `previous_hash_expires_at`. */
  readonly previous_hash?: string | null;
  readonly previous_hash_expires_at?: string | null;
  /** The `expires_at` its owner was last told of with `key.expiring` (modules/plans/account-events.ts). */
  readonly expiry_notice_for?: string | null;
}

/** A tier of requests per minute; `self_service` plans a user may switch a key to at once. */
export interface Plan {
  readonly id: string;
  readonly name: string;
  readonly rate_limit: number;
  readonly self_service: boolean;
  /** Requests per UTC day or month, shared by a user's keys on the plan; absent or null: none. */
  readonly quota?: PlanQuota | null;
}

export type QuotaPeriod = 'day' | 'month';
export const QUOTA_PERIODS: readonly QuotaPeriod[] = ['day', 'month'];

export interface PlanQuota {
  readonly requests: number;
  readonly period: QuotaPeriod;
}

/** The requests one user made on one plan in its quota's current period (modules/plans/quota-counters.ts). */
export interface QuotaCountRecord {
  /** The meter: "<user id>/<plan id>" (modules/plans/shared-windows.ts meterIdOf). */
  readonly id: string;
  readonly period: QuotaPeriod;
  /** The period's start (UTC midnight, or the 1st of the month). */
  readonly start: string;
  readonly used: number;
  readonly updated_at: string;
}

export interface PlanListRecord {
  readonly id: string;
  readonly plans: readonly Plan[];
  readonly updated_at: string;
}

/** `cancelled`: withdrawn by the user while pending. */
export type PlanRequestStatus = 'pending' | 'approved' | 'declined' | 'cancelled';

export interface PlanRequestRecord {
  readonly id: string;
  readonly key_id: string;
  readonly user_id: string;
  readonly plan: string;
  readonly status: PlanRequestStatus;
  readonly created_at: string;
  /** When it was approved, declined or cancelled. */
  readonly decided_at: string | null;
  /** The operator's word on the decision, shown to the user; absent on requests written before notes. */
  readonly note?: string | null;
}

export const LISTING_TYPES = ['SKILL', 'AGENT', 'PROMPT', 'TEMPLATE', 'DATASET', 'TOOL'] as const;
export type ListingType = (typeof LISTING_TYPES)[number];
/** `removed`: taken down by the operator (only the operator can restore it). */
export type ListingStatus = 'active' | 'archived' | 'removed';

export interface ListingRecord {
  readonly id: string;
  readonly title: string;
  readonly description: string;
  readonly type: ListingType;
  readonly price: number;
  readonly tags: readonly string[];
  readonly status: ListingStatus;
  readonly owner_id: string;
  readonly created_at: string;
  readonly updated_at: string;
  /** Present only while the listing is removed. */
  readonly removal_reason?: string;
  readonly removed_at?: string;
}

export interface IdempotencyRecord {
  readonly id: string;
  readonly key_id: string;
  readonly request_hash: string;
  readonly status: number;
  readonly body: string;
  /** The first answer's Cache-Control, when it had one of its own (no-store on a secret). */
  readonly cache_control?: string;
  readonly created_at: string;
}

/** Who did an audited action: the operator (token), or a user in the portal (session). */
export type AuditActor = { readonly type: 'operator' } | { readonly type: 'user'; readonly id: string };

/** One operator or portal action, written in the same store write as the change it describes. */
export interface AuditRecord {
  readonly id: string;
  readonly at: string;
  readonly action: string;
  readonly target_type: 'user' | 'key' | 'listing' | 'store' | 'plan' | 'webhook';
  readonly target_id: string;
  /** Field → {from, to} for edits; a summary for actions (never a secret, never erased data). */
  readonly changes: Record<string, unknown>;
  readonly request_id: string;
  /** Absent on the operator's entries (and on entries written before the portal existed). */
  readonly actor?: AuditActor;
  /** Order among entries made in the same millisecond; not shown (see auditView). */
  readonly seq: number;
  /**
   * Where a sign-in, failed sign-in or sign-out came from, for the user's own activity log only
   * (not in the operator's audit answers); erased with the user.
   */
  readonly origin?: RequestOrigin;
}

/** The client address (as TRUST_PROXY lets the server see it) and user agent of a request. */
export interface RequestOrigin {
  readonly client_address: string;
  readonly user_agent: string | null;
}
