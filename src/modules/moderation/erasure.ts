// Erasure of a user (DELETE /admin/v1/users/:id): the ops that revoke their keys, remove their
// webhooks (and deliveries), end their portal sessions and forget their password, take down and empty their listings, forget the stored replies of
// their keys, empty the user record, and remove the user's personal data from every text the
// server wrote: audit entries, suspension and removal reasons, key names. The caller commits
// these ops with the audit entry, then compacts the log so that the old lines holding the
// personal data no longer exist in DATA_DIR (or as PostgreSQL rows) when the answer leaves.
//
// Two rules. Text about the user or what she owned (her record, her keys, her listings, audit
// entries targeting them) is erased whole, whatever it says: a reason may quote a value the
// server no longer knows. Text about anyone else is erased where it mentions one of her values,
// current or earlier (from audit entries and from the log's older lines).

import {
  AUDIT,
  DELIVERIES,
  EVENTS,
  EVENT_LOG,
  IDEMPOTENCY,
  KEYS,
  LISTINGS,
  USERS,
  WEBHOOK_TARGETS,
  WEBHOOKS,
  type AuditRecord,
  type UserRecord,
} from '../../domain/records.ts';
import { forgetPortalAccountOps } from '../../domain/end-access.ts';
import { outcomeRemovalOps } from '../../webhooks/outcome-log.ts';
import type { WriteOp } from '../../store/format.ts';
import type { RecordReader } from '../../store/store.ts';

export const PERSONAL_FIELDS = ['name', 'email', 'bio', 'website', 'avatar_url'] as const;
export const ERASED = '[erased]';
export const ERASURE_REMOVAL_REASON = 'The owner was erased.';

/**
 * Fields of an audit entry about the user or what she owned that hold free text (hers or the
 * operator's about her): erased whole. Statuses, counts, ids and times stay.
 */
const TEXT_ABOUT_HER = new Set<string>([...PERSONAL_FIELDS, 'reason', 'removal_reason', 'suspension_reason', 'title', 'description', 'tags', 'url', 'secret']);
/** Shorter values are not looked for in others' text: "Al" would match too much that is not her. */
const MIN_SEARCHED_LENGTH = 3;

export interface ErasurePlan {
  ops: WriteOp[];
  /** The user record as it is left: personal fields empty, status `erased`. */
  erased: UserRecord;
  /** Counts for the answer and the audit entry (never the erased values). */
  summary: { keys_revoked: number; webhooks_removed: number; listings_removed: number; audit_entries_scrubbed: number; reasons_scrubbed: number };
}

/**
 * Reads through `store` (in a write, its transaction), so the plan is made on the current state.
 * `earlierVersions`: older versions of the user record the log still holds (Store.earlierVersions).
 */
