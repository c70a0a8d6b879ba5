// OpenAPI for webhooks: the /v1/webhooks endpoints, the operator's list, their schemas, and
// the top-level `webhooks` object (OpenAPI 3.1) describing each event we POST to a receiver.

import { EVENT_TYPES } from '../domain/events.ts';
import type { EventType } from '../domain/events.ts';
import { answer, curl, dataOf, errorAnswer, GATE_ERRORS, jsonBody, listOf, ADMIN_ERRORS, ADMIN_SECURITY, PAGE_PARAMS, pathId, queryParam, ref } from './schema.ts';
import type { Operations, Schema } from './schema.ts';

const KEY = '-H "Authorization: Bearer $KEY"';
const TOKEN = '-H "Authorization: Bearer $ADMIN_TOKEN"';
const timestamp = { type: 'string', format: 'date-time' };

/** The `:event_id` of a redelivery: an event among the webhook's last outcomes. */
export const EVENT_ID_PARAM = { name: 'event_id', in: 'path', required: true, schema: { type: 'string' }, description: "The event's id (`evt_…`), as its outcome names it." };

/** What a redelivery answers, from /v1 and from the portal alike. */
export const REDELIVERY_ANSWERS = {
  '202': answer('Queued', dataOf(ref('QueuedRedelivery'))),
  '404': errorAnswer('Webhook not found (or not yours), or the event is not among its last outcomes'),
  '409': errorAnswer('The webhook is paused or switched off, or the event is no longer kept'),
};

/** PATCH, rotate-secret and recover: their bodies and answers, from /v1 and from the portal alike. */
export const WEBHOOK_PATCH_BODY = jsonBody(ref('WebhookChange'));
export const WEBHOOK_PATCH_ANSWERS = {
  '200': answer('Changed; the webhook as it is now', dataOf(ref('Webhook'))),
  '400': errorAnswer('Invalid body; `details` names each bad field (a refused URL, an unknown event kind, a read-only or unknown field); nothing is changed'),
  '404': errorAnswer('Webhook not found (or not yours)'),
};
export const ROTATE_SECRET_BODY = jsonBody({
  type: 'object',
  additionalProperties: false,
  properties: { grace_seconds: { type: 'integer', minimum: 0, maximum: 604800, default: 86400, description: 'How long the old secret keeps signing deliveries (as the second signature).' } },
});
export const ROTATE_SECRET_ANSWERS = {
  '201': answer('Rotated; the new secret, shown in this answer only (Cache-Control: no-store)', dataOf(ref('RotatedSecret'))),
  '400': errorAnswer('grace_seconds is not a whole number from 0 to 604800, or an unknown field'),
  '404': errorAnswer('Webhook not found (or not yours)'),
};
export const RECOVER_BODY = jsonBody({
  type: 'object',
  additionalProperties: false,
  required: ['since'],
  properties: { since: { type: 'string', format: 'date-time', description: 'Events created at or after this time; no older than the kept events (EVENT_RETENTION_DAYS, 30 by default).' } },
});
export const RECOVER_ANSWERS = {
  '202': answer('Queued: how many events are sent again', {
    type: 'object',
    additionalProperties: false,
    required: ['events'],
    properties: { events: { type: 'integer', minimum: 0 } },
  }),
  '400': errorAnswer('since missing, not an ISO time, or older than the kept events; or an unknown field'),
  '404': errorAnswer('Webhook not found (or not yours)'),
  '409': errorAnswer('The webhook is paused or switched off: resume it first'),
};

