// /v1/webhooks: a user registers, lists and removes their own webhook endpoints, reads their
// last delivery outcomes and sends one of those events again (as the portal does). The operator's
// read-only list is handlers/admin/webhooks.ts; changing, pausing, rotating and recovering one are
// the webhook-tools module's (src/modules/webhook-tools/). The rules (the ping queued with a
// registration, undelivered events dropped with a removal) are resources/webhooks.ts.

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
import { decideRedelivery, ownWebhookViews, decideWebhookRegistration, decideWebhookRemoval, ownWebhook, readWebhookRegistration, takeRedeliveryRequest } from '../../resources/webhooks.ts';

export interface WebhookRouteDeps {
  store: Store;
  clock: Clock;
  outbox: WebhookOutbox;
  /** WEBHOOK_ALLOW_PRIVATE: lets URLs name loopback and private addresses (development). */
  allowPrivate: boolean;
  /** Redeliveries per user, shared with the portal. */
  redeliveryLimiter: RateLimiter;
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
    { method: 'DELETE', pattern: '/v1/webhooks/:id', resource: 'webhooks', summary: 'Remove a webhook', handle: remove },
    { method: 'GET', pattern: '/v1/webhooks/:id/deliveries', resource: 'webhooks', summary: "A webhook's last 50 delivery outcomes", handle: deliveries },
    { method: 'POST', pattern: '/v1/webhooks/:id/deliveries/:event_id/redeliver', resource: 'webhooks', summary: 'Send one of those events again now, freshly signed', handle: redeliver },
  ];
}
