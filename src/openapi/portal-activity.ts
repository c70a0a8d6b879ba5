// OpenAPI details of the signed-in user's activity log (GET /portal/v1/activity).

import { answer, curl, errorAnswer, listOf, PAGE_PARAMS, type Operations } from './schema.ts';

const activityEntry = {
  type: 'object',
  additionalProperties: false,
  required: ['at', 'action', 'client_address', 'user_agent', 'target'],
  properties: {
    at: { type: 'string', format: 'date-time' },
    action: {
      type: 'string',
      description:
        'sign_in, sign_in_failed, sign_out, account.created, account.invited, account.suspended, account.unsuspended, password.set, password.changed, email.changed, role.changed, ' +
        'key.created, key.rolled, key.revoked, key.expired, key.updated, key.plan_changed, plan.requested, plan.request_cancelled, plan.request_approved, plan.request_declined, ' +
        'webhook.created, webhook.deleted, and two-factor changes (two_factor_…).',
      examples: ['sign_in', 'key.rolled'],
    },
    client_address: { type: ['string', 'null'], description: 'For sign-ins, failed sign-ins and sign-outs: the client address as the server sees it (TRUST_PROXY); else null.' },
    user_agent: { type: ['string', 'null'], maxLength: 256, description: "For sign-ins, failed sign-ins and sign-outs: the browser's User-Agent (at most 256 characters); else null." },
    target: {
      type: 'object',
      required: ['type', 'id'],
      properties: { type: { enum: ['user', 'key', 'plan', 'webhook'] }, id: { type: 'string' } },
      description: 'What it was about: your account, a key, a plan request or a webhook.',
    },
  },
};

export const portalActivityOperations: Operations = {
  'GET /portal/v1/activity': {
    operationId: 'portalActivity',
    description:
      "Your account's security and account events, newest first: sign-ins and failed sign-ins on your account (with address and user agent), sign-outs, keys created, rolled, revoked or expired, " +
      'plan changes and requests, webhook changes, password, email and two-factor changes, whether you or the operator made them. Never anyone else\'s. Kept as long as the audit log.',
    parameters: PAGE_PARAMS,
    responses: { '200': answer('Your activity', listOf(activityEntry)), '400': errorAnswer('Bad page or limit, or an unknown query parameter') },
    ...curl("curl -s -b cookies.txt 'http://127.0.0.1:3000/portal/v1/activity?limit=20'"),
  },
};