/** Merged into components.schemas by the document. */
export const webhookSchemas: Record<string, Schema> = {
  Event: {
    type: 'object',
    required: ['id', 'type', 'created_at', 'data'],
    description: 'One of your events, exactly as your webhooks receive it (the same id and body).',
    properties: {
      id: { type: 'string', description: 'The event id (`evt_…`), the `webhook-id` of its deliveries.', examples: ['evt_Q7mZ2xLp0sK4vN8rT1bY'] },
      type: { enum: [...EVENT_TYPES] },
      created_at: timestamp,
      data: { type: 'object', additionalProperties: true, description: 'What the event is about: the listing, or your profile (see the top-level `webhooks` for each kind).' },
    },
  },
  EventPage: {
    type: 'object',
    required: ['data', 'has_more'],
    properties: {
      data: { type: 'array', maxItems: 100, items: ref('Event') },
      has_more: { type: 'boolean', description: 'Whether events follow the last one: ask again with `after` = its id.' },
    },
  },
  DeliveryOutcome: {
    type: 'object',
    additionalProperties: false,
    required: ['at', 'event_id', 'event', 'status', 'attempts', 'response_status', 'duration_ms', 'next_attempt_at'],
    properties: {
      at: { type: 'string', format: 'date-time', description: "When the attempt's outcome was known." },
      event_id: { type: 'string' },
      event: { type: 'string', examples: ['ping', 'listing.updated'] },
      status: { enum: ['delivered', 'retrying', 'failed', 'skipped'], description: '`retrying`: this attempt failed and another is scheduled. `skipped`: the webhook was paused; nothing was sent.' },
      attempts: { type: 'integer', minimum: 0, description: 'Which attempt this was (a redelivery starts again at 1; 0 when skipped).' },
      response_status: { type: ['integer', 'null'], description: "The receiver's HTTP status; null when none arrived (timeout, refused connection)." },
      duration_ms: { type: 'integer', minimum: 0, description: "From dialling to the end of the receiver's answer or the failure." },
      next_attempt_at: { type: ['string', 'null'], format: 'date-time', description: 'While `retrying`: when the next attempt is due; otherwise null.' },
    },
  },
  QueuedRedelivery: {
    type: 'object',
    required: ['webhook_id', 'event_id', 'type', 'status'],
    properties: { webhook_id: { type: 'string' }, event_id: { type: 'string' }, type: { enum: [...EVENT_TYPES] }, status: { const: 'pending' } },
  },
  LastDelivery: {
    type: ['object', 'null'],
    description: 'The most recent attempt to deliver an event to this webhook; null until the first one.',
    required: ['event_id', 'type', 'status', 'attempts', 'response_status', 'at'],
    properties: {
      event_id: { type: 'string', examples: ['evt_Q7mZ2xLp0sK4vN8rT1bY'] },
      type: { enum: [...EVENT_TYPES] },
      status: { enum: ['delivered', 'retrying', 'failed'] },
      attempts: { type: 'integer', minimum: 1 },
      response_status: { type: ['integer', 'null'], description: "The receiver's HTTP status; null when none arrived (timeout, refused connection)." },
      at: timestamp,
    },
  },
  Webhook: {
    type: 'object',
    required: ['id', 'url', 'events', 'description', 'active', 'enabled', 'disabled_reason', 'created_at', 'last_delivery'],
    properties: {
      id: { type: 'string', examples: ['wh_3kT9pQ2mXz7LbV1nR5sW'] },
      url: { type: 'string', format: 'uri', maxLength: 2048 },
      events: { type: 'array', minItems: 1, uniqueItems: true, items: { enum: [...EVENT_TYPES] } },
      description: { type: 'string', maxLength: 500 },
      active: { type: 'boolean', description: 'false while paused, once the receiver answered 410 Gone, or once every delivery failed for 5 days: nothing is sent to it.' },
      enabled: { type: 'boolean', description: 'The same as `active`; `PATCH` with `enabled` pauses or resumes it.' },
      disabled_reason: {
        enum: ['paused', 'gone', 'failing', null],
        description: 'Why it is not sent events: `paused` by you (events meanwhile are `skipped` outcomes), `gone` (its receiver answered 410), `failing` (every delivery failed for 5 days). Null while enabled.',
      },
      created_at: timestamp,
      last_delivery: ref('LastDelivery'),
    },
  },
  NewWebhook: {
    type: 'object',
    additionalProperties: false,
    required: ['url'],
    properties: {
      url: {
        type: 'string',
        format: 'uri',
        maxLength: 2048,
        description: 'http or https; no user name or password; not a loopback, private, link-local, documentation or other special-purpose address, nor one of the server’s own addresses (unless the server runs with WEBHOOK_ALLOW_PRIVATE=1).',
      },
      events: {
        type: 'array',
        minItems: 1,
        uniqueItems: true,
        items: { enum: [...EVENT_TYPES] },
        default: [...EVENT_TYPES],
        description: 'The event kinds to receive; all of them when left out.',
      },
      description: { type: 'string', maxLength: 500, default: '', description: 'Trimmed (the length counts after trimming).' },
    },
  },
  WebhookChange: {
    type: 'object',
    additionalProperties: false,
    properties: {
      url: { type: 'string', format: 'uri', maxLength: 2048, description: 'Checked as at registration (the address guard included).' },
      events: { type: 'array', minItems: 1, uniqueItems: true, items: { enum: [...EVENT_TYPES] } },
      description: { type: 'string', maxLength: 500 },
      enabled: { type: 'boolean', description: '`false` pauses it; `true` resumes it (also one switched off by a 410 or for failing), keeping its id and secret.' },
    },
  },
  RotatedSecret: {
    type: 'object',
    additionalProperties: false,
    required: ['secret', 'previous_secret_expires_at'],
    properties: {
      secret: { type: 'string', pattern: '^whsec_[A-Za-z0-9+/]+={0,2}$', description: 'The new secret, signing every delivery first from now on. Shown in this answer only.' },
      previous_secret_expires_at: {
        ...timestamp,
        description: 'Until then every delivery carries a second `v1,` signature made with the secret this one replaced (now when grace_seconds was 0). An older secret still in its grace ends at once.',
      },
    },
  },
  NewWebhookWithSecret: {
    allOf: [
      ref('Webhook'),
      {
        type: 'object',
        required: ['secret'],
        properties: {
          secret: {
            type: 'string',
            pattern: '^whsec_[A-Za-z0-9+/]+={0,2}$',
            description: 'Signs every delivery. Shown in this answer only: store it now.',
          },
        },
      },
    ],
  },
};

