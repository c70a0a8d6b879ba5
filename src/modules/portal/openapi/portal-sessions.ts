// OpenAPI details of a user's own sessions: the list (GET /portal/v1/sessions) and signing one
// device, or every other, out. The pipeline's own answers (401 without a session, 403 for a write
// from another origin) are added to every portal route in document.ts.

import { answer, curl, dataOf, errorAnswer, pathId, type Operations } from '../../../openapi/schema.ts';

const ORIGIN = "-H 'Origin: http://127.0.0.1:3000'";

const session = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'created_at', 'last_seen_at', 'client_address', 'user_agent', 'current'],
  properties: {
    id: { type: 'string', pattern: '^ses_[0-9a-f]{24}$', description: 'Names the session for DELETE; not the cookie, and nothing a cookie could be made from.' },
    created_at: { type: 'string', format: 'date-time', description: 'When it signed in' },
    last_seen_at: { type: 'string', format: 'date-time', description: 'Its last use, written at most every 5 minutes' },
    client_address: { type: ['string', 'null'], description: 'Where it signed in from, as the server sees it (TRUST_PROXY); null for sessions older than this field' },
    user_agent: { type: ['string', 'null'], maxLength: 256, description: "The browser's User-Agent at sign-in (at most 256 characters)" },
    current: { type: 'boolean', description: 'True for the session this request came with' },
  },
};

export const portalSessionOperations: Operations = {
  'GET /portal/v1/sessions': {
    operationId: 'portalListSessions',
    description: 'Your live sessions (at most 20), newest first: when each signed in and was last used, from which address and browser, and which one is this.',
    responses: { '200': answer('Your sessions', dataOf({ type: 'array', maxItems: 20, items: session })) },
    ...curl('curl -s -b cookies.txt http://127.0.0.1:3000/portal/v1/sessions'),
  },
  'DELETE /portal/v1/sessions': {
    operationId: 'portalEndOtherSessions',
    description: 'Signs out every session of yours but this one (audited; your activity shows `sessions.ended`). 200 with how many ended, also 0.',
    responses: { '200': answer('Every other session ended', dataOf({ type: 'object', required: ['ended'], properties: { ended: { type: 'integer', minimum: 0 } } })) },
    ...curl(`curl -s -b cookies.txt -X DELETE ${ORIGIN} http://127.0.0.1:3000/portal/v1/sessions`),
  },
  'DELETE /portal/v1/sessions/:id': {
    operationId: 'portalEndSession',
    description: 'Signs out one session of yours, by the id the list shows (audited; your activity shows `session.ended`). Ending this very session also clears its cookie.',
    parameters: [pathId('Session id (from GET /portal/v1/sessions)')],
    responses: {
      '204': { description: 'Ended', headers: { 'Set-Cookie': { description: 'Clears the cookie when the session ended is this one', schema: { type: 'string' } } } },
      '404': errorAnswer('No live session of yours has this id (another user’s, ended, or unknown)'),
    },
    ...curl(`curl -s -b cookies.txt -X DELETE ${ORIGIN} http://127.0.0.1:3000/portal/v1/sessions/ses_4f1c2a9b7e3d5c8a0b6f2e1d`),
  },
};
