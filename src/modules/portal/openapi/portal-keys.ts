// OpenAPI details of the developer portal's self-service routes (/portal/v1): the user's own
// keys, plans and plan requests, webhooks with test pings and delivery outcomes, and a
// creator's own listings. The session cookie, the same-origin rule for writes and their
// 401/403 are added to every portal route in document.ts.

import { rangeParams } from '../../../openapi/analytics.ts';
import { EVENT_ID_PARAM, RECOVER_ANSWERS, RECOVER_BODY, REDELIVERY_ANSWERS, ROTATE_SECRET_ANSWERS, ROTATE_SECRET_BODY, WEBHOOK_PATCH_ANSWERS, WEBHOOK_PATCH_BODY } from '../../../openapi/webhooks.ts';
import { answer, curl, dataOf, errorAnswer, jsonBody, listOf, PAGE_PARAMS, pathId, queryParam, ref, type Operations } from '../../../openapi/schema.ts';

const COOKIE = '-b cookies.txt';
const WRITE = `${COOKIE} -H 'Origin: http://127.0.0.1:3000' -H 'Content-Type: application/json'`;
const BASE = 'http://127.0.0.1:3000/portal/v1';
const KEY_ID = 'key_2bN7cD4fG6hJ8kL0mP1q';
const permissions = {
  type: 'array',
  minItems: 1,
  maxItems: 100,
  items: { type: 'string' },
  description: "Permission entries (scopes, routes, route prefixes), within your role: a member may hold none that writes listings (403).",
};
const keyName = { type: 'string', maxLength: 100 };
const planId = { type: 'string', minLength: 1, maxLength: 40, description: 'A self-service plan id (GET /portal/v1/plans).' };
const keyNotFound = errorAnswer('Key not found (or not yours)');
const webhookNotFound = errorAnswer('Webhook not found (or not yours)');
const WEBHOOK_ID = 'wh_3kT9pQ2mXz7LbV1nR5sW';
const LISTING_ID = 'lst_4fQ2kLm9XcVb7NpR1sTz';
const listingNotFound = errorAnswer('Listing not found (or not yours)');
/** A listing as its owner sees it in the portal: the listing, and how it performed. */
const ownListing = {
  allOf: [
    ref('Listing'),
    {
      type: 'object',
      required: ['performance'],
      properties: {
        performance: {
          type: 'object',
          required: ['views', 'impressions'],
          description: 'Since the listing was made (as GET /v1/analytics/listings counts them).',
          properties: {
            views: { type: 'integer', minimum: 0, description: 'GET /v1/listings/:id answers that showed it.' },
            impressions: { type: 'integer', minimum: 0, description: 'Appearances in list pages.' },
          },
        },
      },
    },
  ],
};

