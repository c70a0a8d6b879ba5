// Erasure of a user (DELETE /admin/v1/users/:id): the ops that revoke their keys, remove their
// webhooks (and deliveries), end their portal sessions and forget their password, take down their listings, forget the stored replies of their
// keys, scrub their personal data from earlier audit entries and empty the user record itself.
// The caller commits these ops with the audit entry, then compacts the log so that the old
// lines holding the personal data no longer exist in DATA_DIR when the answer leaves.

import type { StoredAuditRecord } from '../audit/audit-log.ts';
import {
  AUDIT,
  DELIVERIES,
  DELIVERY_OUTCOMES,
  IDEMPOTENCY,
  KEYS,
  LISTINGS,
  USERS,
  WEBHOOK_TARGETS,
  WEBHOOKS,
  type IdempotencyRecord,
  type KeyRecord,
  type ListingRecord,
  type UserRecord,
} from '../domain/records.ts';
import { forgetPortalAccountOps } from '../portal/end-access.ts';
import type { WriteOp } from '../store/format.ts';
import type { RecordReader } from '../store/store.ts';
import type { DeliveryRecord, WebhookRecord } from '../webhooks/records.ts';

export const PERSONAL_FIELDS = ['name', 'email', 'bio', 'website', 'avatar_url'] as const;
export const ERASED = '[erased]';
export const ERASURE_REMOVAL_REASON = 'The owner was erased.';

export interface ErasurePlan {
  ops: WriteOp[];
  /** The user record as it is left: personal fields empty, status `erased`. */
  erased: UserRecord;
  /** Counts for the answer and the audit entry (never the erased values). */
  summary: { keys_revoked: number; webhooks_removed: number; listings_removed: number; audit_entries_scrubbed: number };
}

/** Reads through `store` (in a write, its transaction), so the plan is made on the current state. */
export function erasureOps(store: RecordReader, user: UserRecord, now: string): ErasurePlan {
  const ops: WriteOp[] = [];
  const put = <T extends { id: string }>(collection: string, data: T): void => void ops.push({ op: 'put', collection, id: data.id, data });
  const del = (collection: string, id: string): void => void ops.push({ op: 'del', collection, id });
  const summary = { keys_revoked: 0, webhooks_removed: 0, listings_removed: 0, audit_entries_scrubbed: 0 };

  const keyIds = new Set<string>();
  for (const key of store.values(KEYS)) {
    if (key.user_id !== user.id) continue;
    keyIds.add(key.id);
    if (key.revoked_at === null) {
      put(KEYS, { ...key, revoked_at: now, updated_at: now });
      summary.keys_revoked += 1;
    }
  }
  // Stored replies of the user's POSTs may hold what they sent; they are the user's data too.
  for (const record of store.values(IDEMPOTENCY)) if (keyIds.has(record.key_id)) del(IDEMPOTENCY, record.id);

  const webhookIds = new Set<string>();
  for (const webhook of store.values(WEBHOOKS)) {
    if (webhook.user_id !== user.id) continue;
    webhookIds.add(webhook.id);
    del(WEBHOOKS, webhook.id);
    if (store.get(DELIVERY_OUTCOMES, webhook.id) !== undefined) del(DELIVERY_OUTCOMES, webhook.id);
    summary.webhooks_removed += 1;
  }
  if (store.get(WEBHOOK_TARGETS, user.id) !== undefined) del(WEBHOOK_TARGETS, user.id);
  // Pending deliveries carry event payloads (a user.updated one holds the profile itself).
  for (const delivery of store.values(DELIVERIES)) if (webhookIds.has(delivery.webhook_id)) del(DELIVERIES, delivery.id);

  for (const listing of store.values(LISTINGS)) {
    if (listing.owner_id !== user.id || listing.status === 'removed') continue;
    put(LISTINGS, { ...listing, status: 'removed', removal_reason: ERASURE_REMOVAL_REASON, removed_at: now, updated_at: now });
    summary.listings_removed += 1;
  }

  // Earlier operator entries about this user recorded their profile values (creation, edits,
  // older values too): every personal field is blanked, and any other text holding a current one.
  const erasedValues = PERSONAL_FIELDS.map((field) => user[field]).filter((value) => value !== '');
  for (const entry of store.values(AUDIT)) {
    if (entry.target_id !== user.id) continue;
    const blanked = Object.fromEntries(Object.entries(entry.changes).map(([field, value]) => [field, isPersonalField(field) ? ERASED : value]));
    const scrubbed = scrub(blanked, erasedValues);
    if (JSON.stringify(scrubbed) === JSON.stringify(entry.changes)) continue;
    put(AUDIT, { ...entry, changes: scrubbed as Record<string, unknown> });
    summary.audit_entries_scrubbed += 1;
  }

  // Portal access: sessions end, the stored password and any open invitation are forgotten.
  ops.push(...forgetPortalAccountOps(store, user.id));

  const erased: UserRecord = {
    ...user,
    name: '',
    email: '',
    bio: '',
    website: '',
    avatar_url: '',
    status: 'erased',
    suspended_at: null,
    suspension_reason: null,
    erased_at: now,
    updated_at: now,
  };
  put(USERS, erased);
  return { ops, erased, summary };
}

function isPersonalField(field: string): boolean {
  return (PERSONAL_FIELDS as readonly string[]).includes(field);
}

/** `value` with every string that holds one of `secrets` replaced by "[erased]". */
function scrub(value: unknown, secrets: readonly string[]): unknown {
  if (typeof value === 'string') return secrets.some((secret) => value.includes(secret)) ? ERASED : value;
  if (Array.isArray(value)) return value.map((item) => scrub(item, secrets));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([name, item]) => [name, scrub(item, secrets)]));
  }
  return value;
}
