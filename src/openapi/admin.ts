// OpenAPI paths of the operator API (/admin/v1), authenticated with the operator token.

import { answer, curl, dataOf, errorAnswer, jsonBody, listOf, PAGE_PARAMS, pathId, queryParam, ref } from './schema.ts';

const TOKEN = '-H "Authorization: Bearer $ADMIN_TOKEN"';
const security = [{ operatorToken: [] }];
const unauthorized = { '401': errorAnswer('Operator token missing or wrong') };
const permissions = { type: 'array', items: { type: 'string' }, description: 'Route entries, route prefixes or scopes (read:R / write:R).' };

export const adminPaths = {
  '/admin/v1/users': {
    post: {
      summary: 'Create a user',
      security,
      requestBody: jsonBody({
        type: 'object',
        additionalProperties: false,
        required: ['name'],
        properties: { name: { type: 'string' }, email: { type: 'string' }, role: { enum: ['creator', 'member'], default: 'member' }, bio: { type: 'string' } },
      }),
      responses: { '201': answer('Created', dataOf(ref('User'))), '400': errorAnswer('Invalid body'), '409': errorAnswer('Email taken'), ...unauthorized },
      ...curl(`curl -s ${TOKEN} -H 'Content-Type: application/json' -d '{"name":"Ada","email":"ada@example.com","role":"creator"}' http://127.0.0.1:3000/admin/v1/users`),
    },
    get: {
      summary: 'List users',
      security,
      parameters: PAGE_PARAMS,
      responses: { '200': answer('Users', listOf(ref('User'))), '400': errorAnswer('Bad page or limit'), ...unauthorized },
      ...curl(`curl -s ${TOKEN} 'http://127.0.0.1:3000/admin/v1/users?limit=50'`),
    },
  },
  '/admin/v1/users/{id}': {
    patch: {
      summary: "Change a user's role, name, email or bio",
      security,
      parameters: [pathId('User id')],
      requestBody: jsonBody({ type: 'object', additionalProperties: false, minProperties: 1, properties: { role: { enum: ['creator', 'member'] }, name: { type: 'string' }, email: { type: 'string' }, bio: { type: 'string' } } }),
      responses: { '200': answer('Updated', dataOf(ref('User'))), '400': errorAnswer('Invalid body'), '404': errorAnswer('User not found'), '409': errorAnswer('Email taken'), ...unauthorized },
      ...curl(`curl -s -X PATCH ${TOKEN} -H 'Content-Type: application/json' -d '{"role":"creator"}' http://127.0.0.1:3000/admin/v1/users/usr_8hJ3kQ0pLr5sT2vW9xYz`),
    },
  },
  '/admin/v1/keys': {
    post: {
      summary: 'Create an API key; the plain key is in this answer only',
      security,
      requestBody: jsonBody({
        type: 'object',
        additionalProperties: false,
        required: ['user_id'],
        properties: {
          user_id: { type: 'string' },
          name: { type: 'string' },
          permissions: { ...permissions, default: ['read:listings'] },
          rate_limit: { type: 'integer', minimum: 1, maximum: 1_000_000, default: 100 },
          prefix: { enum: ['mk', 'live'], default: 'live' },
        },
      }),
      responses: {
        '201': answer('Created', dataOf({ allOf: [ref('ApiKey'), { type: 'object', required: ['key'], properties: { key: { type: 'string' } } }] })),
        '400': errorAnswer('Invalid body (unknown user, bad permission entry, rate_limit out of range)'),
        ...unauthorized,
      },
      ...curl(`curl -s ${TOKEN} -H 'Content-Type: application/json' -d '{"user_id":"usr_8hJ3kQ0pLr5sT2vW9xYz","name":"browse","permissions":["read:listings"],"rate_limit":1000}' http://127.0.0.1:3000/admin/v1/keys`),
    },
    get: {
      summary: 'List API keys (no secrets)',
      security,
      parameters: [queryParam('user_id', { type: 'string' }, "Only this user's keys."), ...PAGE_PARAMS],
      responses: { '200': answer('Keys', listOf(ref('ApiKey'))), '400': errorAnswer('Bad query'), ...unauthorized },
      ...curl(`curl -s ${TOKEN} 'http://127.0.0.1:3000/admin/v1/keys?user_id=usr_8hJ3kQ0pLr5sT2vW9xYz'`),
    },
  },
  '/admin/v1/keys/{id}': {
    patch: {
      summary: "Change a key's permissions, rate limit or name (effective on the next request)",
      security,
      parameters: [pathId('Key id')],
      requestBody: jsonBody({ type: 'object', additionalProperties: false, minProperties: 1, properties: { permissions, rate_limit: { type: 'integer', minimum: 1, maximum: 1_000_000 }, name: { type: 'string' } } }),
      responses: { '200': answer('Updated', dataOf(ref('ApiKey'))), '400': errorAnswer('Invalid body'), '404': errorAnswer('Key not found'), '409': errorAnswer('Key is revoked'), ...unauthorized },
      ...curl(`curl -s -X PATCH ${TOKEN} -H 'Content-Type: application/json' -d '{"rate_limit":1000}' http://127.0.0.1:3000/admin/v1/keys/key_2bN7cD4fG6hJ8kL0mP1q`),
    },
    delete: {
      summary: 'Revoke a key (refused from the next request; idempotent)',
      security,
      parameters: [pathId('Key id')],
      responses: { '200': answer('Revoked', dataOf(ref('ApiKey'))), '404': errorAnswer('Key not found'), ...unauthorized },
      ...curl(`curl -s -X DELETE ${TOKEN} http://127.0.0.1:3000/admin/v1/keys/key_2bN7cD4fG6hJ8kL0mP1q`),
    },
  },
  '/admin/v1/stats': {
    get: {
      summary: 'Server and store statistics (writes, fsyncs, log size, compactions)',
      security,
      responses: { '200': answer('Statistics', dataOf({ type: 'object' })), ...unauthorized },
      ...curl(`curl -s ${TOKEN} http://127.0.0.1:3000/admin/v1/stats`),
    },
  },
  '/admin/v1/compact': {
    post: {
      summary: 'Compact the log now',
      security,
      responses: { '200': answer('Compacted', dataOf({ type: 'object', properties: { bytes_before: { type: 'integer' }, bytes_after: { type: 'integer' }, records: { type: 'integer' } } })), '503': errorAnswer('Disk unavailable'), ...unauthorized },
      ...curl(`curl -s -X POST ${TOKEN} http://127.0.0.1:3000/admin/v1/compact`),
    },
  },
  '/admin/v1/backup': {
    get: {
      summary: 'A consistent copy of the log, as JSON lines',
      security,
      responses: { '200': { description: 'The log (header line, then one record per line)', content: { 'application/x-ndjson': {} } }, ...unauthorized },
      ...curl(`curl -s ${TOKEN} -o backup.log http://127.0.0.1:3000/admin/v1/backup`),
    },
  },
};
