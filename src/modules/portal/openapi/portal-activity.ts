// OpenAPI details of the signed-in user's activity log (GET /portal/v1/activity) and of the
// settings the portal page reads before anyone signs in (GET /portal/v1/settings).

import { answer, curl, dataOf, errorAnswer, listOf, PAGE_PARAMS, type Operations } from '../../../openapi/schema.ts';

const activityEntry = {
  type: 'object',
  additionalProperties: false,
  required: ['at', 'action', 'client_address', 'user_agent', 'target'],
  properties: {
    at: { type: 'string', format: 'date-time' },
    action: {
      type: 'string',
      description:
        'sign_in, sign_in_recovery_code (finished with a recovery code), sign_in_failed, sign_in_wrong_code (the right password, then a wrong code), wrong_code (a wrong code for an account change), ' +
        'sign_out, session.ended, sessions.ended, account.created, account.invited, account.suspended, account.unsuspended, password.set, password.changed, email.changed, role.changed, ' +
        'key.created, key.rolled, key.revoked, key.expired, key.updated, key.plan_changed, plan.requested, plan.request_cancelled, plan.request_approved, plan.request_declined, ' +
        'webhook.created, webhook.deleted, and two-factor changes (two_factor_…, including two_factor_locked after 30 wrong codes in 24 hours).',
      examples: ['sign_in', 'key.rolled'],
    },
    client_address: { type: ['string', 'null'], description: 'For sign-ins (also with a code or recovery code), failed sign-ins, wrong codes, sign-outs and sessions ended: the client address as the server sees it (TRUST_PROXY); else null.' },
    user_agent: { type: ['string', 'null'], maxLength: 256, description: "For sign-ins (also with a code or recovery code), failed sign-ins, wrong codes, sign-outs and sessions ended: the browser's User-Agent (at most 256 characters); else null." },
    target: {
      type: 'object',
      required: ['type', 'id'],
      properties: { type: { enum: ['user', 'key', 'plan', 'webhook'] }, id: { type: 'string' } },
      description: 'What it was about: your account, a key, a plan request or a webhook.',
    },
  },
};

export const portalActivityOperations: Operations = {
  'GET /portal/v1/settings': {
    operationId: 'portalSettings',
    description: 'Open (no session): whether anyone may sign up (`open`) or only the invited (`invite`), as PORTAL_SIGNUP says, and the address programs call the API at (MARKETPLACE_URL, else the origin of this request; null without a usable Host).',
    security: [],
    responses: {
      '200': answer(
        'Settings',
        dataOf({
          type: 'object',
          additionalProperties: false,
          required: ['signup', 'api_base_url'],
          properties: { signup: { enum: ['invite', 'open'] }, api_base_url: { type: ['string', 'null'], examples: ['https://market.example.com'] } },
        }),
      ),
      '400': errorAnswer('An unknown query parameter'),
    },
    ...curl("curl -s 'http://127.0.0.1:3000/portal/v1/settings'"),
  },
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
