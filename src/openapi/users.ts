// OpenAPI details of the user endpoints.

import { answer, curl, dataOf, errorAnswer, GATE_ERRORS, IF_MATCH, jsonBody, pathId, PRECONDITION_FAILED, ref, type Operations } from './schema.ts';

const KEY = '-H "Authorization: Bearer $KEY"';

/** PUT /v1/users/me and PUT /portal/v1/me: one profile change, one set of rules and answers. */
export const PROFILE_CHANGE = {
  parameters: [IF_MATCH],
  requestBody: jsonBody(ref('ProfileChanges'), 'Any non-empty subset of name, bio, website, avatar_url, email'),
  responses: {
    '200': answer('Updated', dataOf(ref('User'))),
    ...PRECONDITION_FAILED,
    '400': errorAnswer('Invalid body; `details` names each bad field'),
    '409': errorAnswer('Another user has this email'),
  },
};

export const userOperations: Operations = {
  'GET /v1/users/me': {
    operationId: 'getMe',
    description: 'The user the calling key belongs to, with email and role.',
    responses: { '200': answer('You', dataOf(ref('User'))), ...GATE_ERRORS },
    ...curl(`curl -s ${KEY} http://127.0.0.1:3000/v1/users/me`),
  },
  'PUT /v1/users/me': {
    operationId: 'updateMe',
    description:
      'Changes the profile fields sent (at least one). Strings are trimmed first; an empty string clears bio, website or avatar_url. ' +
      'Emails are stored in NFC, lower-cased, and must be unique in that form; an email can be changed but not cleared (400). ' +
      'On an account with two-factor sign-in on, a new email is refused (403: change it in the portal, with the password and a code); the other fields change as usual.',
    ...PROFILE_CHANGE,
    responses: { ...PROFILE_CHANGE.responses, ...GATE_ERRORS },
    ...curl(`curl -s -X PUT ${KEY} -H 'Content-Type: application/json' -d '{"bio":"I build agents","website":"https://example.com"}' http://127.0.0.1:3000/v1/users/me`),
  },
  'GET /v1/users/:id': {
    operationId: 'getUser',
    description: "Anyone's public profile: never the email.",
    parameters: [pathId('User id')],
    responses: { '200': answer('The profile', dataOf(ref('PublicUser'))), '404': errorAnswer('User not found'), ...GATE_ERRORS },
    ...curl(`curl -s ${KEY} http://127.0.0.1:3000/v1/users/usr_8hJ3kQ0pLr5sT2vW9xYz`),
  },
};
