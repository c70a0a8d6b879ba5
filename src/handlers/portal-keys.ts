// The signed-in user's own API keys in the developer portal (contract section 20): list, create
// at least privilege within the role (at most 20 active), rename, narrow or widen within the
// role, switch to a self-service plan, revoke, roll with a grace period, and read usage. The
// secret is in the create and roll answers only. Another user's key is 404, as if it did not
// exist. Every write is audited with the user as actor, in the same store write.

import type { AuditLog } from '../audit/audit-log.ts';
import { assertChangeable, assertPlanChangeable, DEFAULT_PERMISSIONS, existingPlan, newKeyRecord, onPlan, readGraceSeconds, readKeyExpiry, readPermissions } from '../http/key-fields.ts';
import { isExpired, rolledKey } from '../auth/key-lifetime.ts';
import { generateApiKey } from '../auth/keys.ts';
import { entriesBeyondRole } from '../auth/role-permissions.ts';
import { fieldChanges } from '../audit/audit-log.ts';
import { isoTime } from '../clock.ts';
import { newestFirst } from '../domain/order.ts';
import { currentPlans, entryPlan } from '../auth/plans.ts';
import { KEYS, type KeyRecord, type Plan, type UserRecord } from '../domain/records.ts';
import { keyView, rolledKeyView } from '../domain/views.ts';
import { badRequest, conflict, forbidden, notFound } from '../domain/errors.ts';
import { checkQueryNames, pageOf, readPageRequest } from '../http/lists.ts';
import { SECRET_ANSWER_HEADERS } from '../http/respond.ts';
import type { ApiRoute, PortalContext, PortalRoute, Reply } from '../http/route.ts';
import { BodyChecker, requireNonEmpty } from '../http/validation.ts';
import type { RecordReader } from '../store/collections.ts';
import type { Store } from '../store/store.ts';
import { assertWithinDailyLimit, KEYS_CREATED_PER_DAY } from '../portal/daily-limits.ts';
import { usageBody, type UsageAnswerDeps } from './analytics.ts';

export interface PortalKeyRoutesDeps extends UsageAnswerDeps {
  store: Store;
  brand: string;
  /** The /v1 routes: permission entries are checked against them, and against the user's role. */
  apiRoutes: readonly ApiRoute[];
  audit: AuditLog;
}

/** Active keys a user may hold at once (revoked and expired ones do not count). */
export const MAX_ACTIVE_KEYS_PER_USER = 20;

const CREATE_FIELDS = ['name', 'permissions', 'plan', 'expires_at'] as const;
const PATCH_FIELDS = ['name', 'permissions', 'plan'] as const;
const READ_ONLY_FIELDS = ['id', 'key', 'user_id', 'prefix', 'last_four', 'rate_limit', 'created_at', 'updated_at', 'revoked_at', 'last_used_at'];

