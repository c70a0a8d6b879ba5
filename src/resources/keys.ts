// The rules of an API key and its plan, with no request in sight. Reading the key fields that
// both the operator API and the portal accept — `expires_at`, `plan`, `grace_seconds` — and
// turning a plan id into the key's plan and limit, one reading for both, so a key made either
// way follows the same rules; deciding the operator's key create, change, revoke and roll, and
// a user's roll of her own key. A user's own key create and change are the portal's rules
// (src/modules/portal/own-keys.ts). Another user's key is always a missing one. Each decision is `decideX(tx, actor, input, now)` (src/domain/actor.ts)
// and returns the store's Decision, `{ops, result}`.

import { isoTime } from '../clock.ts';
import { newId } from '../domain/ids.ts';
import type { KeyRecord, Plan } from '../domain/records.ts';
import { badRequest, conflict, notFound } from '../domain/errors.ts';
import { BodyChecker, requireNonEmpty } from '../http/validation.ts';
import type { RecordReader } from '../store/collections.ts';
import type { Decision, Transaction } from '../store/transaction.ts';
import type { OperatorActor, UserActor } from '../domain/actor.ts';
import { isExpired, MAX_ROLL_GRACE_SECONDS, readExpiresAt, rolledKey } from '../auth/key-lifetime.ts';
import { DEFAULT_RATE_LIMIT, MAX_RATE_LIMIT, MIN_RATE_LIMIT } from '../auth/key-rules.ts';
import { generateApiKey, type KeyPrefixKind, type NewApiKey } from '../auth/keys.ts';
import { checkPermissionEntry, type PermissionRoute } from '../auth/permissions.ts';
import type { KeyPlans } from '../analytics/quota-counters.ts';
import { KEYS, USERS, userStatus, type UserRecord } from '../domain/records.ts';

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

/** A roll's body: `grace_seconds`, 0 to 7 days; absent → 0 (the old secret stops at once). Throws one 400. */
export function readKeyRoll(body: Record<string, unknown>): { graceSeconds: number } {
  const checker = new BodyChecker(body, ['grace_seconds']);
  const graceSeconds = checker.integer('grace_seconds', 0, MAX_ROLL_GRACE_SECONDS) ?? 0;
  checker.finish();
  return { graceSeconds };
}

