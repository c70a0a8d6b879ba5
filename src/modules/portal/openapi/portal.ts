// OpenAPI details of the developer portal's session API (/portal/v1): signing in and out,
// passwords, sign-up and the signed-in user's profile, and the operator's invitation. The
// pipeline's own answers (401 without a session, 403 for a write from another origin) are added
// to every portal route in document.ts.

import { MAX_PASSWORD_INPUT, MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from '../password-rules.ts';
import { PROFILE_FIELDS } from '../../../openapi/schemas.ts';
import { PROFILE_CHANGE } from '../../../openapi/users.ts';
import { answer, curl, dataOf, errorAnswer, jsonBody, ADMIN_ERRORS, ADMIN_SECURITY, pathId, ref, type Operations, type Schema } from '../../../openapi/schema.ts';

/** How a browser proves its session: the cookie POST /portal/v1/session sets. */
export const SESSION_COOKIE_SCHEME: Schema = {
  type: 'apiKey',
  in: 'cookie',
  name: 'marketplace_session',
  description:
    'The portal session, set by POST /portal/v1/session (or a password set from an invitation, or sign-up): HttpOnly, SameSite=Strict, Path=/; ' +
    'over HTTPS it is Secure and named `__Host-marketplace_session`. Ends after 24 h unused, 7 days after sign-in, at sign-out, ' +
    'and when the user changes password, is suspended or erased.',
};

const ORIGIN = "-H 'Origin: http://127.0.0.1:3000'";
const JSON_TYPE = "-H 'Content-Type: application/json'";
const setCookie = { 'Set-Cookie': { description: 'The session cookie', schema: { type: 'string' } } };
const password = {
  type: 'string',
  minLength: MIN_PASSWORD_LENGTH,
  maxLength: MAX_PASSWORD_LENGTH,
  description: `${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters (code points); a common password (a built-in list) is refused.`,
};
/** A password typed to be checked (sign-in, the current one). */
const typedPassword = { type: 'string', maxLength: MAX_PASSWORD_INPUT };
const retryAfter = { 'Retry-After': { description: 'Seconds to wait before trying again', schema: { type: 'integer', minimum: 1 } } };
const tooMany = answer(
  'Too many failed sign-ins for this account (10 per 15 minutes) or from this address, or 2 attempts of this account or address already being checked; nothing was checked. Wait Retry-After seconds (1 for attempts in progress)',
  ref('Error'),
  retryAfter,
);
/** The password checks' queue is full: refused at once, nothing checked, no failure counted. */
const passwordsBusy = answer('The server is busy checking passwords (its queue is full); nothing was checked. Retry-After: 1', ref('Error'), retryAfter);

export const portalOperations: Operations = {
  'POST /admin/v1/users/:id/invitations': {
    operationId: 'adminInviteUser',
    description:
      'A single-use link for the user to set a password in the portal (first time, or after forgetting it: this server sends no email). ' +
      '`url` is `<MARKETPLACE_URL or this request\'s origin>/portal#invitation=<token>`; the token is in the fragment, which browsers never send to a server. ' +
      'Valid 72 hours; shown in this answer only (stored as its SHA-256); a new invitation replaces the previous one. Setting the password ends every session of the user.',
    security: ADMIN_SECURITY,
    parameters: [pathId('User id')],
    responses: {
      '201': answer(
        'The link',
        dataOf({
          type: 'object',
          required: ['url', 'token', 'expires_at'],
          properties: { url: { type: 'string', format: 'uri' }, token: { type: 'string' }, expires_at: { type: 'string', format: 'date-time' } },
        }),
      ),
      '400': errorAnswer('No usable Host header and no MARKETPLACE_URL'),
      '404': errorAnswer('User not found (or erased)'),
      '409': errorAnswer('The user has no email address to sign in with'),
      ...ADMIN_ERRORS,
    },
    ...curl(`curl -s -X POST -H "Authorization: Bearer $ADMIN_TOKEN" http://127.0.0.1:3000/admin/v1/users/usr_8hJ3kQ0pLr5sT2vW9xYz/invitations`),
  },
  'POST /portal/v1/session': {
    operationId: 'portalSignIn',
    description:
      'Signs in with email and password and sets the session cookie; with two-factor sign-in on, answers 202 with a ticket for the second step instead. A wrong email and a wrong password get the same 401 after the same work. ' +
      'Each attempt takes its place in the account\'s (10 failures per 15 minutes) and the address\'s failure limits before the password is checked, and gives it back if the password is right: ' +
      'past either, or with 2 attempts of the account or address already being checked, 429 with Retry-After at once, even with the right password.',
    security: [],
    requestBody: jsonBody({
      type: 'object',
      additionalProperties: false,
      required: ['email', 'password'],
      properties: { email: { type: 'string', maxLength: 254 }, password: typedPassword },
    }),
    responses: {
      '201': answer('Signed in; the cookie is set', dataOf(ref('User')), setCookie),
      '202': answer(
        'The password is right and two-factor sign-in is on: no cookie yet; send the ticket with a code to POST /portal/v1/session/second-factor',
        dataOf({ type: 'object', required: ['second_factor', 'ticket'], properties: { second_factor: { const: 'totp' }, ticket: { type: 'string' } } }),
      ),
      '400': errorAnswer('Invalid body'),
      '401': errorAnswer('The email or password is wrong'),
      '403': errorAnswer('The account is suspended (said only to someone with the right password)'),
      '429': tooMany,
      '503': passwordsBusy,
    },
    ...curl(`curl -s -c cookies.txt ${ORIGIN} ${JSON_TYPE} -d '{"email":"ada@example.com","password":"correct horse battery"}' http://127.0.0.1:3000/portal/v1/session`),
  },
  'DELETE /portal/v1/session': {
    operationId: 'portalSignOut',
    description: 'Ends the session and clears the cookie. 204 also without a session.',
    security: [],
    responses: { '204': { description: 'Signed out', headers: setCookie } },
    ...curl(`curl -s -b cookies.txt -X DELETE ${ORIGIN} http://127.0.0.1:3000/portal/v1/session`),
  },
  'POST /portal/v1/password': {
    operationId: 'portalSetPassword',
    description:
      'With `invitation` (no session needed): sets the password of the invited user, uses up the invitation, ends every session of that user and signs in (201, cookie); ' +
      'on an account with two-factor sign-in on it signs in only after a code: 202 with a ticket, as POST /portal/v1/session answers. ' +
      'Without it, with a session: changes the password given the current one (200); every other session of the user ends, and this one gets a new cookie value (the old one stops working). ' +
      'A wrong `current_password` counts as a failed sign-in, and a wrong invitation as a failure of the address; both are limited as sign-ins are (429 before anything is checked).',
    security: [{ sessionCookie: [] }, {}],
    requestBody: jsonBody({
      oneOf: [
        { type: 'object', additionalProperties: false, required: ['invitation', 'password'], properties: { invitation: { type: 'string' }, password } },
        { type: 'object', additionalProperties: false, required: ['current_password', 'password'], properties: { current_password: typedPassword, password } },
      ],
    }),
    responses: {
      '200': answer('Changed; other sessions ended, and this one continues under a new cookie value', dataOf(ref('User')), setCookie),
      '201': answer('Password set from the invitation; signed in', dataOf(ref('User')), setCookie),
      '202': answer(
        'Password set from the invitation, and two-factor sign-in is on: no cookie yet; send the ticket with a code to POST /portal/v1/session/second-factor',
        dataOf({ type: 'object', required: ['second_factor', 'ticket'], properties: { second_factor: { const: 'totp' }, ticket: { type: 'string' } } }),
      ),
      '400': errorAnswer('Invalid body: a password too short, too long or too common, an invitation used, replaced or expired, or a wrong current_password'),
      '401': errorAnswer('No invitation and no session'),
      '403': errorAnswer('The account is suspended'),
      '409': errorAnswer('The password was changed meanwhile'),
      '429': tooMany,
      '503': passwordsBusy,
    },
    ...curl(`curl -s -c cookies.txt ${ORIGIN} ${JSON_TYPE} -d '{"invitation":"<token from the link>","password":"correct horse battery"}' http://127.0.0.1:3000/portal/v1/password`),
  },
  'POST /portal/v1/signup': {
    operationId: 'portalSignUp',
    description: 'Only when the operator set PORTAL_SIGNUP=open (else 404): makes a member with this name, email and password, and signs in.',
    security: [],
    requestBody: jsonBody({
      type: 'object',
      additionalProperties: false,
      required: ['name', 'email', 'password'],
      properties: { name: PROFILE_FIELDS.name, email: { type: 'string', format: 'email', maxLength: 254 }, password },
    }),
    responses: {
      '201': answer('Signed up and signed in', dataOf(ref('User')), setCookie),
      '400': errorAnswer('Invalid body'),
      '404': errorAnswer('Sign-up is not open on this server'),
      '409': errorAnswer('Another user has this email'),
      '503': passwordsBusy,
    },
    ...curl(`curl -s -c cookies.txt ${ORIGIN} ${JSON_TYPE} -d '{"name":"Ada","email":"ada@example.com","password":"correct horse battery"}' http://127.0.0.1:3000/portal/v1/signup`),
  },
  'GET /portal/v1/me': {
    operationId: 'portalGetMe',
    description: 'The signed-in user, with email and role.',
    responses: { '200': answer('You', dataOf(ref('User'))) },
    ...curl('curl -s -b cookies.txt http://127.0.0.1:3000/portal/v1/me'),
  },
  'PUT /portal/v1/me': {
    operationId: 'portalUpdateMe',
    description:
      'Changes the profile fields sent (at least one), with the rules of PUT /v1/users/me: the email (what you sign in with) can be changed but not cleared. ' +
      'A new email needs `current_password` (and, with two-factor sign-in on, `code` or `recovery_code`), and ends every other session of yours; wrong ones count as failed sign-ins.',
    ...PROFILE_CHANGE,
    requestBody: jsonBody(
      {
        type: 'object',
        additionalProperties: false,
        properties: {
          ...PROFILE_FIELDS,
          current_password: { ...typedPassword, description: 'Needed to change the email' },
          code: { type: 'string', minLength: 1, maxLength: 64, description: 'With two-factor sign-in on, needed to change the email' },
          recovery_code: { type: 'string', minLength: 1, maxLength: 64, description: 'In place of code' },
        },
      },
      'Any non-empty subset of name, bio, website, avatar_url, email; to change the email, also current_password (and code or recovery_code)',
    ),
    responses: {
      ...PROFILE_CHANGE.responses,
      '400': errorAnswer('Invalid body; `details` names each bad field (current_password or code missing or wrong for an email change)'),
      '423': errorAnswer('A code while codes from the app are locked (30 wrong codes in 24 hours): use a recovery code'),
      '429': tooMany,
      '503': errorAnswer('A code cannot be checked: the server was started with another operator token than the one that sealed the secret (recovery codes still work)'),
    },
    ...curl(`curl -s -b cookies.txt -X PUT ${ORIGIN} ${JSON_TYPE} -d '{"bio":"I build agents"}' http://127.0.0.1:3000/portal/v1/me`),
  },
};
