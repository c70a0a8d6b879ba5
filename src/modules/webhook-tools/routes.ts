// /v1/webhooks/:id, running a webhook (contract section 23): change it (pause or resume with
// `enabled`), rotate its secret with a grace for the old one, and send again every event not
// delivered since a time. Each is audited with the owner as actor. The rules are
// resources/running-webhooks.ts, which the portal's webhook page calls too.

import type { AuditLog } from '../../audit/audit-log.ts';
import { userActor } from '../../audit/audit-log.ts';
import type { Clock } from '../../clock.ts';
import { isoTime } from '../../clock.ts';
import { actingUser } from '../../domain/actor.ts';
import { webhookView } from '../../domain/webhook-records.ts';
import { SECRET_ANSWER_HEADERS } from '../../http/respond.ts';
import type { ApiRoute, KeyContext, Reply } from '../../http/route.ts';
import type { RateLimiter } from '../../limits/rate-limiter.ts';
import { decideRecovery, decideSecretRotation, decideWebhookUpdate, readRecovery, readSecretRotation, readWebhookPatch } from '../../resources/running-webhooks.ts';
import { takeRedeliveryRequest } from '../../resources/webhooks.ts';
import type { Store } from '../../store/store.ts';
import type { WebhookOutbox } from '../../webhooks/outbox.ts';

export interface WebhookToolRouteDeps {
  store: Store;
  clock: Clock;
  outbox: WebhookOutbox;
  /** WEBHOOK_ALLOW_PRIVATE: lets URLs name loopback and private addresses (development). */
  allowPrivate: boolean;
  /** Redeliveries per user, shared with the portal: a recovery takes one. */
  redeliveryLimiter: RateLimiter;
  /** Where changes to a webhook are recorded, with its owner as actor. */
  audit: AuditLog;
  /** EVENT_RETENTION_DAYS: how far back a recovery's `since` may reach. */
  eventRetentionDays: number;
}

/** PATCH /v1/webhooks/:id, POST /v1/webhooks/:id/rotate-secret and POST /v1/webhooks/:id/recover. */
export function webhookToolRoutes(deps: WebhookToolRouteDeps): ApiRoute[] {
  const { store, clock, outbox, allowPrivate, audit } = deps;

  async function update(context: KeyContext): Promise<Reply> {
    const webhookId = context.params.id!;
    const patch = readWebhookPatch(await context.readJsonBody(), allowPrivate);
    return context.commit((tx, { user }) => {
      const { ops, result: { webhook, changes } } = decideWebhookUpdate(tx, actingUser(user), { webhookId, patch }, clock.now());
      const entry = audit.entryOp(context.requestId, { action: 'webhook.update', target_type: 'webhook', target_id: webhook.id, changes, actor: userActor(user.id) });
      return { ops: [...ops, entry], result: { status: 200, body: { data: webhookView(webhook) } } };
    });
  }

  async function rotateSecret(context: KeyContext): Promise<Reply> {
    const webhookId = context.params.id!;
    const { graceSeconds } = readSecretRotation(await context.readJsonBody());
    return context.commit((tx, { user }) => {
      const { ops, result: { webhook, previousExpiresAt } } = decideSecretRotation(tx, actingUser(user), { webhookId, graceSeconds }, clock.now());
      const entry = audit.entryOp(context.requestId, { action: 'webhook.rotate_secret', target_type: 'webhook', target_id: webhook.id, changes: { grace_seconds: graceSeconds }, actor: userActor(user.id) });
      // The only answer that carries the new secret.
      return { ops: [...ops, entry], result: { status: 201, headers: { ...SECRET_ANSWER_HEADERS }, body: { data: { secret: webhook.secret, previous_secret_expires_at: previousExpiresAt } } } };
    });
  }

  async function recover(context: KeyContext): Promise<Reply> {
    const webhookId = context.params.id!;
    const { sinceMs } = readRecovery(await context.readJsonBody(), clock.now(), deps.eventRetentionDays);
    // One redelivery turn for the whole recovery, taken once it is known to be possible.
    await takeRedeliveryRequest(store, deps.redeliveryLimiter, webhookId, context.user.id);
    return context.commit((tx, { user }) => {
      const { ops, result: { webhook, eventIds } } = decideRecovery(tx, actingUser(user), { webhookId, sinceMs, outbox }, clock.now());
      const entry = audit.entryOp(context.requestId, { action: 'webhook.recover', target_type: 'webhook', target_id: webhook.id, changes: { since: isoTime(sinceMs), events: eventIds.length }, actor: userActor(user.id) });
      return { ops: [...ops, entry], result: { status: 202, body: { events: eventIds.length } } };
    });
  }

  return [
    { method: 'PATCH', pattern: '/v1/webhooks/:id', resource: 'webhooks', summary: 'Change, pause or resume a webhook', handle: update },
    { method: 'POST', pattern: '/v1/webhooks/:id/rotate-secret', resource: 'webhooks', summary: "Rotate a webhook's secret, the old one signing too for a grace period", handle: rotateSecret },
    { method: 'POST', pattern: '/v1/webhooks/:id/recover', resource: 'webhooks', summary: 'Send again every event not delivered since a time', handle: recover },
  ];
}
