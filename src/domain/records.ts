// The shapes of the records the store keeps, one collection each. Records are immutable:
// a change writes a new object, so anything holding an old one (a cache, a snapshot) is safe.
// Each collection's name carries its record type, so reading one needs no cast.

import { collectionName } from '../store/collections.ts';
import type { StoredRecord } from '../store/format.ts';
import type { DeliveryRecord, WebhookRecord } from '../webhooks/records.ts';

export const USERS = collectionName<UserRecord>('users');
export const KEYS = collectionName<KeyRecord>('keys');
export const LISTINGS = collectionName<ListingRecord>('listings');
export const WEBHOOKS = collectionName<WebhookRecord>('webhooks');
export const DELIVERIES = collectionName<DeliveryRecord>('deliveries');
export const IDEMPOTENCY = collectionName<IdempotencyRecord>('idempotency');
/** Usage snapshots; their shape is checked when read back (analytics/snapshots.ts). */
export const USAGE = collectionName<StoredRecord>('usage');

export type Role = 'creator' | 'member';
export const ROLES: readonly Role[] = ['creator', 'member'];

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
}

export const LISTING_TYPES = ['SKILL', 'AGENT', 'PROMPT', 'TEMPLATE', 'DATASET', 'TOOL'] as const;
export type ListingType = (typeof LISTING_TYPES)[number];
export type ListingStatus = 'active' | 'archived';

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
}

export interface IdempotencyRecord {
  readonly id: string;
  readonly key_id: string;
  readonly request_hash: string;
  readonly status: number;
  readonly body: string;
  readonly created_at: string;
}