/** The plans `plans` knows, or a 400: without the plans module a key has no plan, only a rate_limit of its own. */
function plansOrRefusal(plans: KeyPlans | null): KeyPlans {
  if (plans === null) throw badRequest('The request body is invalid: plan is not a field (this server has no plans: send rate_limit).', { plan: 'is not a field' });
  return plans;
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

const KEY_CREATE_FIELDS = ['user_id', 'name', 'permissions', 'rate_limit', 'plan', 'expires_at', 'prefix'] as const;
const KEY_CHANGE_FIELDS = ['permissions', 'rate_limit', 'plan', 'expires_at', 'name'] as const;

/** What the operator sends to create or change a key; absent fields are undefined. */
export interface KeyFields {
  /** Create only: whose key it is. */
  userId?: string;
  name?: string;
  permissions?: string[];
  /** A limit of the operator's own, which takes the key off any plan. */
  rateLimit?: number;
  planId?: string;
  expiresAt?: string | null;
  /** Create only: `mk_` or the brand's live prefix (default). */
  prefixKind?: KeyPrefixKind;
}

/** The operator's key create body (`user_id` required); throws one 400 naming every problem. */
export function readKeyCreate(body: Record<string, unknown>, apiRoutes: readonly PermissionRoute[], nowMs: number): KeyFields {
  const checker = new BodyChecker(body, KEY_CREATE_FIELDS, ['id', 'key', 'created_at', 'revoked_at']);
  checker.requireFields(['user_id']);
  const userId = checker.string('user_id', 1, 100);
  const name = checker.string('name', 0, 100);
  const permissions = readPermissions(checker, apiRoutes);
  const { rateLimit, planId } = readLimitOrPlan(checker);
  const expiresAt = readKeyExpiry(checker, nowMs);
  const prefixKind = checker.oneOf<KeyPrefixKind>('prefix', ['mk', 'live']) ?? 'live';
  checker.finish();
  return { userId, name, permissions, rateLimit, planId, expiresAt, prefixKind };
}

/** The operator's key change body (at least one field); throws one 400 naming every problem. */
export function readKeyChange(body: Record<string, unknown>, apiRoutes: readonly PermissionRoute[], nowMs: number): KeyFields {
  const checker = new BodyChecker(body, KEY_CHANGE_FIELDS, ['id', 'user_id', 'prefix', 'key', 'created_at', 'revoked_at']);
  const name = checker.string('name', 0, 100);
  const permissions = readPermissions(checker, apiRoutes);
  const { rateLimit, planId } = readLimitOrPlan(checker);
  const expiresAt = readKeyExpiry(checker, nowMs);
  checker.finish();
  requireNonEmpty(body, KEY_CHANGE_FIELDS);
  return { name, permissions, rateLimit, planId, expiresAt };
}

/**
 * The operator creating a key for a user who exists now (400 otherwise, checked as the write
 * commits, so a key is never made for a user that is gone): a limit of the operator's own means
 * no plan; otherwise the plan asked for, or the entry plan (Free). Without the plans module
 * (`plans` null) a key has no plan: its own rate_limit, or the default.
 */
export function decideKeyCreate(tx: Transaction, _actor: OperatorActor, input: { fields: KeyFields; secret: NewApiKey; plans: KeyPlans | null }, nowMs: number): Decision<KeyRecord> {
  const { fields, secret, plans } = input;
  const owner = tx.get(USERS, fields.userId!);
  if (!owner || userStatus(owner) === 'erased') throw badRequest('The request body is invalid: user_id is not an existing user.', { user_id: 'is not an existing user' });
  const plan = fields.planId !== undefined ? plansOrRefusal(plans).existing(tx, fields.planId) : fields.rateLimit === undefined ? plans?.entry(tx) : undefined;
  const key = newKeyRecord({
    userId: fields.userId!,
    name: fields.name ?? '',
    secret,
    permissions: fields.permissions ?? DEFAULT_PERMISSIONS,
    rateLimit: plan?.rate_limit ?? fields.rateLimit ?? DEFAULT_RATE_LIMIT,
    plan: plan?.id ?? null,
    expiresAt: fields.expiresAt ?? null,
    nowMs,
  });
  return { ops: [{ op: 'put', collection: KEYS, id: key.id, data: key }], result: key };
}

/** A key as it was (`key`) and as a change leaves it (`changed`). */
export interface KeyChange {
  key: KeyRecord;
  changed: KeyRecord;
}

/**
 * The operator changing a key as it is when the write commits (404 missing, 409 revoked: a
 * revocation is final). The plan is checked on the key after this change: a new expiry in the
 * same request makes it usable again.
 */
export function decideKeyChange(tx: Transaction, _actor: OperatorActor, input: { keyId: string; fields: KeyFields; plans: KeyPlans | null }, nowMs: number): Decision<KeyChange> {
  const { keyId, fields, plans } = input;
  const key = tx.get(KEYS, keyId);
  if (!key) throw notFound('Key');
  assertChangeable(key);
  let changed: KeyRecord = {
    ...key,
    ...(fields.name !== undefined ? { name: fields.name } : {}),
    ...(fields.permissions !== undefined ? { permissions: fields.permissions } : {}),
    // A limit of the operator's own takes the key off its plan.
    ...(fields.rateLimit !== undefined ? { rate_limit: fields.rateLimit, plan: null } : {}),
    ...(fields.expiresAt !== undefined ? { expires_at: fields.expiresAt } : {}),
    updated_at: isoTime(nowMs),
  };
  if (fields.planId !== undefined) {
    assertPlanChangeable(changed, nowMs);
    changed = onPlan(changed, plansOrRefusal(plans).existing(tx, fields.planId));
  }
  return { ops: [{ op: 'put', collection: KEYS, id: changed.id, data: changed }], result: { key, changed } };
}

/** The operator revoking key `keyId` (404 when missing): no ops when it already is (revoking twice changes nothing). The result is the key revoked. */
export function decideKeyRevoke(tx: Transaction, _actor: OperatorActor, input: { keyId: string }, nowMs: number): Decision<KeyRecord> {
  const key = tx.get(KEYS, input.keyId);
  if (!key) throw notFound('Key');
  return revocation(key, nowMs);
}

/** `key` revoked now: no ops when it already is (revoking twice changes nothing). */
export function revocation(key: KeyRecord, nowMs: number): Decision<KeyRecord> {
  if (key.revoked_at !== null) return { ops: [], result: key };
  const now = isoTime(nowMs);
  const revoked: KeyRecord = { ...key, revoked_at: now, updated_at: now };
  return { ops: [{ op: 'put', collection: KEYS, id: key.id, data: revoked }], result: revoked };
}

/** A key as it was (`key`), rolled, and its new plain secret for the one answer that shows it. */
export interface KeyRoll {
  key: KeyRecord;
  rolled: KeyRecord;
  secret: NewApiKey;
}

/**
 * A new secret for key `keyId` with the prefix it has (404 when missing, or for a user when not
 * hers; 409 once revoked); the current secret keeps working for `graceSeconds`. The operator
 * rolls any key, a user her own.
 */
export function decideKeyRoll(tx: Transaction, actor: UserActor | OperatorActor, input: { keyId: string; brand: string; graceSeconds: number }, nowMs: number): Decision<KeyRoll> {
  const { keyId, brand, graceSeconds } = input;
  const key = actor.kind === 'user' ? ownKey(tx, keyId, actor.user) : tx.get(KEYS, keyId);
  if (!key) throw notFound('Key');
  assertChangeable(key);
  // A new secret for an expired key would be refused from its first request.
  if (isExpired(key, nowMs)) throw conflict('This key has expired; it can no longer be rolled. Create a new key instead.');
  const secret = generateApiKey(key.prefix === 'mk_' ? 'mk' : 'live', brand);
  const rolled = rolledKey(key, secret, graceSeconds, nowMs);
  return { ops: [{ op: 'put', collection: KEYS, id: key.id, data: rolled }], result: { key, rolled, secret } };
}

/** `rate_limit` or `plan` (a plan sets the limit, so not both). */
function readLimitOrPlan(checker: BodyChecker): { rateLimit: number | undefined; planId: string | undefined } {
  const rateLimit = checker.integer('rate_limit', MIN_RATE_LIMIT, MAX_RATE_LIMIT);
  const planId = checker.string('plan', 1, 40);
  if (checker.has('rate_limit') && checker.has('plan')) checker.fail('plan', 'sets the rate limit itself: send plan or rate_limit, not both');
  return { rateLimit, planId };
}

/** The user's own key; anyone else's is answered exactly like a missing one. */
export function ownKey(reader: RecordReader, keyId: string, user: UserRecord): KeyRecord {
  const key = reader.get(KEYS, keyId);
  if (key === undefined || key.user_id !== user.id) throw notFound('Key');
  return key;
}
