// The operator API under /admin/v1 (contract section 2): users and keys come to exist here,
// plus store stats, compaction and backups. The operator token is checked before any of it.
// Every write commits its audit entry in the same store write as the change.

import { DEFAULT_RATE_LIMIT, MAX_RATE_LIMIT, MIN_RATE_LIMIT } from '../auth/key-rules.ts';
import { fieldChanges, type AuditLog } from '../audit/audit-log.ts';
import { assertChangeable, assertPlanChangeable, DEFAULT_PERMISSIONS, existingPlan, newKeyRecord, onPlan, readGraceSeconds, readKeyExpiry, readPermissions } from '../resources/keys.ts';
import { rolledKey } from '../auth/key-lifetime.ts';
import { keysNarrowedTo } from '../auth/role-permissions.ts';
import { generateApiKey, type KeyPrefixKind } from '../auth/keys.ts';
import type { PermissionRoute } from '../auth/permissions.ts';
import type { Clock } from '../clock.ts';
import { isoTime } from '../clock.ts';
import { newId } from '../domain/ids.ts';
import { byCreation } from '../domain/order.ts';
import { currentPlans, entryPlan } from '../auth/plans.ts';
import { KEYS, ROLES, USERS, userStatus, type KeyRecord, type UserRecord } from '../domain/records.ts';
import { operatorUser, keyView, privateUser, rolledKeyView } from '../domain/views.ts';
import { badRequest, notFound } from '../domain/errors.ts';
import { checkQueryNames, pageOf, readPageRequest } from '../http/lists.ts';
import { SECRET_ANSWER_HEADERS } from '../http/respond.ts';
import type { OperatorRoute, Reply, RequestContext } from '../http/route.ts';
import { BodyChecker, requireNonEmpty } from '../http/validation.ts';
import type { Store, WriteOp } from '../store/store.ts';
import type { EventOutbox } from '../domain/events.ts';
import { assertEmailFree, readProfileFields } from '../resources/profile.ts';
import { VERSION } from '../version.ts';

export interface CoreOperatorRoutesDeps {
  store: Store;
  clock: Clock;
  brand: string;
  /** The /v1 routes, against which permission entries are checked when a key is made. */
  apiRoutes: readonly PermissionRoute[];
  outbox: EventOutbox;
  lastUsedAt(keyId: string): string | null;
  startedAtMs: number;
  audit: AuditLog;
  /** Where records and rate-limit windows are kept, in words. */
  backends?: { records: string; limits: string };
}


const USER_FIELDS = ['name', 'email', 'role', 'bio'] as const;
const KEY_CREATE_FIELDS = ['user_id', 'name', 'permissions', 'rate_limit', 'plan', 'expires_at', 'prefix'] as const;
const KEY_PATCH_FIELDS = ['permissions', 'rate_limit', 'plan', 'expires_at', 'name'] as const;
const KEY_AUDITED_FIELDS = ['permissions', 'rate_limit', 'plan', 'expires_at', 'name'] as const;

