// A user's own keys in the portal, with no request in sight: reading her create and change,
// and deciding them (least privilege within her role, at most 20 active keys, 50 created a day,
// self-service plans only) and her revoke. Built on the core's key rules (src/resources/keys.ts),
// which the operator's routes share. Each decision is `decideX(tx, actor, input, now)`
// (src/domain/actor.ts) and returns the store's Decision, `{ops, result}`.

import { isoTime } from '../../clock.ts';
import type { KeyRecord, Plan } from '../../domain/records.ts';
import { badRequest, conflict, forbidden } from '../../domain/errors.ts';
import { BodyChecker, requireNonEmpty } from '../../http/validation.ts';
import type { RecordReader } from '../../store/collections.ts';
import type { Decision, Transaction } from '../../store/transaction.ts';
import type { UserActor } from '../../domain/actor.ts';
import { isExpired } from '../../auth/key-lifetime.ts';
import type { NewApiKey } from '../../auth/keys.ts';
import type { PermissionRoute } from '../../auth/permissions.ts';
import { currentPlans, entryPlan } from '../../auth/plans.ts';
import { entriesBeyondRole } from '../../auth/role-permissions.ts';
import { KEYS, type UserRecord } from '../../domain/records.ts';
import { existingPlan } from '../../resources/key-plans.ts';
import { assertPlanChangeable, assertChangeable, DEFAULT_PERMISSIONS, newKeyRecord, onPlan, ownKey, readKeyExpiry, readPermissions, revocation, type KeyChange } from '../../resources/keys.ts';
import { assertWithinDailyLimit, KEYS_CREATED_PER_DAY } from './daily-limits.ts';

/** Active keys a user may hold at once (revoked and expired ones do not count). */
export const MAX_ACTIVE_KEYS_PER_USER = 20;

const OWN_CREATE_FIELDS = ['name', 'permissions', 'plan', 'expires_at'] as const;
const OWN_CHANGE_FIELDS = ['name', 'permissions', 'plan'] as const;
const OWN_READ_ONLY_FIELDS = ['id', 'key', 'user_id', 'prefix', 'last_four', 'rate_limit', 'created_at', 'updated_at', 'revoked_at', 'last_used_at'];

/** What a user sends to create or change her own key; absent fields are undefined. */
export interface OwnKeyFields {
  name?: string;
  permissions?: string[];
  planId?: string;
  /** Create only: null for never. */
  expiresAt?: string | null;
}

/** A portal key create's body; throws one 400 naming every problem. */
export function readOwnKeyCreate(body: Record<string, unknown>, apiRoutes: readonly PermissionRoute[], nowMs: number): OwnKeyFields {
  const checker = new BodyChecker(body, OWN_CREATE_FIELDS, OWN_READ_ONLY_FIELDS);
  const name = checker.string('name', 0, 100);
  const permissions = readOwnPermissions(checker, apiRoutes);
  const planId = checker.string('plan', 1, 40);
  const expiresAt = readKeyExpiry(checker, nowMs);
  checker.finish();
  return { name, permissions, planId, expiresAt };
}

/** A portal key change's body (at least one field; the expiry is the operator's to change); throws one 400. */
export function readOwnKeyChange(body: Record<string, unknown>, apiRoutes: readonly PermissionRoute[]): OwnKeyFields {
  const checker = new BodyChecker(body, OWN_CHANGE_FIELDS, [...OWN_READ_ONLY_FIELDS, 'expires_at']);
  const name = checker.string('name', 0, 100);
  const permissions = readOwnPermissions(checker, apiRoutes);
  const planId = checker.string('plan', 1, 40);
  checker.finish();
  requireNonEmpty(body, OWN_CHANGE_FIELDS);
  return { name, permissions, planId };
}

/**
 * A user creating her own key: at least privilege within her role (403 beyond it), on the plan
 * asked for if self-service or else the entry plan (409 when none is offered), within 50 keys
 * created a day (429) and 20 active keys (409). Counted on the keys as they are when the write
 * commits, so racing creates cannot pass either cap.
 */
