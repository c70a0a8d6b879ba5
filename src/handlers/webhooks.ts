// /v1/webhooks: a user registers, lists and removes their own webhook endpoints, reads their
// last delivery outcomes and sends one of those events again (as the portal does); and
// /admin/v1/webhooks, the operator's read-only list for the dashboard. Registration queues the
// `ping` in the same write; deleting a webhook drops its undelivered events with it.

import { newestFirst } from '../domain/order.ts';
import type { Clock } from '../clock.ts';
import { isoTime } from '../clock.ts';
import { newId } from '../domain/ids.ts';
import { DELIVERIES, WEBHOOK_TARGETS, WEBHOOKS } from '../domain/records.ts';
import { badRequest, conflict, notFound } from '../domain/errors.ts';
import { checkQueryNames, pageOf, readPageRequest } from '../http/lists.ts';
import type { ApiRoute, KeyContext, OperatorRoute, Reply, RequestContext } from '../http/route.ts';
import { BodyChecker } from '../http/validation.ts';
import { SECRET_ANSWER_HEADERS } from '../http/respond.ts';
import type { WriteOp } from '../store/format.ts';
import type { Store, Transaction } from '../store/store.ts';
import { validateWebhookUrl } from '../webhooks/address-guard.ts';
import { EVENT_TYPES } from '../domain/events.ts';
import type { EventType } from '../domain/events.ts';
import { targetsChangedOp, type WebhookOutbox } from '../webhooks/outbox.ts';
import { operatorWebhookView, webhookView } from '../domain/webhook-records.ts';
import type { WebhookRecord } from '../domain/webhook-records.ts';
import { generateWebhookSecret } from '../webhooks/signing.ts';
import { deliveryOutcomes, redeliveryOps, takeRedeliveryTurn } from '../webhooks/redelivery.ts';
import { outcomeRemovalOps } from '../webhooks/outcome-log.ts';
import type { RateLimiter } from '../limits/rate-limiter.ts';
import type { RecordReader } from '../store/collections.ts';

export const MAX_WEBHOOKS_PER_USER = 20;
const MAX_URL_LENGTH = 2048;
const MAX_DESCRIPTION_LENGTH = 500;
const WRITABLE_FIELDS = ['url', 'events', 'description'] as const;
const READ_ONLY_FIELDS = ['id', 'secret', 'active', 'created_at', 'last_delivery', 'user_id'] as const;

export interface WebhookRouteDeps {
  store: Store;
  clock: Clock;
  outbox: WebhookOutbox;
  /** WEBHOOK_ALLOW_PRIVATE: lets URLs name loopback and private addresses (development). */
  allowPrivate: boolean;
  /** Redeliveries per user, shared with the portal. */
  redeliveryLimiter: RateLimiter;
}

function readUrl(checker: BodyChecker, allowPrivate: boolean): string | undefined {
  const raw = checker.string('url', 1, MAX_URL_LENGTH);
  if (raw === undefined) return undefined;
  const checked = validateWebhookUrl(raw, allowPrivate);
  if (!checked.ok) return checker.fail('url', `is refused: ${checked.reason}`);
  // Stored as parsed, so what the owner sees is what will be dialled.
  const normalised = checked.url.href;
  if (normalised.length > MAX_URL_LENGTH) return checker.fail('url', `must be at most ${MAX_URL_LENGTH} characters`);
  return normalised;
}

function readEvents(checker: BodyChecker): EventType[] | undefined {
  if (!checker.has('events')) return [...EVENT_TYPES];
  const value = checker.value('events');
  const allowed = EVENT_TYPES.join(', ');
  if (!Array.isArray(value) || value.length === 0) {
    return checker.fail('events', `must be a non-empty array of event kinds (${allowed})`);
  }
  const events: EventType[] = [];
  for (const item of value) {
    if (typeof item !== 'string' || !(EVENT_TYPES as readonly string[]).includes(item)) {
      return checker.fail('events', `holds ${JSON.stringify(item)}, which is not an event kind (allowed: ${allowed})`);
    }
    if (events.includes(item as EventType)) return checker.fail('events', `lists "${item}" more than once`);
    events.push(item as EventType);
  }
  return events;
}

/** A webhook to register, as checked from a request body (the same rules under /v1 and the portal). */
export interface WebhookRegistration {
  url: string;
  events: EventType[];
  description: string;
}

/** Reads and checks a registration body; throws one 400 listing every problem. */
export function readWebhookRegistration(body: Record<string, unknown>, allowPrivate: boolean): WebhookRegistration {
  const checker = new BodyChecker(body, WRITABLE_FIELDS, READ_ONLY_FIELDS);
  checker.requireFields(['url']);
  const url = readUrl(checker, allowPrivate);
  const events = readEvents(checker);
  const description = checker.string('description', 0, MAX_DESCRIPTION_LENGTH) ?? '';
  checker.finish();
  return { url: url!, events: events!, description };
}

/**
 * The ops registering `fields` for `userId` (the webhook, its owner's targets, its ping), decided
 * on the user's targets record, which every registration and removal rewrites: two
 * registrations at once are decided one after the other, so the cap holds.
 */
