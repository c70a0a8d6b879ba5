// The signed-in user's webhooks in the developer portal: the same list, registration rules and
// removal as /v1/webhooks (resources/webhooks.ts), plus a test `ping` sent now —
// queued like any event, so it is signed and retried exactly like the others — the last 50
// delivery outcomes (never a body), and sending one of them again (redelivery, at most 60 per
// hour). Another user's webhook is 404. Audited with the user as actor.

import type { AuditLog } from '../../../audit/audit-log.ts';
import { userActor } from '../../../audit/audit-log.ts';
import { actingUser } from '../../../domain/actor.ts';
import type { Clock } from '../../../clock.ts';
import type { RateLimiter } from '../../../limits/rate-limiter.ts';
import { deliveryOutcomes } from '../../../webhooks/redelivery.ts';
import { checkQueryNames, pageOf, readPageRequest } from '../../../http/lists.ts';
import { SECRET_ANSWER_HEADERS } from '../../../http/respond.ts';
import type { PortalContext, PortalRoute, Reply } from '../../../http/route.ts';
import type { Store } from '../../../store/store.ts';
import type { WebhookOutbox } from '../../../webhooks/outbox.ts';
import { webhookView } from '../../../domain/webhook-records.ts';
import { isoTime } from '../../../clock.ts';
import { decideRecovery, decideSecretRotation, decideWebhookTestPing, decideWebhookUpdate, readRecovery, readSecretRotation, readWebhookPatch } from '../../../resources/running-webhooks.ts';
import { decideRedelivery, ownWebhookViews, decideWebhookRegistration, decideWebhookRemoval, ownWebhook, readWebhookRegistration, takeRedeliveryRequest } from '../../../resources/webhooks.ts';

export interface PortalWebhookRoutesDeps {
  store: Store;
  clock: Clock;
  outbox: WebhookOutbox;
  audit: AuditLog;
  /** WEBHOOK_ALLOW_PRIVATE, as for /v1/webhooks. */
  allowPrivate: boolean;
  /** Redeliveries per user, shared with /v1. */
  redeliveryLimiter: RateLimiter;
  /** EVENT_RETENTION_DAYS: how far back a recovery's `since` may reach. */
  eventRetentionDays: number;
}

