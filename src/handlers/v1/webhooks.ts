// /v1/webhooks: a user registers, lists, changes (pauses, resumes) and removes their own webhook
// endpoints, rotates a secret, reads their last delivery outcomes, sends one of those events
// again or recovers every one not delivered since a time (as the portal does). The operator's
// read-only list is handlers/admin/webhooks.ts. The rules (the ping queued with a registration,
// undelivered events dropped with a removal) are resources/webhooks.ts.

import type { Clock } from '../../clock.ts';
import { actingUser } from '../../domain/actor.ts';
import { checkQueryNames, pageOf, readPageRequest } from '../../http/lists.ts';
import type { ApiRoute, KeyContext, Reply } from '../../http/route.ts';
import { SECRET_ANSWER_HEADERS } from '../../http/respond.ts';
import type { Store } from '../../store/store.ts';
import type { WebhookOutbox } from '../../webhooks/outbox.ts';
import { webhookView } from '../../domain/webhook-records.ts';
import { deliveryOutcomes } from '../../webhooks/redelivery.ts';
import type { RateLimiter } from '../../limits/rate-limiter.ts';
import { isoTime } from '../../clock.ts';
import { userActor, type AuditLog } from '../../audit/audit-log.ts';
import { decideRecovery, decideSecretRotation, decideWebhookUpdate, readRecovery, readSecretRotation, readWebhookPatch } from '../../resources/webhooks.ts';
import { decideRedelivery, ownWebhookViews, decideWebhookRegistration, decideWebhookRemoval, ownWebhook, readWebhookRegistration, takeRedeliveryRequest } from '../../resources/webhooks.ts';

export interface WebhookRouteDeps {
  store: Store;
  clock: Clock;
  outbox: WebhookOutbox;
  /** WEBHOOK_ALLOW_PRIVATE: lets URLs name loopback and private addresses (development). */
  allowPrivate: boolean;
  /** Redeliveries per user, shared with the portal. */
  redeliveryLimiter: RateLimiter;
  /** Where changes to a webhook are recorded, with its owner as actor. */
  audit: AuditLog;
  /** EVENT_RETENTION_DAYS: how far back a recovery's `since` may reach. */
  eventRetentionDays: number;
}

export function webhookRoutes(deps: WebhookRouteDeps): ApiRoute[] {
  const { store, clock, outbox, allowPrivate } = deps;

  function list(context: KeyContext): Reply {
    checkQueryNames(context.query, ['page', 'limit']);
    const request = readPageRequest(context.query);
    const webhooks = ownWebhookViews(outbox, context.user.id);
    return { status: 200, body: pageOf(webhooks, request) };
  }

  async function register(context: KeyContext): Promise<Reply> {
    const fields = readWebhookRegistration(await context.readJsonBody(), allowPrivate);
    return context.commit((tx, { user }) => {
      const { ops, result: webhook } = decideWebhookRegistration(tx, actingUser(user), { fields, outbox }, clock.now());
      // The only answer that ever carries the secret.
      return { ops, result: { status: 201, headers: { ...SECRET_ANSWER_HEADERS }, body: { data: { ...webhookView(webhook), secret: webhook.secret } } } };
    });
  }

  function remove(context: KeyContext): Promise<Reply> {
    const webhookId = context.params.id ?? '';
    // Decided when it commits, so a delivery outcome written meanwhile cannot bring it back.
    return context.commit((tx, { user }) => {
      const { ops, result: webhook } = decideWebhookRemoval(tx, actingUser(user), { webhookId }, clock.now());
      return { ops, result: { status: 200, body: { data: webhookView(webhook) } } };
    });
  }

  function deliveries(context: KeyContext): Reply {
    checkQueryNames(context.query, []);
    const webhook = ownWebhook(store, context.params.id!, context.user.id);
    return { status: 200, body: { data: deliveryOutcomes(store, webhook.id) } };
  }

  async function update(context: KeyContext): Promise<Reply> {
    const webhookId = context.params.id!;
    const patch = readWebhookPatch(await context.readJsonBody(), allowPrivate);
    return context.commit((tx, { user }) => {
      const { ops, webhook, changes } = decideWebhookUpdate(tx, user.id, webhookId, patch, clock.now());
      const entry = deps.audit.entryOp(context.requestId, { action: 'webhook.update', target_type: 'webhook', target_id: webhook.id, changes, actor: userActor(user.id) });
      return { ops: [...ops, entry], result: { status: 200, body: { data: webhookView(webhook) } } };
    });
  }

  async function rotateSecret(context: KeyContext): Promise<Reply> {
    const webhookId = context.params.id!;
    const { graceSeconds } = readSecretRotation(await context.readJsonBody());
    return context.commit((tx, { user }) => {
      const { ops, webhook, previousExpiresAt } = decideSecretRotation(tx, user.id, webhookId, graceSeconds, clock.now());
      const entry = deps.audit.entryOp(context.requestId, { action: 'webhook.rotate_secret', target_type: 'webhook', target_id: webhook.id, changes: { grace_seconds: graceSeconds }, actor: userActor(user.id) });
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
      const { ops, webhook, eventIds } = decideRecovery(tx, user.id, webhookId, sinceMs, outbox);
      const entry = deps.audit.entryOp(context.requestId, { action: 'webhook.recover', target_type: 'webhook', target_id: webhook.id, changes: { since: isoTime(sinceMs), events: eventIds.length }, actor: userActor(user.id) });
      return { ops: [...ops, entry], result: { status: 202, body: { events: eventIds.length } } };
    });
  }

  async function redeliver(context: KeyContext): Promise<Reply> {
    const webhookId = context.params.id!;
    const eventId = context.params.event_id!;
    await takeRedeliveryRequest(store, deps.redeliveryLimiter, webhookId, context.user.id, eventId);
    return context.commit((tx, { user }) => {
      const { ops, result: queued } = decideRedelivery(tx, actingUser(user), { webhookId, eventId, outbox }, clock.now());
      return { ops, result: { status: 202, body: { data: queued } } };
    });
  }

  return [
    { method: 'GET', pattern: '/v1/webhooks', resource: 'webhooks', summary: 'List your webhooks', handle: list },
    { method: 'POST', pattern: '/v1/webhooks', resource: 'webhooks', summary: 'Register a webhook', handle: register },
    { method: 'PATCH', pattern: '/v1/webhooks/:id', resource: 'webhooks', summary: 'Change, pause or resume a webhook', handle: update },
    { method: 'DELETE', pattern: '/v1/webhooks/:id', resource: 'webhooks', summary: 'Remove a webhook', handle: remove },
    { method: 'POST', pattern: '/v1/webhooks/:id/rotate-secret', resource: 'webhooks', summary: "Rotate a webhook's secret, the old one signing too for a grace period", handle: rotateSecret },
    { method: 'POST', pattern: '/v1/webhooks/:id/recover', resource: 'webhooks', summary: 'Send again every event not delivered since a time', handle: recover },
    { method: 'GET', pattern: '/v1/webhooks/:id/deliveries', resource: 'webhooks', summary: "A webhook's last 50 delivery outcomes", handle: deliveries },
    { method: 'POST', pattern: '/v1/webhooks/:id/deliveries/:event_id/redeliver', resource: 'webhooks', summary: 'Send one of those events again now, freshly signed', handle: redeliver },
  ];
}
