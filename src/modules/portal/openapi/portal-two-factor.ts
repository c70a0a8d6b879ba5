// OpenAPI details of two-factor sign-in (TOTP, RFC 6238) in the developer portal: enrolment,
// confirmation, turning it off, the second step of signing in, and the operator's reset. The
// pipeline's own answers (401 without a session, 403 for a write from another origin) are added
// to every portal route in document.ts.

import { MAX_PASSWORD_INPUT } from '../password-rules.ts';
import { RECOVERY_CODE_COUNT } from '../two-factor.ts';
import { answer, curl, dataOf, errorAnswer, jsonBody, ADMIN_ERRORS, ADMIN_SECURITY, pathId, ref, type Operations, type Schema } from '../../../openapi/schema.ts';

const ORIGIN = "-H 'Origin: http://127.0.0.1:3000'";
const JSON_TYPE = "-H 'Content-Type: application/json'";
const setCookie = { 'Set-Cookie': { description: 'The session cookie', schema: { type: 'string' } } };
const typedPassword = { type: 'string', maxLength: MAX_PASSWORD_INPUT };
const code = { type: 'string', minLength: 1, maxLength: 64, description: 'The 6-digit code the authenticator app shows now' };
const recoveryCode = { type: 'string', minLength: 1, maxLength: 64, description: 'One of the recovery codes (each works once)' };
const ticket = { type: 'string', minLength: 1, maxLength: 64, description: 'The ticket POST /portal/v1/session answered (202)' };
const locked = errorAnswer('A code while codes from the app are locked after 30 wrong codes in 24 hours: sign in with a recovery code (which unlocks them), or ask the operator to reset two-factor sign-in');
const unreadable = errorAnswer('A code cannot be checked: the server was started with another operator token than the one that sealed the secret (not counted as a wrong code; recovery codes still work; the operator runs `marketplace reseal`)');
const tooMany = errorAnswer('Too many failed sign-ins or codes for this account (10 per 15 minutes) or from this address; wait Retry-After seconds');

/** What GET /portal/v1/two-factor and both DELETEs answer. */
export const TWO_FACTOR_STATUS: Schema = {
  type: 'object',
  required: ['enabled', 'recovery_codes_left'],
  properties: { enabled: { type: 'boolean' }, recovery_codes_left: { type: 'integer', minimum: 0, maximum: RECOVERY_CODE_COUNT } },
};