export function portalWebhookRoutes(deps: PortalWebhookRoutesDeps): PortalRoute[] {
  const { store, clock, outbox, audit } = deps;

  function list(context: PortalContext): Reply {
    checkQueryNames(context.query, ['page', 'limit']);
    const webhooks = ownWebhookViews(outbox, context.user.id);
    return { status: 200, body: pageOf(webhooks, readPageRequest(context.query)) };
  }

  async function register(context: PortalContext): Promise<Reply> {
    const fields = readWebhookRegistration(await context.readJsonBody(), deps.allowPrivate);
    return context.commit((tx, user) => {
      const { ops, result: webhook } = decideWebhookRegistration(tx, actingUser(user), { fields, outbox }, clock.now());
      const changes = { url: webhook.url, events: webhook.events, description: webhook.description };
      return {
        ops: [...ops, audit.entryOp(context.requestId, { action: 'portal.webhook_create', target_type: 'webhook', target_id: webhook.id, changes, actor: userActor(user.id) })],
        // The only answer that ever carries the secret.
        result: { status: 201, headers: { ...SECRET_ANSWER_HEADERS }, body: { data: { ...webhookView(webhook), secret: webhook.secret } } },
      };
    });
  }

  function remove(context: PortalContext): Promise<Reply> {
    const webhookId = context.params.id!;
    return context.commit((tx, user) => {
      const { ops, result: webhook } = decideWebhookRemoval(tx, actingUser(user), { webhookId }, clock.now());
      return {
        ops: [...ops, audit.entryOp(context.requestId, { action: 'portal.webhook_delete', target_type: 'webhook', target_id: webhook.id, changes: { url: webhook.url }, actor: userActor(user.id) })],
        result: { status: 200, body: { data: webhookView(webhook) } },
      };
    });
  }

  /** Queues a `ping` due now; the dispatcher sends it signed, like every event. */
  function test(context: PortalContext): Promise<Reply> {
    const webhookId = context.params.id!;
    return context.commit((tx, user) => {
      const { ops, result: { webhook, eventId } } = decideWebhookTestPing(tx, actingUser(user), { webhookId, outbox }, clock.now());
      return {
        ops: [...ops, audit.entryOp(context.requestId, { action: 'portal.webhook_test', target_type: 'webhook', target_id: webhook.id, changes: { event_id: eventId }, actor: userActor(user.id) })],
        result: { status: 202, body: { data: { webhook_id: webhook.id, event_id: eventId, type: 'ping', status: 'pending' } } },
      };
    });
  }

  function deliveries(context: PortalContext): Reply {
    checkQueryNames(context.query, []);
    const webhook = ownWebhook(store, context.params.id!, context.user.id);
    return { status: 200, body: { data: deliveryOutcomes(store, webhook.id) } };
  }

  async function update(context: PortalContext): Promise<Reply> {
    const webhookId = context.params.id!;
    const patch = readWebhookPatch(await context.readJsonBody(), deps.allowPrivate);
    return context.commit((tx, user) => {
      const { ops, result: { webhook, changes } } = decideWebhookUpdate(tx, actingUser(user), { webhookId, patch }, clock.now());
      return {
        ops: [...ops, audit.entryOp(context.requestId, { action: 'portal.webhook_update', target_type: 'webhook', target_id: webhook.id, changes, actor: userActor(user.id) })],
        result: { status: 200, body: { data: webhookView(webhook) } },
      };
    });
  }

  async function rotateSecret(context: PortalContext): Promise<Reply> {
    const webhookId = context.params.id!;
    const { graceSeconds } = readSecretRotation(await context.readJsonBody());
    return context.commit((tx, user) => {
      const { ops, result: { webhook, previousExpiresAt } } = decideSecretRotation(tx, actingUser(user), { webhookId, graceSeconds }, clock.now());
      return {
        ops: [...ops, audit.entryOp(context.requestId, { action: 'portal.webhook_rotate_secret', target_type: 'webhook', target_id: webhook.id, changes: { grace_seconds: graceSeconds }, actor: userActor(user.id) })],
        // The only answer that carries the new secret.
        result: { status: 201, headers: { ...SECRET_ANSWER_HEADERS }, body: { data: { secret: webhook.secret, previous_secret_expires_at: previousExpiresAt } } },
      };
    });
  }

  async function recover(context: PortalContext): Promise<Reply> {
    const webhookId = context.params.id!;
    const { sinceMs } = readRecovery(await context.readJsonBody(), clock.now(), deps.eventRetentionDays);
    await takeRedeliveryRequest(store, deps.redeliveryLimiter, webhookId, context.user.id);
    return context.commit((tx, user) => {
      const { ops, result: { webhook, eventIds } } = decideRecovery(tx, actingUser(user), { webhookId, sinceMs, outbox }, clock.now());
      return {
        ops: [...ops, audit.entryOp(context.requestId, { action: 'portal.webhook_recover', target_type: 'webhook', target_id: webhook.id, changes: { since: isoTime(sinceMs), events: eventIds.length }, actor: userActor(user.id) })],
        result: { status: 202, body: { events: eventIds.length } },
      };
    });
  }

  async function redeliver(context: PortalContext): Promise<Reply> {
    const webhookId = context.params.id!;
    const eventId = context.params.event_id!;
    await takeRedeliveryRequest(store, deps.redeliveryLimiter, webhookId, context.user.id, eventId);
    return context.commit((tx, user) => {
      const { ops, result: queued } = decideRedelivery(tx, actingUser(user), { webhookId, eventId, outbox }, clock.now());
      return {
        ops: [...ops, audit.entryOp(context.requestId, { action: 'portal.webhook_redeliver', target_type: 'webhook', target_id: webhookId, changes: { event_id: eventId }, actor: userActor(user.id) })],
        result: { status: 202, body: { data: queued } },
      };
    });
  }

  return [
    { method: 'GET', pattern: '/portal/v1/webhooks', summary: 'Your webhooks', handle: list },
    { method: 'POST', pattern: '/portal/v1/webhooks', summary: 'Register a webhook (the secret is shown once)', handle: register },
    { method: 'PATCH', pattern: '/portal/v1/webhooks/:id', summary: 'Change, pause or resume a webhook', handle: update },
    { method: 'DELETE', pattern: '/portal/v1/webhooks/:id', summary: 'Remove a webhook', handle: remove },
    { method: 'POST', pattern: '/portal/v1/webhooks/:id/rotate-secret', summary: "Rotate a webhook's secret (the new one is shown once)", handle: rotateSecret },
    { method: 'POST', pattern: '/portal/v1/webhooks/:id/recover', summary: 'Send again every event not delivered since a time', handle: recover },
    { method: 'POST', pattern: '/portal/v1/webhooks/:id/test', summary: 'Send a signed ping event now', handle: test },
    { method: 'GET', pattern: '/portal/v1/webhooks/:id/deliveries', summary: 'The last 50 delivery outcomes, newest first', handle: deliveries },
    { method: 'POST', pattern: '/portal/v1/webhooks/:id/deliveries/:event_id/redeliver', summary: 'Send one of those events again now, freshly signed', handle: redeliver },
  ];
}