export function coreOperatorRoutes(deps: CoreOperatorRoutesDeps): OperatorRoute[] {
  const { store, clock, audit } = deps;
  async function createUser(context: RequestContext): Promise<Reply> {
    const checker = new BodyChecker(await context.readJsonBody(), USER_FIELDS, ['id', 'created_at', 'updated_at']);
    checker.requireFields(['name']);
    const fields = readProfileFields(checker);
    const role = checker.oneOf('role', ROLES) ?? 'member';
    checker.finish();
    return context.commit((tx) => {
      if (fields.email) assertEmailFree(tx, fields.email, null);
      const now = isoTime(clock.now());
      const user: UserRecord = {
        id: newId('usr'),
        name: fields.name!,
        email: fields.email ?? '',
        bio: fields.bio ?? '',
        website: '',
        avatar_url: '',
        role,
        created_at: now,
        updated_at: now,
      };
      const changes = { name: user.name, email: user.email, role, bio: user.bio };
      return {
        ops: [{ op: 'put', collection: USERS, id: user.id, data: user }, audit.entryOp(context.requestId, { action: 'user.create', target_type: 'user', target_id: user.id, changes })],
        reply: { status: 201, body: { data: operatorUser(user) } },
      };
    });
  }

  function listUsers(context: RequestContext): Reply {
    checkQueryNames(context.query, ['page', 'limit']);
    const page = pageOf([...store.values(USERS)].sort(byCreation), readPageRequest(context.query));
    return { status: 200, body: { data: page.data.map(operatorUser), pagination: page.pagination } };
  }

  async function updateUser(context: RequestContext): Promise<Reply> {
    const body = await context.readJsonBody();
    const checker = new BodyChecker(body, USER_FIELDS, ['id', 'created_at', 'updated_at']);
    const fields = readProfileFields(checker);
    const role = checker.oneOf('role', ROLES);
    checker.finish();
    requireNonEmpty(body, USER_FIELDS);
    return context.commit((tx) => {
      const user = tx.get(USERS, context.params.id!);
      if (!user || userStatus(user) === 'erased') throw notFound('User');
      if (fields.email) assertEmailFree(tx, fields.email, user.id);
      const now = isoTime(clock.now());
      const changed: UserRecord = { ...user, ...fields, ...(role ? { role } : {}), updated_at: now };
      const changes = fieldChanges(user, changed, USER_FIELDS);
      // A role follows the user: in the same write, every key of theirs loses what the new role
      // may never hold (as a suspension ends sessions), each narrowing audited on its key.
      const narrowed = changed.role === user.role ? [] : keysNarrowedTo(tx, user.id, changed.role, deps.apiRoutes, now);
      const keyOps: WriteOp[] = narrowed.flatMap(({ before, after }) => [
        { op: 'put', collection: KEYS, id: after.id, data: after },
        audit.entryOp(context.requestId, {
          action: 'key.narrow',
          target_type: 'key',
          target_id: after.id,
          changes: { permissions: { from: before.permissions, to: after.permissions }, role: { from: user.role, to: changed.role } },
        }),
      ]);
      return {
        ops: [
          { op: 'put', collection: USERS, id: changed.id, data: changed },
          ...keyOps,
          ...deps.outbox.eventOps(tx, 'user.updated', changed.id, privateUser(changed)),
          audit.entryOp(context.requestId, { action: 'user.update', target_type: 'user', target_id: user.id, changes }),
        ],
        reply: { status: 200, body: { data: operatorUser(changed) } },
      };
    });
  }

  async function createKey(context: RequestContext): Promise<Reply> {
    const checker = new BodyChecker(await context.readJsonBody(), KEY_CREATE_FIELDS, ['id', 'key', 'created_at', 'revoked_at']);
    checker.requireFields(['user_id']);
    const userId = checker.string('user_id', 1, 100);
    const name = checker.string('name', 0, 100);
    const permissions = readPermissions(checker, deps.apiRoutes);
    const { rateLimit, planId } = readLimitOrPlan(checker);
    const expiresAt = readKeyExpiry(checker, clock.now());
    const prefixKind = checker.oneOf<KeyPrefixKind>('prefix', ['mk', 'live']) ?? 'live';
    checker.finish();
    const generated = generateApiKey(prefixKind, deps.brand);
    return context.commit((tx) => {
      // Checked as the write commits, so a key is never made for a user that is gone.
      const owner = tx.get(USERS, userId!);
      if (!owner || userStatus(owner) === 'erased') throw badRequest('The request body is invalid: user_id is not an existing user.', { user_id: 'is not an existing user' });
      // A limit of the operator's own means no plan; otherwise the plan asked for, or the entry plan (Free).
      const plan = planId !== undefined ? existingPlan(tx, planId) : rateLimit === undefined ? entryPlan(currentPlans(tx)) : undefined;
      const key = newKeyRecord({
        userId: userId!,
        name: name ?? '',
        secret: generated,
        permissions: permissions ?? DEFAULT_PERMISSIONS,
        rateLimit: plan?.rate_limit ?? rateLimit ?? DEFAULT_RATE_LIMIT,
        plan: plan?.id ?? null,
        expiresAt: expiresAt ?? null,
        nowMs: clock.now(),
      });
      // The plain key is in this answer only; the store keeps its SHA-256.
      const changes = { user_id: key.user_id, name: key.name, prefix: key.prefix, permissions: key.permissions, rate_limit: key.rate_limit, plan: key.plan, expires_at: key.expires_at };
      return {
        ops: [{ op: 'put', collection: KEYS, id: key.id, data: key }, audit.entryOp(context.requestId, { action: 'key.create', target_type: 'key', target_id: key.id, changes })],
        reply: { status: 201, headers: { ...SECRET_ANSWER_HEADERS }, body: { data: { ...keyView(key, null), key: generated.key } } },
      };
    });
  }

  function listKeys(context: RequestContext): Reply {
    checkQueryNames(context.query, ['user_id', 'page', 'limit']);
    const userId = context.query.get('user_id');
    const request = readPageRequest(context.query);
    let keys = [...store.values(KEYS)];
    if (userId !== null) keys = keys.filter((key) => key.user_id === userId);
    const page = pageOf(keys.sort(byCreation), request);
    return { status: 200, body: { data: page.data.map((key) => keyView(key, deps.lastUsedAt(key.id))), pagination: page.pagination } };
  }

  async function updateKey(context: RequestContext): Promise<Reply> {
    const body = await context.readJsonBody();
    const checker = new BodyChecker(body, KEY_PATCH_FIELDS, ['id', 'user_id', 'prefix', 'key', 'created_at', 'revoked_at']);
    const name = checker.string('name', 0, 100);
    const permissions = readPermissions(checker, deps.apiRoutes);
    const { rateLimit, planId } = readLimitOrPlan(checker);
    const expiresAt = readKeyExpiry(checker, clock.now());
    checker.finish();
    requireNonEmpty(body, KEY_PATCH_FIELDS);
    return context.commit((tx) => {
      // Decided on the key as it is when the write commits: a revocation is final.
      const key = tx.get(KEYS, context.params.id!);
      if (!key) throw notFound('Key');
      assertChangeable(key);
      let changed: KeyRecord = {
        ...key,
        ...(name !== undefined ? { name } : {}),
        ...(permissions !== undefined ? { permissions } : {}),
        // A limit of the operator's own takes the key off its plan.
        ...(rateLimit !== undefined ? { rate_limit: rateLimit, plan: null } : {}),
        ...(expiresAt !== undefined ? { expires_at: expiresAt } : {}),
        updated_at: isoTime(clock.now()),
      };
      // Checked on the key after this change: a new expiry in the same request makes it usable again.
      if (planId !== undefined) {
        assertPlanChangeable(changed, clock.now());
        changed = onPlan(changed, existingPlan(tx, planId));
      }
      const changes = fieldChanges(withKeyDefaults(key), changed, KEY_AUDITED_FIELDS);
      return {
        ops: [{ op: 'put', collection: KEYS, id: changed.id, data: changed }, audit.entryOp(context.requestId, { action: 'key.update', target_type: 'key', target_id: key.id, changes })],
        reply: { status: 200, body: { data: keyView(changed, deps.lastUsedAt(changed.id)) } },
      };
    });
  }

  function revokeKey(context: RequestContext): Promise<Reply> {
    return context.commit((tx) => {
      const key = tx.get(KEYS, context.params.id!);
      if (!key) throw notFound('Key');
      if (key.revoked_at !== null) return { ops: [], reply: { status: 200, body: { data: keyView(key, deps.lastUsedAt(key.id)) } } };
      const now = isoTime(clock.now());
      const revoked: KeyRecord = { ...key, revoked_at: now, updated_at: now };
      const changes = { revoked_at: { from: null, to: now } };
      return {
        ops: [{ op: 'put', collection: KEYS, id: revoked.id, data: revoked }, audit.entryOp(context.requestId, { action: 'key.revoke', target_type: 'key', target_id: key.id, changes })],
        reply: { status: 200, body: { data: keyView(revoked, deps.lastUsedAt(revoked.id)) } },
      };
    });
  }

  /** A new secret for the same key; the current one keeps working for `grace_seconds`. */
  async function rollKey(context: RequestContext): Promise<Reply> {
    const checker = new BodyChecker(await context.readJsonBody(), ['grace_seconds']);
    const graceSeconds = readGraceSeconds(checker);
    checker.finish();
    const keyId = context.params.id!;
    return context.commit((tx) => {
      const key = tx.get(KEYS, keyId);
      if (!key) throw notFound('Key');
      assertChangeable(key);
      const secret = generateApiKey(key.prefix === 'mk_' ? 'mk' : 'live', deps.brand);
      const rolled = rolledKey(key, secret, graceSeconds, clock.now());
      const changes = { grace_seconds: graceSeconds, previous_secret_expires_at: rolled.previous_hash_expires_at, last_four: { from: key.last_four, to: rolled.last_four } };
      return {
        ops: [{ op: 'put', collection: KEYS, id: keyId, data: rolled }, audit.entryOp(context.requestId, { action: 'key.roll', target_type: 'key', target_id: keyId, changes })],
        reply: { status: 201, headers: { ...SECRET_ANSWER_HEADERS }, body: { data: rolledKeyView(rolled, secret.key, deps.lastUsedAt(keyId), clock.now()) } },
      };
    });
  }

  function stats(): Reply {
    return {
      status: 200,
      body: {
        data: {
          version: VERSION,
          uptime_seconds: Math.round((clock.now() - deps.startedAtMs) / 1000),
          users: store.size(USERS),
          keys: store.size(KEYS),
          store: store.stats(),
          ...(deps.backends ? { backends: deps.backends } : {}),
        },
      },
    };
  }

  async function compact(context: RequestContext): Promise<Reply> {
    // Recorded first, so the compacted log already holds its own entry.
    await store.write([audit.entryOp(context.requestId, { action: 'store.compact', target_type: 'store', target_id: 'log', changes: {} })]);
    const result = await store.compact();
    return { status: 200, body: { data: { bytes_before: result.bytesBefore, bytes_after: result.bytesAfter, records: result.records } } };
  }

  async function backup(): Promise<Reply> {
    const lines = await store.snapshot();
    return {
      status: 200,
      bytes: Buffer.concat(lines),
      headers: {
        'Content-Type': 'application/x-ndjson',
        'Content-Disposition': `attachment; filename="marketplace-backup-${isoTime(clock.now()).replace(/[:.]/g, '-')}.log"`,
        'Cache-Control': 'no-store',
      },
    };
  }

  return [
    { method: 'POST', pattern: '/admin/v1/users', summary: 'Create a user', handle: createUser },
    { method: 'GET', pattern: '/admin/v1/users', summary: 'List users', handle: listUsers },
    { method: 'PATCH', pattern: '/admin/v1/users/:id', summary: "Change a user's role, name, email or bio", handle: updateUser },
    { method: 'POST', pattern: '/admin/v1/keys', summary: 'Create an API key (the plain key is shown once)', handle: createKey },
    { method: 'GET', pattern: '/admin/v1/keys', summary: 'List API keys (no secrets)', handle: listKeys },
    { method: 'PATCH', pattern: '/admin/v1/keys/:id', summary: "Change a key's permissions, rate limit or name", handle: updateKey },
    { method: 'DELETE', pattern: '/admin/v1/keys/:id', summary: 'Revoke an API key', handle: revokeKey },
    { method: 'POST', pattern: '/admin/v1/keys/:id/roll', summary: 'Roll an API key: a new secret, the old one kept for a grace period', handle: rollKey },
    { method: 'GET', pattern: '/admin/v1/stats', summary: 'Store and server statistics', handle: stats },
    { method: 'POST', pattern: '/admin/v1/compact', summary: 'Compact the log now', handle: compact },
    { method: 'GET', pattern: '/admin/v1/backup', summary: 'A consistent copy of the log (JSON lines)', handle: backup },
  ];
}

/** `rate_limit` or `plan` (a plan sets the limit, so not both). */
function readLimitOrPlan(checker: BodyChecker): { rateLimit: number | undefined; planId: string | undefined } {
  const rateLimit = checker.integer('rate_limit', MIN_RATE_LIMIT, MAX_RATE_LIMIT);
  const planId = checker.string('plan', 1, 40);
  if (checker.has('rate_limit') && checker.has('plan')) checker.fail('plan', 'sets the rate limit itself: send plan or rate_limit, not both');
  return { rateLimit, planId };
}

/** A key written before plans and expiry existed reads as having neither (for audit diffs). */
function withKeyDefaults(key: KeyRecord): KeyRecord {
  return { ...key, plan: key.plan ?? null, expires_at: key.expires_at ?? null };
}