export const webhookOperations: Operations = {
  'GET /v1/webhooks': {
    operationId: 'listWebhooks',
    description: 'Your webhooks, newest first (ties by id, highest first). Secrets are never listed.',
    parameters: PAGE_PARAMS,
    responses: {
      '200': answer('A page of your webhooks', listOf(ref('Webhook'))),
      '400': errorAnswer('Bad page or limit, or an unknown query parameter'),
      ...GATE_ERRORS,
    },
    ...curl(`curl -s ${KEY} 'http://127.0.0.1:3000/v1/webhooks?limit=20'`),
  },
  'POST /v1/webhooks': {
    operationId: 'createWebhook',
    description:
      'Registers a webhook; the answer carries its secret, once. At most 20 webhooks per user. A `ping` event is queued for the new webhook at once ' +
      '(if its `events` include `ping`, as the default does).',
    requestBody: jsonBody(ref('NewWebhook')),
    responses: {
      '201': answer('Registered', dataOf(ref('NewWebhookWithSecret'))),
      '400': errorAnswer('Invalid body; `details` names each bad field (a refused URL, an unknown event kind, an unknown field)'),
      '409': errorAnswer('You already have 20 webhooks'),
      ...GATE_ERRORS,
    },
    ...curl(
      `curl -s ${KEY} -H 'Content-Type: application/json' -d '{"url":"https://example.com/hooks/market","events":["listing.created","listing.updated"],"description":"catalog sync"}' http://127.0.0.1:3000/v1/webhooks`,
    ),
  },
  'DELETE /v1/webhooks/:id': {
    operationId: 'deleteWebhook',
    description: "Removes one of your webhooks. Events not yet delivered to it are dropped. Another user's webhook answers 404, as an unknown id does.",
    parameters: [pathId('Webhook id')],
    responses: { '200': answer('Removed; the webhook as it was', dataOf(ref('Webhook'))), '404': errorAnswer('Webhook not found'), ...GATE_ERRORS },
    ...curl(`curl -s -X DELETE ${KEY} http://127.0.0.1:3000/v1/webhooks/wh_3kT9pQ2mXz7LbV1nR5sW`),
  },
  'GET /v1/webhooks/:id/deliveries': {
    operationId: 'listWebhookDeliveries',
    description: "One of your webhooks' last 50 delivery outcomes, newest first, one per attempt (as the portal shows them); never a body. Needs `read:webhooks`.",
    parameters: [pathId('Webhook id')],
    responses: {
      '200': answer('Outcomes', dataOf({ type: 'array', maxItems: 50, items: ref('DeliveryOutcome') })),
      '400': errorAnswer('An unknown query parameter'),
      '404': errorAnswer('Webhook not found (or not yours)'),
      ...GATE_ERRORS,
    },
    ...curl(`curl -s ${KEY} http://127.0.0.1:3000/v1/webhooks/wh_3kT9pQ2mXz7LbV1nR5sW/deliveries`),
  },
  'POST /v1/webhooks/:id/deliveries/:event_id/redeliver': {
    operationId: 'redeliverWebhookEvent',
    description:
      "Sends one of the events among the webhook's last 50 outcomes again now, as a new delivery: the same `webhook-id` and body, a fresh `webhook-timestamp` and signature. " +
      'One still retrying is sent now, replacing its pending retry. Needs `write:webhooks`. At most 60 redeliveries per user per hour (with the portal), then 429 with Retry-After; a refused one (404, 409) counts none.',
    parameters: [pathId('Webhook id'), EVENT_ID_PARAM],
    responses: {
      ...REDELIVERY_ANSWERS,
      ...GATE_ERRORS,
      '429': errorAnswer("The key's rate limit or CPU budget, or 60 redeliveries by this user in the last hour; wait for Retry-After seconds."),
    },
    ...curl(`curl -s -X POST ${KEY} http://127.0.0.1:3000/v1/webhooks/wh_3kT9pQ2mXz7LbV1nR5sW/deliveries/evt_Q7mZ2xLp0sK4vN8rT1bY/redeliver`),
  },
  'GET /admin/v1/webhooks': {
    operationId: 'adminListWebhooks',
    description: "Everyone's webhooks (or one user's), newest first (ties by id, highest first), never their secrets.",
    security: ADMIN_SECURITY,
    parameters: [queryParam('user_id', { type: 'string', minLength: 1 }, "Only this user's webhooks."), ...PAGE_PARAMS],
    responses: {
      '200': answer('Webhooks', listOf({ allOf: [ref('Webhook'), { type: 'object', required: ['user_id'], properties: { user_id: { type: 'string' } } }] })),
      '400': errorAnswer('Bad page, limit or user_id'),
      ...ADMIN_ERRORS,
    },
    ...curl(`curl -s ${TOKEN} 'http://127.0.0.1:3000/admin/v1/webhooks?user_id=usr_8hJ3kQ0pLr5sT2vW9xYz'`),
  },
};