export function decideOwnKeyCreate(tx: Transaction, actor: UserActor, input: { fields: OwnKeyFields; secret: NewApiKey; apiRoutes: readonly PermissionRoute[] }, nowMs: number): Decision<KeyRecord> {
  const { user } = actor;
  const { fields, secret, apiRoutes } = input;
  const granted = fields.permissions ?? DEFAULT_PERMISSIONS;
  assertWithinRole(granted, user, apiRoutes);
  const plan = fields.planId === undefined ? entryPlan(currentPlans(tx)) : selfServicePlan(tx, fields.planId);
  if (plan === undefined) throw conflict('The operator offers no self-service plan; ask the operator for a key.');
  assertWithinDailyLimit(keyCreationTimes(tx, user.id), KEYS_CREATED_PER_DAY, nowMs, 'keys');
  if (activeKeysOf(tx, user.id, nowMs) >= MAX_ACTIVE_KEYS_PER_USER) {
    throw conflict(`You already have ${MAX_ACTIVE_KEYS_PER_USER} active keys, the most allowed. Revoke one (DELETE /portal/v1/keys/:id) before creating another.`);
  }
  const key = newKeyRecord({ userId: user.id, name: fields.name ?? '', secret, permissions: granted, rateLimit: plan.rate_limit, plan: plan.id, expiresAt: fields.expiresAt ?? null, nowMs });
  return { ops: [{ op: 'put', collection: KEYS, id: key.id, data: key }], result: key };
}

/**
 * A user changing her own key: a revoked one is final (409), permissions stay within her role
 * (403), and a self-service plan applies at once (the limiter reads rate_limit from the record
 * on the next request) while the key can still be used.
 */
export function decideOwnKeyChange(tx: Transaction, actor: UserActor, input: { keyId: string; fields: OwnKeyFields; apiRoutes: readonly PermissionRoute[] }, nowMs: number): Decision<KeyChange> {
  const { user } = actor;
  const { keyId, fields, apiRoutes } = input;
  const key = ownKey(tx, keyId, user);
  assertChangeable(key);
  if (fields.permissions !== undefined) assertWithinRole(fields.permissions, user, apiRoutes);
  let changed: KeyRecord = {
    ...key,
    ...(fields.name !== undefined ? { name: fields.name } : {}),
    ...(fields.permissions !== undefined ? { permissions: fields.permissions } : {}),
    updated_at: isoTime(nowMs),
  };
  if (fields.planId !== undefined) {
    assertPlanChangeable(key, nowMs);
    changed = onPlan(changed, selfServicePlan(tx, fields.planId));
  }
  return { ops: [{ op: 'put', collection: KEYS, id: keyId, data: changed }], result: { key, changed } };
}

/** The acting user revoking her own key (404 for anyone else's): no ops when it already is (revoking twice changes nothing). */
export function decideOwnKeyRevoke(tx: Transaction, actor: UserActor, input: { keyId: string }, nowMs: number): Decision<KeyRecord> {
  return revocation(ownKey(tx, input.keyId, actor.user), nowMs);
}

/** When each of the user's keys was made, revoked ones included (for the daily limit). */
function keyCreationTimes(reader: RecordReader, userId: string): string[] {
  return [...reader.values(KEYS)].filter((key) => key.user_id === userId).map((key) => key.created_at);
}

/** How many keys of the user are neither revoked nor expired. */
function activeKeysOf(reader: RecordReader, userId: string, nowMs: number): number {
  let count = 0;
  for (const key of reader.values(KEYS)) if (key.user_id === userId && key.revoked_at === null && !isExpired(key, nowMs)) count += 1;
  return count;
}

/** Permissions as the operator's routes read them, and never an empty list (a key that can do nothing). */
function readOwnPermissions(checker: BodyChecker, apiRoutes: readonly PermissionRoute[]): string[] | undefined {
  const permissions = readPermissions(checker, apiRoutes);
  if (permissions !== undefined && permissions.length === 0) return checker.fail('permissions', 'must hold at least one entry');
  return permissions;
}

/**
 * 403 when an entry opens a route the user's role may never use (a member and write:listings):
 * a refusal of who the user is, not of the body's shape, so it is a 403 like a member's
 * POST /v1/listings, and `details.permissions` names the entries.
 */
function assertWithinRole(permissions: readonly string[], user: UserRecord, apiRoutes: readonly PermissionRoute[]): void {
  const beyond = entriesBeyondRole(permissions, user.role, apiRoutes);
  if (beyond.length === 0) return;
  throw forbidden(`Your role (${user.role}) may not hold ${beyond.map((entry) => JSON.stringify(entry)).join(', ')}: only creators may write listings.`, {
    details: { permissions: `${beyond.map((entry) => JSON.stringify(entry)).join(', ')} ${beyond.length === 1 ? 'is' : 'are'} beyond the ${user.role} role` },
  });
}

/** A plan the user may pick: it exists and is self-service; others are asked for with a plan request. */
function selfServicePlan(reader: RecordReader, planId: string): Plan {
  const plan = existingPlan(reader, planId);
  if (!plan.self_service) {
    throw badRequest(`The request body is invalid: plan ${plan.id} is not self-service; ask for it with POST /portal/v1/plan-requests.`, { plan: 'is not self-service' });
  }
  return plan;
}
