// The signed-in user's own API keys in the developer portal (contract section 20): list, create
// at least privilege within the role (at most 20 active), rename, narrow or widen within the
// role, switch to a self-service plan, revoke, roll with a grace period, and read usage. The
// secret is in the create and roll answers only. Another user's key is 404, as if it did not
// exist. Every write is audited with the user as actor, in the same store write.

import type { AuditLog } from '../../../audit/audit-log.ts';
import { decideKeyRoll, ownKey, readKeyRoll } from '../../../resources/keys.ts';
import { decideOwnKeyChange, decideOwnKeyCreate, decideOwnKeyRevoke, readOwnKeyChange, readOwnKeyCreate } from '../own-keys.ts';
import { generateApiKey } from '../../../auth/keys.ts';
import { fieldChanges, userActor } from '../../../audit/audit-log.ts';
import { actingUser } from '../../../domain/actor.ts';
import { newestFirst } from '../../../domain/order.ts';
import { KEYS } from '../../../domain/records.ts';
import { keyView, rolledKeyView } from '../../../domain/views.ts';
import { checkQueryNames, pageOf, readPageRequest } from '../../../http/lists.ts';
import { SECRET_ANSWER_HEADERS } from '../../../http/respond.ts';
import type { ApiRoute, PortalContext, PortalRoute, Reply } from '../../../http/route.ts';
import type { Store } from '../../../store/store.ts';
import { usageBody, type UsageAnswerDeps } from '../../../resources/usage.ts';

export interface PortalKeyRoutesDeps extends UsageAnswerDeps {
  store: Store;
  brand: string;
  /** The /v1 routes: permission entries are checked against them, and against the user's role. */
  apiRoutes: readonly ApiRoute[];
  audit: AuditLog;
}

export function portalKeyRoutes(deps: PortalKeyRoutesDeps): PortalRoute[] {
  const { store, clock, audit, apiRoutes } = deps;
  const lastUsedAt = (keyId: string) => deps.usage.lastUsedAt(keyId);

  function list(context: PortalContext): Reply {
    checkQueryNames(context.query, ['page', 'limit']);
    const request = readPageRequest(context.query);
    const keys = [...store.values(KEYS)].filter((key) => key.user_id === context.user.id).sort(newestFirst);
    const page = pageOf(keys, request);
    return { status: 200, body: { data: page.data.map((key) => keyView(key, lastUsedAt(key.id))), pagination: page.pagination } };
  }

  async function create(context: PortalContext): Promise<Reply> {
    const fields = readOwnKeyCreate(await context.readJsonBody(), apiRoutes, clock.now());
    const secret = generateApiKey('live', deps.brand);
    return context.commit((tx, user) => {
      const { ops, result: key } = decideOwnKeyCreate(tx, actingUser(user), { fields, secret, apiRoutes }, clock.now());
      const changes = { name: key.name, permissions: key.permissions, plan: key.plan, rate_limit: key.rate_limit, expires_at: key.expires_at };
      return {
        ops: [...ops, audit.entryOp(context.requestId, { action: 'portal.key_create', target_type: 'key', target_id: key.id, changes, actor: userActor(user.id) })],
        // The plain key is in this answer only; the store keeps its SHA-256.
        result: { status: 201, headers: { ...SECRET_ANSWER_HEADERS }, body: { data: { ...keyView(key, null), key: secret.key } } },
      };
    });
  }

  async function update(context: PortalContext): Promise<Reply> {
    const fields = readOwnKeyChange(await context.readJsonBody(), apiRoutes);
    const keyId = context.params.id!;
    return context.commit((tx, user) => {
      const { ops, result: { key, changed } } = decideOwnKeyChange(tx, actingUser(user), { keyId, fields, apiRoutes }, clock.now());
      const changes = fieldChanges({ ...key, plan: key.plan ?? null }, changed, ['name', 'permissions', 'plan', 'rate_limit']);
      return {
        ops: [...ops, audit.entryOp(context.requestId, { action: 'portal.key_update', target_type: 'key', target_id: keyId, changes, actor: userActor(user.id) })],
        result: { status: 200, body: { data: keyView(changed, lastUsedAt(keyId)) } },
      };
    });
  }

  function revoke(context: PortalContext): Promise<Reply> {
    const keyId = context.params.id!;
    return context.commit((tx, user) => {
      const { ops, result: key } = decideOwnKeyRevoke(tx, actingUser(user), { keyId }, clock.now());
      const reply: Reply = { status: 200, body: { data: keyView(key, lastUsedAt(keyId)) } };
      if (ops.length === 0) return { ops, result: reply };
      const audited = audit.entryOp(context.requestId, { action: 'portal.key_revoke', target_type: 'key', target_id: keyId, changes: { revoked_at: { from: null, to: key.revoked_at } }, actor: userActor(user.id) });
      return { ops: [...ops, audited], result: reply };
    });
  }
  async function roll(context: PortalContext): Promise<Reply> {
    const { graceSeconds } = readKeyRoll(await context.readJsonBody());
    const keyId = context.params.id!;
    return context.commit((tx, user) => {
      const { ops, result: { key, rolled, secret } } = decideKeyRoll(tx, actingUser(user), { keyId, brand: deps.brand, graceSeconds }, clock.now());
      const changes = { grace_seconds: graceSeconds, previous_secret_expires_at: rolled.previous_hash_expires_at, last_four: { from: key.last_four, to: rolled.last_four } };
      return {
        ops: [...ops, audit.entryOp(context.requestId, { action: 'portal.key_roll', target_type: 'key', target_id: keyId, changes, actor: userActor(user.id) })],
        result: { status: 201, headers: { ...SECRET_ANSWER_HEADERS }, body: { data: rolledKeyView(rolled, secret.key, lastUsedAt(keyId), clock.now()) } },
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