const SIGNATURE_HEADERS = [
  {
    name: 'webhook-id',
    in: 'header',
    required: true,
    schema: { type: 'string' },
    description: 'The event id (`evt_…`). The same on every retry of the event: use it to drop duplicates.',
  },
  {
    name: 'webhook-timestamp',
    in: 'header',
    required: true,
    schema: { type: 'string', pattern: '^[0-9]+$' },
    description: 'Unix seconds when this attempt was signed; new on each retry. Refuse values far from your clock (we suggest 5 minutes).',
  },
  {
    name: 'webhook-signature',
    in: 'header',
    required: true,
    schema: { type: 'string', examples: ['v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE='] },
    description:
      '`v1,` + base64 HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<raw body>`, keyed by the bytes the base64 after `whsec_` stands for (Standard Webhooks). Space-separated when there are several; accept if any matches.',
  },
];

const DELIVERY_RESPONSES = {
  '2XX': { description: 'Delivered (only when it arrives within 10 s). The body is ignored.' },
  '410': { description: 'Gone: the webhook is set to `active: false` and gets nothing more.' },
  '429': { description: 'Retried later; a `Retry-After` (seconds or HTTP date) lengthens the wait.' },
  '503': { description: 'Retried later; a `Retry-After` (seconds or HTTP date) lengthens the wait.' },
  default: {
    description:
      'Any other answer, a redirect (never followed), a timeout or a connection error: retried after each delay of WEBHOOK_RETRY_DELAYS_MS (by default 5 s, 5 min, 30 min, 2 h, 5 h, 10 h), then given up.',
  },
};