export function portalKeyRoutes(deps: PortalKeyRoutesDeps): PortalRoute[] {
  const { store, clock, audit, apiRoutes } = deps;
  const lastUsedAt = (keyId: string) => deps.usage.lastUsedAt(keyId);
  const actor = (user: UserRecord) => ({ type: 'user' as const, id: user.id });

  function list(context: PortalContext): Reply {
    checkQueryNames(context.query, ['page', 'limit']);
    const request = readPageRequest(context.query);
    const keys = [...store.values(KEYS)].filter((key) => key.user_id === context.user.id).sort(newestFirst);
    const page = pageOf(keys, request);
    return { status: 200, body: { data: page.data.map((key) => keyView(key, lastUsedAt(key.id))), pagination: page.pagination } };
  }

  async function create(context: PortalContext): Promise<Reply> {
    const checker = new BodyChecker(await context.readJsonBody(), CREATE_FIELDS, READ_ONLY_FIELDS);
    const name = checker.string('name', 0, 100);
    const permissions = readOwnPermissions(checker, apiRoutes);
    const planId = checker.string('plan', 1, 40);
    const expiresAt = readKeyExpiry(checker, clock.now());
    checker.finish();
    const secret = generateApiKey('live', deps.brand);
    return context.commit((tx, user) => {
      const granted = permissions ?? DEFAULT_PERMISSIONS;
      assertWithinRole(granted, user, apiRoutes);
      const plan = planId === undefined ? entryPlan(currentPlans(tx)) : selfServicePlan(tx, planId);
      if (plan === undefined) throw conflict('The operator offers no self-service plan; ask the operator for a key.');
      // Counted on the keys as they are when the write commits, so racing creates cannot pass 20
      // active keys, nor 50 created in a day.
      assertWithinDailyLimit(keyCreationTimes(tx, user.id), KEYS_CREATED_PER_DAY, clock.now(), 'keys');
      const active = activeKeysOf(tx, user.id, clock.now());
      if (active >= MAX_ACTIVE_KEYS_PER_USER) {
        throw conflict(`You already have ${MAX_ACTIVE_KEYS_PER_USER} active keys, the most allowed. Revoke one (DELETE /portal/v1/keys/:id) before creating another.`);
      }
      const key = newKeyRecord({ userId: user.id, name: name ?? '', secret, permissions: granted, rateLimit: plan.rate_limit, plan: plan.id, expiresAt: expiresAt ?? null, nowMs: clock.now() });
      const changes = { name: key.name, permissions: key.permissions, plan: key.plan, rate_limit: key.rate_limit, expires_at: key.expires_at };
      return {
        ops: [{ op: 'put', collection: KEYS, id: key.id, data: key }, audit.entryOp(context.requestId, { action: 'portal.key_create', target_type: 'key', target_id: key.id, changes, actor: actor(user) })],
        // The plain key is in this answer only; the store keeps its SHA-256.
        reply: { status: 201, headers: { ...SECRET_ANSWER_HEADERS }, body: { data: { ...keyView(key, null), key: secret.key } } },
      };
    });
  }

  async function update(context: PortalContext): Promise<Reply> {
    const body = await context.readJsonBody();
    const checker = new BodyChecker(body, PATCH_FIELDS, [...READ_ONLY_FIELDS, 'expires_at']);
    const name = checker.string('name', 0, 100);
    const permissions = readOwnPermissions(checker, apiRoutes);
    const planId = checker.string('plan', 1, 40);
    checker.finish();
    requireNonEmpty(body, PATCH_FIELDS);
    const keyId = context.params.id!;
    return context.commit((tx, user) => {
      const key = ownKey(tx, keyId, user);
      assertChangeable(key);
      if (permissions !== undefined) assertWithinRole(permissions, user, apiRoutes);
      let changed: KeyRecord = {
        ...key,
        ...(name !== undefined ? { name } : {}),
        ...(permissions !== undefined ? { permissions } : {}),
        updated_at: isoTime(clock.now()),
      };
      // A self-service plan applies at once: the limiter reads rate_limit from the record on the next request.
      if (planId !== undefined) {
        assertPlanChangeable(key, clock.now());
        changed = onPlan(changed, selfServicePlan(tx, planId));
      }
      const changes = fieldChanges({ ...key, plan: key.plan ?? null }, changed, ['name', 'permissions', 'plan', 'rate_limit']);
      return {
        ops: [{ op: 'put', collection: KEYS, id: keyId, data: changed }, audit.entryOp(context.requestId, { action: 'portal.key_update', target_type: 'key', target_id: keyId, changes, actor: actor(user) })],
        reply: { status: 200, body: { data: keyView(changed, lastUsedAt(keyId)) } },
      };
    });
  }

  function revoke(context: PortalContext): Promise<Reply> {
    const keyId = context.params.id!;
    return context.commit((tx, user) => {
      const key = ownKey(tx, keyId, user);
      // Revoking twice changes nothing.
      if (key.revoked_at !== null) return { ops: [], reply: { status: 200, body: { data: keyView(key, lastUsedAt(keyId)) } } };
      const now = isoTime(clock.now());
      const revoked: KeyRecord = { ...key, revoked_at: now, updated_at: now };
      return {
        ops: [
          { op: 'put', collection: KEYS, id: keyId, data: revoked },
          audit.entryOp(context.requestId, { action: 'portal.key_revoke', target_type: 'key', target_id: keyId, changes: { revoked_at: { from: null, to: now } }, actor: actor(user) }),
        ],
        reply: { status: 200, body: { data: keyView(revoked, lastUsedAt(keyId)) } },
      };
    });
  }

  async function roll(context: PortalContext): Promise<Reply> {
    const checker = new BodyChecker(await context.readJsonBody(), ['grace_seconds']);
    const graceSeconds = readGraceSeconds(checker);
    checker.finish();
    const keyId = context.params.id!;
    return context.commit((tx, user) => {
      const key = ownKey(tx, keyId, user);
      assertChangeable(key);
      const secret = generateApiKey(key.prefix === 'mk_' ? 'mk' : 'live', deps.brand);
      const rolled = rolledKey(key, secret, graceSeconds, clock.now());
      const changes = { grace_seconds: graceSeconds, previous_secret_expires_at: rolled.previous_hash_expires_at, last_four: { from: key.last_four, to: rolled.last_four } };
      return {
        ops: [{ op: 'put', collection: KEYS, id: keyId, data: rolled }, audit.entryOp(context.requestId, { action: 'portal.key_roll', target_type: 'key', target_id: keyId, changes, actor: actor(user) })],
        reply: { status: 201, headers: { ...SECRET_ANSWER_HEADERS }, body: { data: rolledKeyView(rolled, secret.key, lastUsedAt(keyId), clock.now()) } },
      };
    });
  }

  async function usage(context: PortalContext): Promise<Reply> {
    const key = ownKey(store, context.params.id!, context.user);
    return { status: 200, body: { data: await usageBody(deps, context.query, key) } };
  }

  return [
    { method: 'GET', pattern: '/portal/v1/keys', summary: 'Your API keys (no secrets)', handle: list },
    { method: 'POST', pattern: '/portal/v1/keys', summary: 'Create an API key (the secret is shown once)', handle: create },
    { method: 'PATCH', pattern: '/portal/v1/keys/:id', summary: "Rename a key, change its permissions within your role, or switch it to a self-service plan", handle: update },
    { method: 'DELETE', pattern: '/portal/v1/keys/:id', summary: 'Revoke a key', handle: revoke },
    { method: 'POST', pattern: '/portal/v1/keys/:id/roll', summary: 'Roll a key: a new secret, the old one kept for a grace period', handle: roll },
    { method: 'GET', pattern: '/portal/v1/keys/:id/usage', summary: "A key's usage", handle: usage },
  ];
}

