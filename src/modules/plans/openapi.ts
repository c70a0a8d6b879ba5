// OpenAPI details of the plans module's operator routes: the plan list, plan requests and a key's
// quota count (their schemas, Plan, PlanRequest and QuotaUsage, stay with the core's: the key and
// usage answers name them).

import { answer, curl, dataOf, errorAnswer, jsonBody, listOf, ADMIN_ERRORS, ADMIN_SECURITY, PAGE_PARAMS, pathId, queryParam, ref, type Operations } from '../../openapi/schema.ts';

const TOKEN = '-H "Authorization: Bearer $ADMIN_TOKEN"';
const security = ADMIN_SECURITY;
const unauthorized = ADMIN_ERRORS;
/** A decision's optional note to the user; no body at all is no note. */
const NOTE_BODY = {
  ...jsonBody({ type: 'object', additionalProperties: false, properties: { note: { type: 'string', maxLength: 500, description: "Shown to the user with the decision (trimmed; empty: none)." } } }, 'Optional: a note to the user'),
  required: false,
};

export const planOperations: Operations = {
  'GET /admin/v1/plans': {
    operationId: 'adminListPlans',
    description: 'The plans in force (Free 100, Pro 1,000 self-service, Business 10,000 on request, until the operator saves a list).',
    security,
    responses: { '200': answer('Plans', dataOf({ type: 'array', items: ref('Plan') })), ...unauthorized },
    ...curl(`curl -s ${TOKEN} http://127.0.0.1:3000/admin/v1/plans`),
  },
  'PUT /admin/v1/plans': {
    operationId: 'adminReplacePlans',
    description:
      'Replaces the whole list (1 to 20 plans, ids unique). Keys on a plan whose rate_limit changes get the new limit in the same write; a plan still used by an active key cannot be removed (409).',
    security,
    requestBody: jsonBody({ type: 'object', additionalProperties: false, required: ['plans'], properties: { plans: { type: 'array', minItems: 1, maxItems: 20, items: ref('PlanInput') } } }),
    responses: {
      '200': answer('Replaced', dataOf({ type: 'array', items: ref('Plan') })),
      '400': errorAnswer('Invalid list'),
      '409': errorAnswer('A removed plan is still used by an active key'),
      ...unauthorized,
    },
    ...curl(
      `curl -s -X PUT ${TOKEN} -H 'Content-Type: application/json' -d '{"plans":[{"id":"free","name":"Free","rate_limit":100,"self_service":true},{"id":"pro","name":"Pro","rate_limit":1000,"self_service":true},{"id":"business","name":"Business","rate_limit":10000,"self_service":false}]}' http://127.0.0.1:3000/admin/v1/plans`,
    ),
  },
  'GET /admin/v1/plan-requests': {
    operationId: 'adminListPlanRequests',
    description: "Users' requests for plans they cannot pick themselves, newest first; `status` filters.",
    security,
    parameters: [queryParam('status', { enum: ['pending', 'approved', 'declined', 'cancelled'] }, 'Only requests in this state.'), ...PAGE_PARAMS],
    responses: { '200': answer('Plan requests', listOf(ref('PlanRequest'))), '400': errorAnswer('Bad query'), ...unauthorized },
    ...curl(`curl -s ${TOKEN} 'http://127.0.0.1:3000/admin/v1/plan-requests?status=pending'`),
  },
  'POST /admin/v1/plan-requests/:id/approve': {
    operationId: 'adminApprovePlanRequest',
    description: "Approves a pending request: the key's plan and rate_limit change in the same write, so X-RateLimit-Limit changes from its next request. An optional body `{note}` is shown to the user.",
    security,
    parameters: [pathId('Plan request id')],
    requestBody: NOTE_BODY,
    responses: {
      '200': answer('Approved', dataOf(ref('PlanRequest'))),
      '404': errorAnswer('Plan request not found'),
      '400': errorAnswer('The note is not a string of at most 500 characters'),
      '409': errorAnswer('Already decided or cancelled, or the key is revoked or expired, or the plan gone'),
      ...unauthorized,
    },
    ...curl(`curl -s -X POST ${TOKEN} http://127.0.0.1:3000/admin/v1/plan-requests/prq_4cT9wB2mQx7LpZ0aR5sd/approve`),
  },
  'POST /admin/v1/plan-requests/:id/decline': {
    operationId: 'adminDeclinePlanRequest',
    description: 'Declines a pending request; the key stays on its plan. An optional body `{note}` (why, what to do instead) is shown to the user.',
    security,
    parameters: [pathId('Plan request id')],
    requestBody: NOTE_BODY,
    responses: { '200': answer('Declined', dataOf(ref('PlanRequest'))), '400': errorAnswer('The note is not a string of at most 500 characters'), '404': errorAnswer('Plan request not found'), '409': errorAnswer('Already decided or cancelled'), ...unauthorized },
    ...curl(`curl -s -X POST ${TOKEN} -H 'Content-Type: application/json' -d '{"note":"Write to sales first, please."}' http://127.0.0.1:3000/admin/v1/plan-requests/prq_4cT9wB2mQx7LpZ0aR5sd/decline`),
  },
};

export const quotaOperations: Operations = {
  'POST /admin/v1/keys/:id/quota': {
    operationId: 'adminSetKeyQuota',
    description:
      "Sets (`used`) or tops up (`add`, taking that many off the count) the count of the key's user and plan against the plan's quota in the current period: every key of the user on the plan gets the room. Send exactly one of them. Audited as `key.quota`.",
    security: ADMIN_SECURITY,
    parameters: [pathId('Key id')],
    requestBody: {
      required: true,
      content: {
        'application/json': {
          schema: {
            type: 'object',
            additionalProperties: false,
            properties: {
              used: { type: 'integer', minimum: 0, maximum: 1_000_000_000, description: 'The count to set.' },
              add: { type: 'integer', minimum: 1, maximum: 1_000_000_000, description: 'Requests to give back (the count goes down by this much, not below 0).' },
            },
          },
        },
      },
    },
    responses: {
      '200': answer('The quota now', dataOf(ref('QuotaUsage'))),
      '400': errorAnswer('Neither or both of used and add, a value out of range, or another field'),
      '404': errorAnswer('Key not found'),
      '409': errorAnswer("The key's plan has no quota (or the key has a limit of its own)"),
      ...ADMIN_ERRORS,
    },
    ...curl(`curl -s -X POST ${TOKEN} -H 'Content-Type: application/json' -d '{"add":1000}' http://127.0.0.1:3000/admin/v1/keys/key_2bN7cD4fG6hJ8kL0mP1q/quota`),
  },
};
