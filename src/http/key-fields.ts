// Reading the key fields that both the operator API and the portal accept — `expires_at`,
// `plan`, `grace_seconds` — and turning a plan id into the key's plan and limit. One reading
// for both, so a key made either way follows the same rules.

import { isoTime } from '../clock.ts';
import { newId } from '../domain/ids.ts';
import { planById } from '../auth/plans.ts';
import type { KeyRecord, Plan } from '../domain/records.ts';
import { badRequest, conflict } from '../domain/errors.ts';
import type { BodyChecker } from './validation.ts';
import type { RecordReader } from '../store/collections.ts';
import { isExpired, MAX_ROLL_GRACE_SECONDS, readExpiresAt } from '../auth/key-lifetime.ts';
import type { NewApiKey } from '../auth/keys.ts';
import { checkPermissionEntry, type PermissionRoute } from '../auth/permissions.ts';

/** What a key holds unless more is asked: least privilege. */
export const DEFAULT_PERMISSIONS: readonly string[] = ['read:listings'];

/** A list of well-formed permission entries, without repeats. */
export function readPermissions(checker: BodyChecker, routes: readonly PermissionRoute[]): string[] | undefined {
  if (!checker.has('permissions')) return undefined;
  const value = checker.value('permissions');
  if (!Array.isArray(value)) return checker.fail('permissions', 'must be an array of permission entries');
  if (value.length > 100) return checker.fail('permissions', 'must have at most 100 entries');
  for (const entry of value) {
    const problem = checkPermissionEntry(entry, routes);
    if (problem !== null) return checker.fail('permissions', `entry ${JSON.stringify(entry)}: ${problem}`);
  }
  return [...new Set(value as string[])];
}

export interface NewKeyFields {
  userId: string;
  name: string;
  secret: NewApiKey;
  permissions: readonly string[];
  rateLimit: number;
  plan: string | null;
  expiresAt: string | null;
  nowMs: number;
}

/** A new key's record (the secret's hash only, never the secret). */
export function newKeyRecord(fields: NewKeyFields): KeyRecord {
  const now = isoTime(fields.nowMs);
  return {
    id: newId('key'),
    user_id: fields.userId,
    name: fields.name,
    prefix: fields.secret.prefix,
    last_four: fields.secret.lastFour,
    hash: fields.secret.hash,
    permissions: fields.permissions,
    rate_limit: fields.rateLimit,
    plan: fields.plan,
    expires_at: fields.expiresAt,
    created_at: now,
    updated_at: now,
    revoked_at: null,
  };
}

/** `expires_at` from the body: absent → undefined, null → never, else a future instant. */
export function readKeyExpiry(checker: BodyChecker, nowMs: number): string | null | undefined {
  const read = readExpiresAt(checker.value('expires_at'), checker.has('expires_at'), nowMs);
  if (read.problem !== undefined) return checker.fail('expires_at', read.problem);
  return read.value;
}

/** `grace_seconds` for a roll: 0 to 7 days; absent → 0 (the old secret stops at once). */
export function readGraceSeconds(checker: BodyChecker): number {
  return checker.integer('grace_seconds', 0, MAX_ROLL_GRACE_SECONDS) ?? 0;
}

/** The plan `planId` names now, or a 400 naming the plans there are. */
export function existingPlan(reader: RecordReader, planId: string): Plan {
  const plan = planById(reader, planId);
  if (!plan) throw badRequest(`The request body is invalid: plan ${JSON.stringify(planId)} is not a plan (see the plans list).`, { plan: 'is not a plan' });
  return plan;
}

/** The key on `plan`, its limit with it. */
export function onPlan(key: KeyRecord, plan: Plan): KeyRecord {
  return { ...key, plan: plan.id, rate_limit: plan.rate_limit };
}

/**
 * A key's plan moves only while the key can still be used: not once revoked or expired (an
 * expired key's plan would never be used, and a request for it would wait on nothing).
 */
export function assertPlanChangeable(key: KeyRecord, nowMs: number): void {
  assertChangeable(key);
  if (isExpired(key, nowMs)) throw conflict('This key has expired; its plan can no longer change. Create a new key instead.');
}

/** A revoked key's fields are final. */
export function assertChangeable(key: KeyRecord): void {
  if (key.revoked_at !== null) throw conflict('This key is revoked and can no longer be changed.');
}