export function erasureOps(store: RecordReader, user: UserRecord, now: string, earlierVersions: readonly Partial<UserRecord>[] = []): ErasurePlan {
  const ops: WriteOp[] = [];
  const put = <T extends { id: string }>(collection: string, data: T): void => void ops.push({ op: 'put', collection, id: data.id, data });
  const del = (collection: string, id: string): void => void ops.push({ op: 'del', collection, id });
  const summary = { keys_revoked: 0, webhooks_removed: 0, listings_removed: 0, audit_entries_scrubbed: 0, reasons_scrubbed: 0 };
  /** Ids of the user and of everything she owned: audit entries about them are about her. */
  const hers = new Set<string>([user.id]);

  const keyIds = new Set<string>();
  for (const key of store.values(KEYS)) {
    if (key.user_id !== user.id) continue;
    keyIds.add(key.id);
    hers.add(key.id);
    // A key's name is hers too ("Erin's laptop"); the record stays so ids in analytics resolve.
    if (key.revoked_at === null) summary.keys_revoked += 1;
    if (key.revoked_at === null || key.name !== '') put(KEYS, { ...key, name: '', revoked_at: key.revoked_at ?? now, updated_at: now });
  }
  // Stored replies of the user's POSTs may hold what they sent; they are the user's data too.
  for (const record of store.values(IDEMPOTENCY)) if (keyIds.has(record.key_id)) del(IDEMPOTENCY, record.id);

  const webhookIds = new Set<string>();
  for (const webhook of store.values(WEBHOOKS)) {
    if (webhook.user_id !== user.id) continue;
    webhookIds.add(webhook.id);
    hers.add(webhook.id);
    del(WEBHOOKS, webhook.id);
    ops.push(...outcomeRemovalOps(store, webhook.id));
    summary.webhooks_removed += 1;
  }
  if (store.get(WEBHOOK_TARGETS, user.id) !== undefined) del(WEBHOOK_TARGETS, user.id);
  // Pending deliveries carry event payloads (a user.updated one holds the profile itself).
  for (const delivery of store.values(DELIVERIES)) if (webhookIds.has(delivery.webhook_id)) del(DELIVERIES, delivery.id);
  // The payloads themselves, stored once per event.
  for (const event of store.values(EVENTS)) if (event.owner_id === user.id) del(EVENTS, event.id);
  // Her event log (GET /v1/events): the same payloads, kept for days.
  for (const event of store.values(EVENT_LOG)) if (event.owner_id === user.id) del(EVENT_LOG, event.id);

  // Her listings stay (removed) so ids resolve, but their text is hers and may hold anything:
  // title, description and tags are emptied, and an earlier removal's reason replaced.
  for (const listing of store.values(LISTINGS)) {
    if (listing.owner_id !== user.id) continue;
    hers.add(listing.id);
    if (listing.status !== 'removed') summary.listings_removed += 1;
    put(LISTINGS, {
      ...listing,
      title: ERASED,
      description: '',
      tags: [],
      status: 'removed',
      removal_reason: ERASURE_REMOVAL_REASON,
      removed_at: listing.removed_at ?? now,
      updated_at: now,
    });
  }

  const audit = [...store.values(AUDIT)];
  const mentions = valueMatcher(knownValues(user, earlierVersions, audit.filter((entry) => entry.target_id === user.id)));

  // Every audit entry: those about her or her things, and what she did herself (a portal
  // action, whose target may be gone: a webhook she removed), lose their text; the others, her values.
  for (const entry of audit) {
    const aboutHer = hers.has(entry.target_id) || (entry.actor?.type === 'user' && entry.actor.id === user.id);
    const changes = aboutHer ? eraseTextFields(entry.changes) : entry.changes;
    const scrubbed = scrub(changes, mentions) as Record<string, unknown>;
    // Where her sign-ins came from (address, browser) is hers too: dropped with her.
    const dropOrigin = aboutHer && entry.origin !== undefined;
    if (!dropOrigin && JSON.stringify(scrubbed) === JSON.stringify(entry.changes)) continue;
    const { origin: _origin, ...rest } = entry;
    put(AUDIT, { ...(aboutHer ? rest : entry), changes: scrubbed });
    summary.audit_entries_scrubbed += 1;
  }
  // The operator's reasons about other users and their listings that mention her.
  for (const other of store.values(USERS)) {
    if (other.id === user.id || typeof other.suspension_reason !== 'string' || !mentions(other.suspension_reason)) continue;
    put(USERS, { ...other, suspension_reason: ERASED });
    summary.reasons_scrubbed += 1;
  }
  for (const listing of store.values(LISTINGS)) {
    if (hers.has(listing.id) || typeof listing.removal_reason !== 'string' || !mentions(listing.removal_reason)) continue;
    put(LISTINGS, { ...listing, removal_reason: ERASED });
    summary.reasons_scrubbed += 1;
  }

  // Events told to others that quote her (an operator's reason on another user's listing): the
  // payload kept for their webhooks or their event log loses the strings that mention her.
  for (const event of store.values(EVENTS)) {
    if (event.owner_id === user.id || !mentions(event.payload)) continue;
    put(EVENTS, { ...event, payload: JSON.stringify(scrub(JSON.parse(event.payload), mentions)) });
    summary.reasons_scrubbed += 1;
  }
  for (const logged of store.values(EVENT_LOG)) {
    if (logged.owner_id === user.id || logged.payload === undefined || !mentions(logged.payload)) continue;
    put(EVENT_LOG, { ...logged, payload: JSON.stringify(scrub(JSON.parse(logged.payload), mentions)) });
    summary.reasons_scrubbed += 1;
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

/**
 * Every personal value the user has had that the server can still know: the current ones, the
 * older versions of her record in the log, and the values audit entries about her recorded
 * (a creation's fields, an edit's from and to).
 */
function knownValues(user: UserRecord, earlierVersions: readonly Partial<UserRecord>[], aboutHer: readonly AuditRecord[]): string[] {
  const values = new Set<string>();
  const add = (value: unknown): void => {
    if (typeof value === 'string' && value.trim().length >= MIN_SEARCHED_LENGTH) values.add(value.trim());
  };
  for (const version of [user, ...earlierVersions]) for (const field of PERSONAL_FIELDS) add(version[field]);
  for (const entry of aboutHer) {
    for (const field of PERSONAL_FIELDS) {
      const change = entry.changes[field];
      add(change);
      if (change !== null && typeof change === 'object') {
        add((change as { from?: unknown }).from);
        add((change as { to?: unknown }).to);
      }
    }
  }
  return [...values];
}

/**
 * A test of whether a text mentions one of `values`, ignoring case, as a whole: not as part of
 * a longer word ("Ann" is not found in "Annual").
 */
function valueMatcher(values: readonly string[]): (text: string) => boolean {
  const lowered = values.map((value) => value.toLowerCase());
  return (text) => {
    const haystack = text.toLowerCase();
    return lowered.some((value) => {
      for (let at = haystack.indexOf(value); at !== -1; at = haystack.indexOf(value, at + 1)) {
        if (!isWordCharacter(haystack, at - 1) && !isWordCharacter(haystack, at + value.length)) return true;
      }
      return false;
    });
  };
}

function isWordCharacter(text: string, index: number): boolean {
  if (index < 0 || index >= text.length) return false;
  return /[\p{L}\p{N}]/u.test(text[index]!);
}

/** `changes` with every free-text field (with its from and to, for an edit) erased whole. */
function eraseTextFields(changes: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(changes).map(([field, value]) => [field, TEXT_ABOUT_HER.has(field) ? ERASED : value]));
}

/** `value` with every string that mentions one of her values replaced by "[erased]". */
function scrub(value: unknown, mentions: (text: string) => boolean): unknown {
  if (typeof value === 'string') return mentions(value) ? ERASED : value;
  if (Array.isArray(value)) return value.map((item) => scrub(item, mentions));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([name, item]) => [name, scrub(item, mentions)]));
  }
  return value;
}