export const portalSelfServiceOperations: Operations = {
  'GET /portal/v1/keys': {
    operationId: 'portalListKeys',
    description: 'Your keys, newest first, revoked ones included; never a secret.',
    parameters: PAGE_PARAMS,
    responses: { '200': answer('Your keys', listOf(ref('ApiKey'))), '400': errorAnswer('Bad page or limit') },
    ...curl(`curl -s ${COOKIE} ${BASE}/keys`),
  },
  'POST /portal/v1/keys': {
    operationId: 'portalCreateKey',
    description:
      'Creates a key for you. It starts at `["read:listings"]` unless you ask for more, on the lowest self-service plan (Free) unless you pick another self-service plan. ' +
      'The plain key is in this answer only (Cache-Control: no-store). At most 20 active keys (neither revoked nor expired) per user: the 21st is 409.',
    requestBody: jsonBody({
      type: 'object',
      additionalProperties: false,
      properties: {
        name: { ...keyName, default: '' },
        permissions: { ...permissions, default: ['read:listings'] },
        plan: planId,
        expires_at: { type: ['string', 'null'], format: 'date-time', description: 'A future instant after which the key is refused (401 saying it expired).' },
      },
    }),
    responses: {
      '201': answer('Created', dataOf(ref('NewApiKey'))),
      '400': errorAnswer('Invalid body (bad permission entry, unknown or non-self-service plan, expires_at not in the future)'),
      '403': errorAnswer('A permission entry beyond your role (a member and any write on listings); details.permissions names it'),
      '409': errorAnswer('You already have 20 active keys'),
      '429': errorAnswer('You created 50 keys in the last 24 hours (revoked ones count); wait Retry-After seconds'),
    },
    ...curl(`curl -s ${WRITE} -d '{"name":"laptop"}' ${BASE}/keys`),
  },
  'PATCH /portal/v1/keys/:id': {
    operationId: 'portalUpdateKey',
    description:
      'Renames a key, replaces its permissions (narrower or wider, within your role) or switches it to a self-service plan; applies from its next request. ' +
      'A plan that is not self-service is asked for with POST /portal/v1/plan-requests (400 here).',
    parameters: [pathId('Key id')],
    requestBody: jsonBody({ type: 'object', additionalProperties: false, minProperties: 1, properties: { name: keyName, permissions, plan: planId } }),
    responses: {
      '200': answer('Changed', dataOf(ref('ApiKey'))),
      '400': errorAnswer('Invalid body'),
      '403': errorAnswer('A permission entry beyond your role'),
      '404': keyNotFound,
      '409': errorAnswer('The key is revoked, or expired and the change names a plan'),
    },
    ...curl(`curl -s -X PATCH ${WRITE} -d '{"plan":"pro"}' ${BASE}/keys/${KEY_ID}`),
  },
  'DELETE /portal/v1/keys/:id': {
    operationId: 'portalRevokeKey',
    description: 'Revokes a key: refused (401) from its next request, on every instance. Revoking twice changes nothing.',
    parameters: [pathId('Key id')],
    responses: { '200': answer('Revoked', dataOf(ref('ApiKey'))), '404': keyNotFound },
    ...curl(`curl -s -X DELETE ${COOKIE} -H 'Origin: http://127.0.0.1:3000' ${BASE}/keys/${KEY_ID}`),
  },
  'POST /portal/v1/keys/:id/roll': {
    operationId: 'portalRollKey',
    description:
      'A new secret for the same key (id, permissions, plan and usage kept), shown in this answer only. The previous secret keeps working for grace_seconds (0 to 604800, 7 days; default 0), then is refused with 401.',
    parameters: [pathId('Key id')],
    requestBody: jsonBody({ type: 'object', additionalProperties: false, properties: { grace_seconds: { type: 'integer', minimum: 0, maximum: 604_800, default: 0 } } }),
    responses: { '201': answer('Rolled', dataOf(ref('RolledApiKey'))), '400': errorAnswer('grace_seconds out of range'), '404': keyNotFound, '409': errorAnswer('The key is revoked or expired (an expired key can no longer be rolled)') },
    ...curl(`curl -s ${WRITE} -d '{"grace_seconds":3600}' ${BASE}/keys/${KEY_ID}/roll`),
  },
  'GET /portal/v1/keys/:id/usage': {
    operationId: 'portalKeyUsage',
    description: "One of your keys' usage: the same answer as GET /admin/v1/keys/:id/usage (hourly or daily series, per endpoint, 429s, the current window).",
    parameters: [pathId('Key id'), ...rangeParams],
    responses: { '200': answer('Usage', dataOf(ref('Usage'))), '400': errorAnswer('Bad query parameter'), '404': keyNotFound },
    ...curl(`curl -s ${COOKIE} '${BASE}/keys/${KEY_ID}/usage?granularity=hour'`),
  },
  'GET /portal/v1/plans': {
    operationId: 'portalListPlans',
    description: 'The plans the operator offers. Switch a key to a self-service one with PATCH /portal/v1/keys/:id; ask for another with POST /portal/v1/plan-requests.',
    responses: { '200': answer('Plans', dataOf({ type: 'array', items: ref('Plan') })) },
    ...curl(`curl -s ${COOKIE} ${BASE}/plans`),
  },
  'GET /portal/v1/plan-requests': {
    operationId: 'portalListPlanRequests',
    description: "Your plan requests, newest first: pending, approved, declined (with the operator's note, if any) or cancelled; `key_id` keeps one key's.",
    parameters: [queryParam('key_id', { type: 'string' }, "Only this key's requests."), ...PAGE_PARAMS],
    responses: { '200': answer('Your requests', listOf(ref('PlanRequest'))), '400': errorAnswer('Bad page, limit or unknown query name') },
    ...curl(`curl -s ${COOKIE} '${BASE}/plan-requests?key_id=${KEY_ID}'`),
  },
  'DELETE /portal/v1/plan-requests/:id': {
    operationId: 'portalCancelPlanRequest',
    description: 'Cancels one of your pending plan requests; the key may then ask again. Audited.',
    parameters: [pathId('Plan request id')],
    responses: {
      '200': answer('Cancelled', dataOf(ref('PlanRequest'))),
      '404': errorAnswer('Plan request not found (or not yours)'),
      '409': errorAnswer('Already approved, declined or cancelled'),
    },
    ...curl(`curl -s -X DELETE ${COOKIE} -H 'Origin: http://127.0.0.1:3000' ${BASE}/plan-requests/prq_4cT9wB2mQx7LpZ0aR5sd`),
  },
  'POST /portal/v1/plan-requests': {
    operationId: 'portalRequestPlan',
    description: 'Asks the operator to move one of your keys to a plan that is not self-service. One pending request per key, at most 10 requests in 24 hours; approval changes the key\'s limit at once.',
    requestBody: jsonBody({ type: 'object', additionalProperties: false, required: ['key_id', 'plan'], properties: { key_id: { type: 'string' }, plan: { type: 'string' } } }),
    responses: {
      '201': answer('Pending', dataOf(ref('PlanRequest'))),
      '400': errorAnswer('Unknown plan, or a self-service one (switch to it with PATCH)'),
      '404': keyNotFound,
      '409': errorAnswer('The key is revoked or expired, already on that plan, or has a pending request'),
      '429': errorAnswer('You made 10 plan requests in the last 24 hours; wait Retry-After seconds'),
    },
    ...curl(`curl -s ${WRITE} -d '{"key_id":"${KEY_ID}","plan":"business"}' ${BASE}/plan-requests`),
  },
  'GET /portal/v1/webhooks': {
    operationId: 'portalListWebhooks',
    description: 'Your webhooks, newest first, as GET /v1/webhooks answers; never a secret.',
    parameters: PAGE_PARAMS,
    responses: { '200': answer('Your webhooks', listOf(ref('Webhook'))), '400': errorAnswer('Bad page or limit') },
    ...curl(`curl -s ${COOKIE} ${BASE}/webhooks`),
  },
  'POST /portal/v1/webhooks': {
    operationId: 'portalCreateWebhook',
    description: 'Registers a webhook with the rules of POST /v1/webhooks (URL guard, event kinds, at most 20); the answer carries its secret, once. A `ping` is queued at once if its events include it.',
    requestBody: jsonBody(ref('NewWebhook')),
    responses: {
      '201': answer('Registered', dataOf(ref('NewWebhookWithSecret'))),
      '400': errorAnswer('Invalid body; `details` names each bad field'),
      '409': errorAnswer('You already have 20 webhooks'),
    },
    ...curl(`curl -s ${WRITE} -d '{"url":"https://example.com/hooks/market"}' ${BASE}/webhooks`),
  },
  'PATCH /portal/v1/webhooks/:id': {
    operationId: 'portalUpdateWebhook',
    description: 'Changes, pauses (`enabled: false`) or resumes (`enabled: true`) one of your webhooks, with the rules of PATCH /v1/webhooks/:id. Audited.',
    parameters: [pathId('Webhook id')],
    requestBody: WEBHOOK_PATCH_BODY,
    responses: WEBHOOK_PATCH_ANSWERS,
    ...curl(`curl -s -X PATCH ${WRITE} -d '{"enabled":true}' ${BASE}/webhooks/${WEBHOOK_ID}`),
  },
  'POST /portal/v1/webhooks/:id/rotate-secret': {
    operationId: 'portalRotateWebhookSecret',
    description: 'A new secret, shown once, as POST /v1/webhooks/:id/rotate-secret: the old one signs too (second) for `grace_seconds`. Audited.',
    parameters: [pathId('Webhook id')],
    requestBody: ROTATE_SECRET_BODY,
    responses: ROTATE_SECRET_ANSWERS,
    ...curl(`curl -s ${WRITE} -d '{"grace_seconds":3600}' ${BASE}/webhooks/${WEBHOOK_ID}/rotate-secret`),
  },
  'POST /portal/v1/webhooks/:id/recover': {
    operationId: 'portalRecoverWebhook',
    description: 'Sends again every kept event since `since` not delivered to the webhook, oldest first, as POST /v1/webhooks/:id/recover: one redelivery against the 60 an hour (with /v1). Audited.',
    parameters: [pathId('Webhook id')],
    requestBody: RECOVER_BODY,
    responses: { ...RECOVER_ANSWERS, '429': errorAnswer('60 redeliveries by you in the last hour; wait for Retry-After seconds.') },
    ...curl(`curl -s ${WRITE} -d '{"since":"2026-01-31T12:00:00Z"}' ${BASE}/webhooks/${WEBHOOK_ID}/recover`),
  },
  'DELETE /portal/v1/webhooks/:id': {
    operationId: 'portalDeleteWebhook',
    description: 'Removes one of your webhooks; events not yet delivered to it, and its delivery outcomes, go with it.',
    parameters: [pathId('Webhook id')],
    responses: { '200': answer('Removed; the webhook as it was', dataOf(ref('Webhook'))), '404': webhookNotFound },
    ...curl(`curl -s -X DELETE ${COOKIE} -H 'Origin: http://127.0.0.1:3000' ${BASE}/webhooks/${WEBHOOK_ID}`),
  },
  'POST /portal/v1/webhooks/:id/test': {
    operationId: 'portalTestWebhook',
    description:
      'Queues a `ping` event due now, whatever events the webhook receives: it is sent, signed (Standard Webhooks) and retried exactly like every other event. Its outcome appears in the deliveries.',
    parameters: [pathId('Webhook id')],
    responses: {
      '202': answer(
        'Queued',
        dataOf({
          type: 'object',
          required: ['webhook_id', 'event_id', 'type', 'status'],
          properties: { webhook_id: { type: 'string' }, event_id: { type: ['string', 'null'] }, type: { const: 'ping' }, status: { const: 'pending' } },
        }),
      ),
      '404': webhookNotFound,
      '409': errorAnswer('The webhook was switched off (its receiver answered 410)'),
    },
    ...curl(`curl -s -X POST ${COOKIE} -H 'Origin: http://127.0.0.1:3000' ${BASE}/webhooks/${WEBHOOK_ID}/test`),
  },
  'GET /portal/v1/webhooks/:id/deliveries': {
    operationId: 'portalWebhookDeliveries',
    description: "The webhook's last 50 delivery outcomes, newest first, one per attempt: time, event, status, attempt number, the receiver's HTTP status, duration, and the next attempt's time while retrying. Never a body.",
    parameters: [pathId('Webhook id')],
    responses: { '200': answer('Outcomes', dataOf({ type: 'array', maxItems: 50, items: ref('DeliveryOutcome') })), '404': webhookNotFound },
    ...curl(`curl -s ${COOKIE} ${BASE}/webhooks/${WEBHOOK_ID}/deliveries`),
  },
  'POST /portal/v1/webhooks/:id/deliveries/:event_id/redeliver': {
    operationId: 'portalRedeliverWebhookEvent',
    description:
      'Sends one of the events among the webhook\'s last 50 outcomes again now, as a new delivery: the same `webhook-id` and body, a fresh `webhook-timestamp` and signature. ' +
      'At most 60 redeliveries per user per hour (with /v1), then 429 with Retry-After. Audited.',
    parameters: [pathId('Webhook id'), EVENT_ID_PARAM],
    responses: {
      ...REDELIVERY_ANSWERS,
      '429': errorAnswer('60 redeliveries in the last hour; Retry-After says when to try again'),
    },
    ...curl(`curl -s -X POST ${COOKIE} -H 'Origin: http://127.0.0.1:3000' ${BASE}/webhooks/${WEBHOOK_ID}/deliveries/evt_Q7mZ2xLp0sK4vN8rT1bY/redeliver`),
  },
  'GET /portal/v1/listings': {
    operationId: 'portalListListings',
    description: 'Your listings in every status (active, archived, removed by the operator with its reason), newest first, each with its views and impressions.',
    parameters: [{ name: 'status', in: 'query', required: false, schema: { enum: ['active', 'archived', 'removed'] }, description: 'Only listings in this status.' }, ...PAGE_PARAMS],
    responses: { '200': answer('Your listings', listOf(ownListing)), '400': errorAnswer('Bad query parameter') },
    ...curl(`curl -s ${COOKIE} '${BASE}/listings?status=active'`),
  },
  'POST /portal/v1/listings': {
    operationId: 'portalCreateListing',
    description: 'Creates a listing with the rules of POST /v1/listings: creators only (403 for a member).',
    requestBody: jsonBody(ref('NewListing')),
    responses: { '201': answer('Created', dataOf(ownListing)), '400': errorAnswer('Invalid body'), '403': errorAnswer('Only creators may create listings') },
    ...curl(`curl -s ${WRITE} -d '{"title":"Prompt pack","type":"PROMPT","price":4.5}' ${BASE}/listings`),
  },
  'PUT /portal/v1/listings/:id': {
    operationId: 'portalUpdateListing',
    description: 'Changes the fields sent, with the rules of PUT /v1/listings/:id: creators only, judged by the role as the write is made (403 for a member); an archived or removed listing cannot be changed (409).',
    parameters: [pathId('Listing id')],
    requestBody: jsonBody(ref('ListingChanges'), 'Any non-empty subset of title, description, type, price, tags'),
    responses: { '200': answer('Updated', dataOf(ownListing)), '400': errorAnswer('Invalid body'), '403': errorAnswer('Only creators may edit or archive listings'), '404': listingNotFound, '409': errorAnswer('Archived or removed') },
    ...curl(`curl -s -X PUT ${WRITE} -d '{"price":5}' ${BASE}/listings/${LISTING_ID}`),
  },
  'DELETE /portal/v1/listings/:id': {
    operationId: 'portalArchiveListing',
    description: 'Archives your listing (gone from lists, kept here): creators only, judged by the role as the write is made (403 for a member); archiving twice changes nothing; a removed listing is 409.',
    parameters: [pathId('Listing id')],
    responses: { '200': answer('Archived', dataOf(ownListing)), '403': errorAnswer('Only creators may edit or archive listings'), '404': listingNotFound, '409': errorAnswer('Removed by the operator') },
    ...curl(`curl -s -X DELETE ${COOKIE} -H 'Origin: http://127.0.0.1:3000' ${BASE}/listings/${LISTING_ID}`),
  },
};
