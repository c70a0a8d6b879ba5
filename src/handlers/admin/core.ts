// The operator API under /admin/v1 (contract section 2): users and keys come to exist here,
// plus store stats, compaction and backups. The operator token is checked before any of it.
// The rules are resources/profile.ts (users) and resources/keys.ts; every write commits its
// audit entry in the same store write as the change.

import type { KeyPlans } from '../../analytics/quota-counters.ts';
import { fieldChanges, type AuditLog } from '../../audit/audit-log.ts';
import { decideKeyChange, decideKeyCreate, decideKeyRevoke, decideKeyRoll, readKeyRoll, readKeyChange, readKeyCreate } from '../../resources/keys.ts';
import { generateApiKey } from '../../auth/keys.ts';
import type { PermissionRoute } from '../../auth/permissions.ts';
import type { Clock } from '../../clock.ts';
import { isoTime } from '../../clock.ts';
import { OPERATOR } from '../../domain/actor.ts';
import { byCreation } from '../../domain/order.ts';
import { KEYS, USERS, type KeyRecord } from '../../domain/records.ts';
import { operatorUser, keyView, rolledKeyView } from '../../domain/views.ts';
import { badRequest } from '../../domain/errors.ts';
import { checkQueryNames, pageOf, readPageRequest } from '../../http/lists.ts';
import { SECRET_ANSWER_HEADERS } from '../../http/respond.ts';
import type { KeylessContext, AdminRoute, Reply, RequestContext } from '../../http/route.ts';
import type { Store } from '../../store/store.ts';
import type { EventOutbox } from '../../domain/events.ts';
import { decideUserChange, decideUserCreate, OPERATOR_USER_FIELDS, readUserChange, readUserCreate } from '../../resources/profile.ts';
import { VERSION } from '../../version.ts';

export interface CoreAdminRoutesDeps {
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
  /** The plans a key may be put on (the plans module's); null: a key's own rate_limit only. */
  plans: () => KeyPlans | null;
}


const KEY_AUDITED_FIELDS = ['permissions', 'rate_limit', 'plan', 'expires_at', 'name'] as const;