const EVENT_DATA: Record<EventType, { summary: string; data: Schema }> = {
  'listing.created': { summary: 'One of your listings was created', data: ref('Listing') },
  'listing.updated': { summary: 'One of your listings was changed', data: ref('Listing') },
  'listing.archived': { summary: 'One of your listings was archived (DELETE)', data: { allOf: [ref('Listing'), { properties: { status: { const: 'archived' } } }] } },
  'listing.removed': {
    summary: 'One of your listings was removed by the marketplace operator',
    data: { allOf: [ref('Listing'), { properties: { status: { const: 'removed' } } }] },
  },
  'user.updated': { summary: 'Your profile was changed (by you or by the operator)', data: ref('User') },
  ping: { summary: 'Sent once, right after the webhook is registered', data: ref('Webhook') },
  'quota.warning': { summary: "80 % of your plan's quota for the day or month is used (once a period)", data: quotaEventSchema() },
  'quota.exhausted': { summary: "Your plan's quota for the day or month is used up: requests are refused until it resets (once a period)", data: quotaEventSchema() },
  'key.expiring': {
    summary: 'One of your keys expires within 7 days (once for each expires_at)',
    data: {
      type: 'object',
      required: ['key_id', 'name', 'prefix', 'last_four', 'plan', 'expires_at'],
      properties: {
        key_id: { type: 'string' },
        name: { type: 'string' },
        prefix: { type: 'string' },
        last_four: { type: 'string' },
        plan: { type: ['string', 'null'] },
        expires_at: timestamp,
      },
    },
  },
  'plan_request.decided': { summary: 'The operator approved or declined one of your plan requests', data: ref('PlanRequest') },
};

function quotaEventSchema(): Schema {
  return {
    type: 'object',
    required: ['user_id', 'plan', 'requests', 'used', 'period', 'resets_at'],
    properties: {
      user_id: { type: 'string' },
      plan: { type: 'string' },
      requests: { type: 'integer', minimum: 1 },
      used: { type: 'integer', minimum: 0, description: "Requests counted in the period by all of your keys on the plan." },
      period: { enum: ['day', 'month'] },
      resets_at: timestamp,
    },
  };
}

function eventPayload(type: EventType, data: Schema): Schema {
  return {
    type: 'object',
    required: ['id', 'type', 'created_at', 'data'],
    properties: {
      id: { type: 'string', description: 'The event id, equal to the webhook-id header.', examples: ['evt_Q7mZ2xLp0sK4vN8rT1bY'] },
      type: { const: type },
      created_at: timestamp,
      data,
    },
  };
}

/** The document's top-level `webhooks`: one POST per event kind, as a receiver gets it. */
export const webhookEvents = Object.fromEntries(
  EVENT_TYPES.map((type) => [
    type,
    {
      post: {
        operationId: `event${type.split(/[._]/).map((part) => part[0]!.toUpperCase() + part.slice(1)).join('')}`,
        summary: EVENT_DATA[type].summary,
        tags: ['webhooks'],
        description: `POSTed as JSON to each active webhook of the resource's owner that subscribes to \`${type}\`.`,
        parameters: SIGNATURE_HEADERS,
        requestBody: jsonBody(eventPayload(type, EVENT_DATA[type].data), `The \`${type}\` event`),
        responses: DELIVERY_RESPONSES,
      },
    },
  ]),
);