export function registrationOps(tx: Transaction, userId: string, fields: WebhookRegistration, deps: { clock: Clock; outbox: WebhookOutbox }): { ops: WriteOp[]; webhook: WebhookRecord } {
  tx.get(WEBHOOK_TARGETS, userId);
  if (deps.outbox.webhooksOf(userId).length >= MAX_WEBHOOKS_PER_USER) {
    throw conflict(`You already have ${MAX_WEBHOOKS_PER_USER} webhooks, the most allowed. Delete one before registering another.`);
  }
  const createdAt = isoTime(deps.clock.now());
  const webhook: WebhookRecord = {
    id: newId('wh'),
    user_id: userId,
    url: fields.url,
    events: fields.events,
    description: fields.description,
    active: true,
    secret: generateWebhookSecret(),
    created_at: createdAt,
    updated_at: createdAt,
    last_delivery: null,
  };
  const ops: WriteOp[] = [{ op: 'put', collection: WEBHOOKS, id: webhook.id, data: webhook }, targetsChangedOp(userId, createdAt), ...deps.outbox.pingOps(tx, webhook)];
  return { ops, webhook };
}

/** The ops removing the user's webhook `webhookId` with its pending deliveries and outcome log; 404 for anyone else's. */
export function removalOps(tx: Transaction, userId: string, webhookId: string, now: string): { ops: WriteOp[]; webhook: WebhookRecord } {
  const webhook = tx.get(WEBHOOKS, webhookId);
  // Another user's webhook is answered exactly like a missing one: its existence is not theirs to learn.
  if (webhook === undefined || webhook.user_id !== userId) throw notFound('Webhook');
  const ops: WriteOp[] = [{ op: 'del', collection: WEBHOOKS, id: webhook.id }, targetsChangedOp(userId, now)];
  ops.push(...outcomeRemovalOps(tx, webhook.id));
  for (const delivery of tx.values(DELIVERIES)) {
    if (delivery.webhook_id === webhook.id) ops.push({ op: 'del', collection: DELIVERIES, id: delivery.id });
  }
  return { ops, webhook };
}

/** The user's own webhook; anyone else's is answered exactly like a missing one. */
export function ownWebhook(reader: RecordReader, webhookId: string, userId: string): WebhookRecord {
  const webhook = reader.get(WEBHOOKS, webhookId);
  if (webhook === undefined || webhook.user_id !== userId) throw notFound('Webhook');
  return webhook;
}

/**
 * The webhook and event a redelivery names, once the webhook is found to be the user's (asking
 * about anyone else's costs no turn) and one of the user's redelivery turns is taken (429 past 60).
 */
export async function takeRedeliveryRequest(reader: RecordReader, limiter: RateLimiter, params: Readonly<Record<string, string>>, userId: string): Promise<{ webhookId: string; eventId: string }> {
  const webhookId = params.id!;
  ownWebhook(reader, webhookId, userId);
  await takeRedeliveryTurn(limiter, userId);
  return { webhookId, eventId: params.event_id! };
}

export function webhookRoutes(deps: WebhookRouteDeps): ApiRoute[] {
  const { store, clock, outbox, allowPrivate } = deps;

  function list(context: KeyContext): Reply {
    checkQueryNames(context.query, ['page', 'limit']);
    const request = readPageRequest(context.query);
    const webhooks = outbox.webhooksOf(context.user.id).sort(newestFirst).map(webhookView);
    return { status: 200, body: pageOf(webhooks, request) };
  }

  async function register(context: KeyContext): Promise<Reply> {
    const fields = readWebhookRegistration(await context.readJsonBody(), allowPrivate);
    return context.commit((tx, { user }) => {
      const { ops, webhook } = registrationOps(tx, user.id, fields, { clock, outbox });
      // The only answer that ever carries the secret.
      return { ops, reply: { status: 201, headers: { ...SECRET_ANSWER_HEADERS }, body: { data: { ...webhookView(webhook), secret: webhook.secret } } } };
    });
  }

  function remove(context: KeyContext): Promise<Reply> {
    const webhookId = context.params.id ?? '';
    // Decided when it commits, so a delivery outcome written meanwhile cannot bring it back.
    return context.commit((tx, { user }) => {
      const { ops, webhook } = removalOps(tx, user.id, webhookId, isoTime(clock.now()));
      return { ops, reply: { status: 200, body: { data: webhookView(webhook) } } };
    });
  }

  function deliveries(context: KeyContext): Reply {
    checkQueryNames(context.query, []);
    const webhook = ownWebhook(store, context.params.id!, context.user.id);
    return { status: 200, body: { data: deliveryOutcomes(store, webhook.id) } };
  }

  async function redeliver(context: KeyContext): Promise<Reply> {
    const { webhookId, eventId } = await takeRedeliveryRequest(store, deps.redeliveryLimiter, context.params, context.user.id);
    return context.commit((tx, { user }) => {
      const { ops, queued } = redeliveryOps(tx, outbox, ownWebhook(tx, webhookId, user.id), eventId);
      return { ops, reply: { status: 202, body: { data: queued } } };
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

export interface OperatorWebhookRouteDeps {
  store: Store;
  outbox: WebhookOutbox;
}

/** GET /admin/v1/webhooks?user_id=&page=&limit=: every webhook, or one user's; never a secret. */
export function operatorWebhookRoutes(deps: OperatorWebhookRouteDeps): OperatorRoute[] {
  const { store, outbox } = deps;

  function list(context: RequestContext): Reply {
    checkQueryNames(context.query, ['user_id', 'page', 'limit']);
    const request = readPageRequest(context.query);
    const userId = context.query.get('user_id');
    if (userId === '') throw badRequest('Query parameter "user_id" must not be empty.', { user_id: 'must not be empty' });
    const webhooks = userId === null ? [...store.values(WEBHOOKS)] : outbox.webhooksOf(userId);
    return { status: 200, body: pageOf(webhooks.sort(newestFirst).map(operatorWebhookView), request) };
  }

  return [{ method: 'GET', pattern: '/admin/v1/webhooks', summary: "List webhooks (all, or one user's)", handle: list }];
}