export function coreAdminRoutes(deps: CoreAdminRoutesDeps): AdminRoute[] {
  const { store, clock, audit } = deps;
  async function createUser(context: RequestContext): Promise<Reply> {
    const fields = readUserCreate(await context.readJsonBody());
    return context.commit((tx) => {
      const { ops, result: user } = decideUserCreate(tx, OPERATOR, { fields }, clock.now());
      const changes = { name: user.name, email: user.email, role: user.role, bio: user.bio };
      return {
        ops: [...ops, audit.entryOp(context.requestId, { action: 'user.create', target_type: 'user', target_id: user.id, changes })],
        result: { status: 201, body: { data: operatorUser(user, tx) } },
      };
    });
  }

  function listUsers(context: RequestContext): Reply {
    checkQueryNames(context.query, ['page', 'limit', 'q']);
    const request = readPageRequest(context.query);
    const search = readUserSearch(context.query);
    const users = [...store.values(USERS)].filter((user) => search === null || user.name.toLowerCase().includes(search) || user.email.toLowerCase().includes(search));
    const page = pageOf(users.sort(byCreation), request);
    return { status: 200, body: { data: page.data.map((user) => operatorUser(user, store)), pagination: page.pagination } };
  }

  async function updateUser(context: RequestContext): Promise<Reply> {
    const fields = readUserChange(await context.readJsonBody());
    return context.commit((tx) => {
      const { ops, result: { user, changed, narrowed } } = decideUserChange(tx, OPERATOR, { userId: context.params.id!, fields, apiRoutes: deps.apiRoutes, outbox: deps.outbox }, clock.now());
      const changes = fieldChanges(user, changed, OPERATOR_USER_FIELDS);
      // Each narrowing audited on its key, then the change on the user.
      const keyAudits = narrowed.map(({ before, after }) =>
        audit.entryOp(context.requestId, {
          action: 'key.narrow',
          target_type: 'key',
          target_id: after.id,
          changes: { permissions: { from: before.permissions, to: after.permissions }, role: { from: user.role, to: changed.role } },
        }),
      );
      return {
        ops: [...ops, ...keyAudits, audit.entryOp(context.requestId, { action: 'user.update', target_type: 'user', target_id: user.id, changes })],
        result: { status: 200, body: { data: operatorUser(changed, tx) } },
      };
    });
  }

  async function createKey(context: RequestContext): Promise<Reply> {
    const fields = readKeyCreate(await context.readJsonBody(), deps.apiRoutes, clock.now());
    const generated = generateApiKey(fields.prefixKind!, deps.brand);
    return context.commit((tx) => {
      const { ops, result: key } = decideKeyCreate(tx, OPERATOR, { fields, secret: generated, plans: deps.plans() }, clock.now());
      const changes = { user_id: key.user_id, name: key.name, prefix: key.prefix, permissions: key.permissions, rate_limit: key.rate_limit, plan: key.plan, expires_at: key.expires_at };
      return {
        ops: [...ops, audit.entryOp(context.requestId, { action: 'key.create', target_type: 'key', target_id: key.id, changes })],
        // The plain key is in this answer only; the store keeps its SHA-256.
        result: { status: 201, headers: { ...SECRET_ANSWER_HEADERS }, body: { data: { ...keyView(key, null), key: generated.key } } },
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
    const fields = readKeyChange(await context.readJsonBody(), deps.apiRoutes, clock.now());
    return context.commit((tx) => {
      const { ops, result: { key, changed } } = decideKeyChange(tx, OPERATOR, { keyId: context.params.id!, fields, plans: deps.plans() }, clock.now());
      const changes = fieldChanges(withKeyDefaults(key), changed, KEY_AUDITED_FIELDS);
      return {
        ops: [...ops, audit.entryOp(context.requestId, { action: 'key.update', target_type: 'key', target_id: key.id, changes })],
        result: { status: 200, body: { data: keyView(changed, deps.lastUsedAt(changed.id)) } },
      };
    });
  }

  function revokeKey(context: RequestContext): Promise<Reply> {
    return context.commit((tx) => {
      const { ops, result: revoked } = decideKeyRevoke(tx, OPERATOR, { keyId: context.params.id! }, clock.now());
      const reply: Reply = { status: 200, body: { data: keyView(revoked, deps.lastUsedAt(revoked.id)) } };
      if (ops.length === 0) return { ops, result: reply };
      const changes = { revoked_at: { from: null, to: revoked.revoked_at } };
      return { ops: [...ops, audit.entryOp(context.requestId, { action: 'key.revoke', target_type: 'key', target_id: revoked.id, changes })], result: reply };
    });
  }

  /** A new secret for the same key; the current one keeps working for `grace_seconds`. */
  async function rollKey(context: RequestContext): Promise<Reply> {
    const { graceSeconds } = readKeyRoll(await context.readJsonBody());
    const keyId = context.params.id!;
    return context.commit((tx) => {
      const { ops, result: { key, rolled, secret } } = decideKeyRoll(tx, OPERATOR, { keyId, brand: deps.brand, graceSeconds }, clock.now());
      const changes = { grace_seconds: graceSeconds, previous_secret_expires_at: rolled.previous_hash_expires_at, last_four: { from: key.last_four, to: rolled.last_four } };
      return {
        ops: [...ops, audit.entryOp(context.requestId, { action: 'key.roll', target_type: 'key', target_id: keyId, changes })],
        result: { status: 201, headers: { ...SECRET_ANSWER_HEADERS }, body: { data: rolledKeyView(rolled, secret.key, deps.lastUsedAt(keyId), clock.now()) } },
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

  async function compact(context: KeylessContext): Promise<Reply> {
    // Recorded first, so the compacted log already holds its own entry.
    await context.commit(() => ({ ops: [audit.entryOp(context.requestId, { action: 'store.compact', target_type: 'store', target_id: 'log', changes: {} })], result: undefined }));
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

/** The longest `q` of GET /admin/v1/users. */
const MAX_USER_SEARCH = 200;

/** `q` of GET /admin/v1/users, lower-cased (null when absent or blank): part of a name or email. */
function readUserSearch(query: URLSearchParams): string | null {
  const q = query.get('q');
  if (q === null || q.trim() === '') return null;
  if (q.length > MAX_USER_SEARCH) throw badRequest(`Query parameter q must be at most ${MAX_USER_SEARCH} characters.`, { q: `must be at most ${MAX_USER_SEARCH} characters` });
  return q.trim().normalize('NFC').toLowerCase();
}

/** A key written before plans and expiry existed reads as having neither (for audit diffs). */
function withKeyDefaults(key: KeyRecord): KeyRecord {
  return { ...key, plan: key.plan ?? null, expires_at: key.expires_at ?? null };
}