export const portalTwoFactorOperations: Operations = {
  'GET /portal/v1/two-factor': {
    operationId: 'portalTwoFactorStatus',
    description: 'Whether two-factor sign-in is on for you, and how many unused recovery codes are left.',
    responses: { '200': answer('The state', dataOf(TWO_FACTOR_STATUS)) },
    ...curl('curl -s -b cookies.txt http://127.0.0.1:3000/portal/v1/two-factor'),
  },
  'POST /portal/v1/two-factor': {
    operationId: 'portalTwoFactorEnrol',
    description:
      'Starts two-factor sign-in (TOTP, RFC 6238: HMAC-SHA-1, 6 digits, 30 s steps, one step of slack either way): a new secret, shown in this answer only, ' +
      'as base32 text and as an `otpauth://` URI for an authenticator app. Not on until confirmed with a first code; enrolling again before that replaces the secret. ' +
      'Needs the current password (a wrong one counts as a failed sign-in). The server keeps the secret sealed (AES-256-GCM under a key derived from the operator token).',
    requestBody: jsonBody({ type: 'object', additionalProperties: false, required: ['current_password'], properties: { current_password: typedPassword } }),
    responses: {
      '201': answer(
        'The secret (once)',
        dataOf({
          type: 'object',
          required: ['secret', 'otpauth_uri'],
          properties: { secret: { type: 'string', pattern: '^[A-Z2-7]+$' }, otpauth_uri: { type: 'string', pattern: '^otpauth://totp/' } },
        }),
      ),
      '400': errorAnswer('Invalid body, or current_password is wrong'),
      '409': errorAnswer('Two-factor sign-in is already on'),
      '429': tooMany,
    },
    ...curl(`curl -s -b cookies.txt ${ORIGIN} ${JSON_TYPE} -d '{"current_password":"correct horse battery"}' http://127.0.0.1:3000/portal/v1/two-factor`),
  },
  'POST /portal/v1/two-factor/confirm': {
    operationId: 'portalTwoFactorConfirm',
    description:
      `Confirms the enrolment with a code from the app: two-factor sign-in is on from now, and every other session of yours ends. ` +
      `Answers ${RECOVERY_CODE_COUNT} recovery codes, in this answer only (the server keeps their SHA-256); each signs in once in place of a code. A wrong code counts as a failed sign-in.`,
    requestBody: jsonBody({ type: 'object', additionalProperties: false, required: ['code'], properties: { code } }),
    responses: {
      '200': answer(
        'On; the recovery codes (once)',
        dataOf({ type: 'object', required: ['recovery_codes'], properties: { recovery_codes: { type: 'array', minItems: RECOVERY_CODE_COUNT, maxItems: RECOVERY_CODE_COUNT, items: { type: 'string' } } } }),
      ),
      '400': errorAnswer('Invalid body, or the code is wrong or was already used'),
      '409': errorAnswer('No enrolment to confirm, already on, or the enrolment changed meanwhile'),
      '429': tooMany,
      '503': unreadable,
    },
    ...curl(`curl -s -b cookies.txt ${ORIGIN} ${JSON_TYPE} -d '{"code":"492039"}' http://127.0.0.1:3000/portal/v1/two-factor/confirm`),
  },
  'POST /portal/v1/two-factor/recovery-codes': {
    operationId: 'portalTwoFactorRecoveryCodes',
    description:
      `Makes ${RECOVERY_CODE_COUNT} new recovery codes, given the current password and a code from the app: they are in this answer only (the server keeps their SHA-256), ` +
      'and every earlier recovery code stops working. Wrong ones count as failed sign-ins (a wrong code also in the 24-hour count). Audited (`portal.two_factor_recovery_codes`, without the codes).',
    requestBody: jsonBody({ type: 'object', additionalProperties: false, required: ['current_password', 'code'], properties: { current_password: typedPassword, code } }),
    responses: {
      '200': answer(
        'The new recovery codes (once)',
        dataOf({ type: 'object', required: ['recovery_codes'], properties: { recovery_codes: { type: 'array', minItems: RECOVERY_CODE_COUNT, maxItems: RECOVERY_CODE_COUNT, items: { type: 'string' } } } }),
      ),
      '400': errorAnswer('Invalid body, or the password or code is wrong (or the code was already used)'),
      '409': errorAnswer('Two-factor sign-in is not on'),
      '423': locked,
      '429': tooMany,
      '503': unreadable,
    },
    ...curl(`curl -s -b cookies.txt ${ORIGIN} ${JSON_TYPE} -d '{"current_password":"correct horse battery","code":"492039"}' http://127.0.0.1:3000/portal/v1/two-factor/recovery-codes`),
  },
  'DELETE /portal/v1/two-factor': {
    operationId: 'portalTwoFactorDisable',
    description: 'Turns two-factor sign-in off, given the current password and a code (or a recovery code). Wrong ones count as failed sign-ins.',
    requestBody: jsonBody({
      oneOf: [
        { type: 'object', additionalProperties: false, required: ['current_password', 'code'], properties: { current_password: typedPassword, code } },
        { type: 'object', additionalProperties: false, required: ['current_password', 'recovery_code'], properties: { current_password: typedPassword, recovery_code: recoveryCode } },
      ],
    }),
    responses: {
      '200': answer('Off', dataOf(TWO_FACTOR_STATUS)),
      '400': errorAnswer('Invalid body, or the password, code or recovery code is wrong'),
      '409': errorAnswer('Two-factor sign-in is not on'),
      '423': locked,
      '429': tooMany,
      '503': unreadable,
    },
    ...curl(`curl -s -b cookies.txt -X DELETE ${ORIGIN} ${JSON_TYPE} -d '{"current_password":"correct horse battery","code":"492039"}' http://127.0.0.1:3000/portal/v1/two-factor`),
  },
  'POST /portal/v1/session/second-factor': {
    operationId: 'portalSignInSecondFactor',
    description:
      'The second step of signing in with two-factor sign-in on: the ticket POST /portal/v1/session answered (202) and a code from the app, or a recovery code. ' +
      'Sets the session cookie. A ticket works once and for 5 minutes; a code is accepted once (not again within its window, on any instance). ' +
      'A wrong code counts as a failed sign-in and leaves the ticket usable until it expires; it is also written in your activity (`sign_in_wrong_code`: the right password, a wrong code) and counted over 24 hours: ' +
      'after 30 wrong codes in 24 hours codes from the app are locked (423) until a recovery code signs in or the operator resets two-factor sign-in, and the activity shows `two_factor_locked`.',
    security: [],
    requestBody: jsonBody({
      oneOf: [
        { type: 'object', additionalProperties: false, required: ['ticket', 'code'], properties: { ticket, code } },
        { type: 'object', additionalProperties: false, required: ['ticket', 'recovery_code'], properties: { ticket, recovery_code: recoveryCode } },
      ],
    }),
    responses: {
      '201': answer('Signed in; the cookie is set', dataOf(ref('User')), setCookie),
      '400': errorAnswer('Invalid body'),
      '401': errorAnswer('The ticket is used, expired or unknown (sign in again), or the code is wrong or was already used'),
      '423': locked,
      '429': tooMany,
      '503': unreadable,
    },
    ...curl(`curl -s -c cookies.txt ${ORIGIN} ${JSON_TYPE} -d '{"ticket":"<ticket from the 202>","code":"492039"}' http://127.0.0.1:3000/portal/v1/session/second-factor`),
  },
  'POST /admin/v1/two-factor/reseal': {
    operationId: 'adminResealTwoFactor',
    description:
      'After the operator token changed: every stored two-factor secret sealed under `old_token` is sealed again under the current token, in one write, so codes from authenticator apps work again. ' +
      'Secrets already sealed under the current token are left as they are; ones neither token opens are counted as `unreadable`. Audited (`two_factor.reseal`, with the counts). ' +
      'The CLI sends it as `marketplace reseal --old-token-file <file>`.',
    security: ADMIN_SECURITY,
    requestBody: jsonBody({ type: 'object', additionalProperties: false, required: ['old_token'], properties: { old_token: { type: 'string', minLength: 1, maxLength: 4096 } } }),
    responses: {
      '200': answer(
        'How many secrets were sealed again, were already current, or could not be opened',
        dataOf({
          type: 'object',
          required: ['resealed', 'already_current', 'unreadable'],
          properties: { resealed: { type: 'integer', minimum: 0 }, already_current: { type: 'integer', minimum: 0 }, unreadable: { type: 'integer', minimum: 0 } },
        }),
      ),
      '400': errorAnswer('Invalid body'),
      ...ADMIN_ERRORS,
    },
    ...curl(`curl -s -X POST -H "Authorization: Bearer $ADMIN_TOKEN" ${JSON_TYPE} -d '{"old_token":"<the previous token>"}' http://127.0.0.1:3000/admin/v1/two-factor/reseal`),
  },
  'DELETE /admin/v1/users/:id/two-factor': {
    operationId: 'adminResetTwoFactor',
    description:
      "Turns a user's two-factor sign-in off (they lost their app and recovery codes; also unlocks codes locked after 30 wrong ones) and ends every session of theirs. " +
      'An optional body `{reason}` is kept in the audit entry (`user.two_factor_reset`). 200 also when it was off. CLI: `marketplace users two-factor-reset <id> --reason <text>`.',
    security: ADMIN_SECURITY,
    parameters: [pathId('User id')],
    requestBody: { ...jsonBody({ type: 'object', additionalProperties: false, properties: { reason: { type: 'string', minLength: 1, maxLength: 500 } } }, 'Optional: why (kept in the audit log)'), required: false },
    responses: { '200': answer('Off', dataOf(TWO_FACTOR_STATUS)), '400': errorAnswer('Invalid body'), '404': errorAnswer('User not found (or erased)'), ...ADMIN_ERRORS },
    ...curl(`curl -s -X DELETE -H "Authorization: Bearer $ADMIN_TOKEN" ${JSON_TYPE} -d '{"reason":"lost phone, identity checked by call"}' http://127.0.0.1:3000/admin/v1/users/usr_8hJ3kQ0pLr5sT2vW9xYz/two-factor`),
  },
};