/** The user's own key; anyone else's is answered exactly like a missing one. */
export function ownKey(reader: RecordReader, keyId: string, user: UserRecord): KeyRecord {
  const key = reader.get(KEYS, keyId);
  if (key === undefined || key.user_id !== user.id) throw notFound('Key');
  return key;
}

/** Keys of the user neither revoked nor expired. */
/** When each of the user's keys was made, revoked ones included (for the daily limit). */
function keyCreationTimes(reader: RecordReader, userId: string): string[] {
  return [...reader.values(KEYS)].filter((key) => key.user_id === userId).map((key) => key.created_at);
}

function activeKeysOf(reader: RecordReader, userId: string, nowMs: number): number {
  let count = 0;
  for (const key of reader.values(KEYS)) if (key.user_id === userId && key.revoked_at === null && !isExpired(key, nowMs)) count += 1;
  return count;
}

/** Permissions as the operator's routes read them, and never an empty list (a key that can do nothing). */
function readOwnPermissions(checker: BodyChecker, apiRoutes: readonly ApiRoute[]): string[] | undefined {
  const permissions = readPermissions(checker, apiRoutes);
  if (permissions !== undefined && permissions.length === 0) return checker.fail('permissions', 'must hold at least one entry');
  return permissions;
}

/**
 * 403 when an entry opens a route the user's role may never use (a member and write:listings):
 * a refusal of who the user is, not of the body's shape, so it is a 403 like a member's
 * POST /v1/listings, and `details.permissions` names the entries.
 */
function assertWithinRole(permissions: readonly string[], user: UserRecord, apiRoutes: readonly ApiRoute[]): void {
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
