// OpenAPI paths of the user endpoints.

import { answer, curl, dataOf, errorAnswer, GATE_ERRORS, jsonBody, pathId, ref } from './schema.ts';

const KEY = '-H "Authorization: Bearer $KEY"';

export const userPaths = {
  '/v1/users/me': {
    get: {
      summary: 'Your own user, with email and role',
      responses: { '200': answer('You', dataOf(ref('User'))), ...GATE_ERRORS },
      ...curl(`curl -s ${KEY} http://127.0.0.1:3000/v1/users/me`),
    },
    put: {
      summary: 'Change your profile',
      requestBody: jsonBody(ref('ProfileChanges'), 'Any non-empty subset of name, bio, website, avatar_url, email'),
      responses: {
        '200': answer('Updated', dataOf(ref('User'))),
        '400': errorAnswer('Invalid body; `details` names each bad field'),
        '409': errorAnswer('Another user has this email'),
        ...GATE_ERRORS,
      },
      ...curl(`curl -s -X PUT ${KEY} -H 'Content-Type: application/json' -d '{"bio":"I build agents","website":"https://example.com"}' http://127.0.0.1:3000/v1/users/me`),
    },
  },
  '/v1/users/{id}': {
    get: {
      summary: "A user's public profile (never the email)",
      parameters: [pathId('User id')],
      responses: { '200': answer('The profile', dataOf(ref('PublicUser'))), '404': errorAnswer('User not found'), ...GATE_ERRORS },
      ...curl(`curl -s ${KEY} http://127.0.0.1:3000/v1/users/usr_8hJ3kQ0pLr5sT2vW9xYz`),
    },
  },
};
