// OpenAPI details of the operator API (/admin/v1), authenticated with the operator token.

import { PROFILE_FIELDS } from './schemas.ts';
import { answer, curl, NOT_BLANK, PERMISSION_ENTRY, dataOf, errorAnswer, jsonBody, listOf, ADMIN_ERRORS, ADMIN_SECURITY, PAGE_PARAMS, pathId, queryParam, ref, type Operations } from './schema.ts';

const TOKEN = '-H "Authorization: Bearer $ADMIN_TOKEN"';
const security = ADMIN_SECURITY;
const unauthorized = ADMIN_ERRORS;
const permissions = { type: 'array', items: PERMISSION_ENTRY, description: 'Route entries, route prefixes or scopes (read:R / write:R); each must match the pattern, and a route or prefix must name a route the server has (400 otherwise).' };
const rateLimit = { type: 'integer', minimum: 1, maximum: 1_000_000 };
const keyName = { type: 'string', maxLength: 100, description: 'Trimmed; the length counts after trimming.' };
const keyPlan = { type: 'string', minLength: 1, maxLength: 40, pattern: NOT_BLANK, description: 'A plan id (GET /admin/v1/plans): sets rate_limit from the plan. Not together with rate_limit. Refused (409) for an expired key unless the same change gives it a future expires_at or null.' };
const expiresAt = { type: ['string', 'null'], format: 'date-time', description: 'A future instant (ISO 8601 with a time zone) after which the key is refused with 401 saying it expired; null: never.' };
const role = { enum: ['creator', 'member'] };
const userFields = { name: PROFILE_FIELDS.name, email: PROFILE_FIELDS.email, bio: PROFILE_FIELDS.bio };

export const adminOperations: Operations = {
  'POST /admin/v1/users': {
    operationId: 'adminCreateUser',
    description: 'Creates a user (a member unless role says creator). Strings are trimmed; emails are stored in NFC, lower-cased, and must be unique in that form.',
    security,
    requestBody: jsonBody({ type: 'object', additionalProperties: false, required: ['name'], properties: { ...userFields, role: { ...role, default: 'member' } } }),
    responses: { '201': answer('Created', dataOf(ref('AdminUser'))), '400': errorAnswer('Invalid body'), '409': errorAnswer('Email taken'), ...unauthorized },
    ...curl(`curl -s ${TOKEN} -H 'Content-Type: application/json' -d '{"name":"Ada","email":"ada@example.com","role":"creator"}' http://127.0.0.1:3000/admin/v1/users`),
  },
  'GET /admin/v1/users': {
    operationId: 'adminListUsers',
    description: 'Every user, oldest first, with email, role and whether they sign in with two-factor sign-in (`two_factor`); with `q`, only those whose name or email contains it (case-insensitive).',
    security,
    parameters: [queryParam('q', { type: 'string', maxLength: 200 }, 'Part of the name or email, any case.'), ...PAGE_PARAMS],
    responses: { '200': answer('Users', listOf(ref('AdminUser'))), '400': errorAnswer('Bad page or limit, or q longer than 200 characters'), ...unauthorized },
    ...curl(`curl -s ${TOKEN} 'http://127.0.0.1:3000/admin/v1/users?limit=50'`),
  },
  'PATCH /admin/v1/users/:id': {
    operationId: 'adminUpdateUser',
    description: 'Changes the fields sent (at least one). An empty bio clears it. A role change narrows every live key of the user to what the new role may hold (a member: no listing writes), in the same write, each audited as key.narrow.',
    security,
    parameters: [pathId('User id')],
    requestBody: jsonBody({ type: 'object', additionalProperties: false, minProperties: 1, properties: { ...userFields, role } }),
    responses: { '200': answer('Updated', dataOf(ref('AdminUser'))), '400': errorAnswer('Invalid body'), '404': errorAnswer('User not found'), '409': errorAnswer('Email taken'), ...unauthorized },
    ...curl(`curl -s -X PATCH ${TOKEN} -H 'Content-Type: application/json' -d '{"role":"creator"}' http://127.0.0.1:3000/admin/v1/users/usr_8hJ3kQ0pLr5sT2vW9xYz`),
  },
  'POST /admin/v1/keys': {
    operationId: 'adminCreateKey',
    description:
      'Creates an API key for a user. The plain key is in this answer only; the server keeps its SHA-256. Its limit comes from `plan`, or from `rate_limit` (then it is on no plan); with neither, the key is on the lowest self-service plan (Free, 100 requests per minute, by default).',
    security,
    requestBody: jsonBody({
      type: 'object',
      additionalProperties: false,
      required: ['user_id'],
      properties: {
        user_id: { type: 'string', minLength: 1, maxLength: 100, pattern: NOT_BLANK, description: 'Trimmed; the id of an existing user.' },
        name: { ...keyName, default: '' },
        permissions: { ...permissions, default: ['read:listings'] },
        rate_limit: rateLimit,
        plan: keyPlan,
        expires_at: expiresAt,
        prefix: { enum: ['mk', 'live'], default: 'live' },
      },
    }),
    responses: {
      '201': answer('Created', dataOf(ref('NewApiKey'))),
      '400': errorAnswer('Invalid body (unknown user, bad permission entry, rate_limit out of range, unknown plan, plan with rate_limit, expires_at not in the future)'),
      ...unauthorized,
    },
    ...curl(`curl -s ${TOKEN} -H 'Content-Type: application/json' -d '{"user_id":"usr_8hJ3kQ0pLr5sT2vW9xYz","name":"browse","permissions":["read:listings"],"rate_limit":1000}' http://127.0.0.1:3000/admin/v1/keys`),
  },
  'GET /admin/v1/keys': {
    operationId: 'adminListKeys',
    description: "Every key (or one user's), oldest first, never a secret.",
    security,
    parameters: [queryParam('user_id', { type: 'string' }, "Only this user's keys."), ...PAGE_PARAMS],
    responses: { '200': answer('Keys', listOf(ref('ApiKey'))), '400': errorAnswer('Bad query'), ...unauthorized },
    ...curl(`curl -s ${TOKEN} 'http://127.0.0.1:3000/admin/v1/keys?user_id=usr_8hJ3kQ0pLr5sT2vW9xYz'`),
  },
  'PATCH /admin/v1/keys/:id': {
    operationId: 'adminUpdateKey',
    description:
      "Changes a key's permissions, rate limit, plan, expiry or name; the change applies from the key's next request. A rate_limit of its own takes the key off its plan; a plan sets the limit from the plan.",
    security,
    parameters: [pathId('Key id')],
    requestBody: jsonBody({ type: 'object', additionalProperties: false, minProperties: 1, properties: { permissions, rate_limit: rateLimit, plan: keyPlan, expires_at: expiresAt, name: keyName } }),
    responses: { '200': answer('Updated', dataOf(ref('ApiKey'))), '400': errorAnswer('Invalid body'), '404': errorAnswer('Key not found'), '409': errorAnswer('Key is revoked, or expired and the change names a plan'), ...unauthorized },
    ...curl(`curl -s -X PATCH ${TOKEN} -H 'Content-Type: application/json' -d '{"rate_limit":1000}' http://127.0.0.1:3000/admin/v1/keys/key_2bN7cD4fG6hJ8kL0mP1q`),
  },
  'DELETE /admin/v1/keys/:id': {
    operationId: 'adminRevokeKey',
    description: 'Revokes a key: it is refused from its next request. Revoking a revoked key changes nothing.',
    security,
    parameters: [pathId('Key id')],
    responses: { '200': answer('Revoked', dataOf(ref('ApiKey'))), '404': errorAnswer('Key not found'), ...unauthorized },
    ...curl(`curl -s -X DELETE ${TOKEN} http://127.0.0.1:3000/admin/v1/keys/key_2bN7cD4fG6hJ8kL0mP1q`),
  },
  'POST /admin/v1/keys/:id/roll': {
    operationId: 'adminRollKey',
    description:
      'Gives the key a new secret, keeping its id, permissions, plan and usage. The previous secret keeps working for grace_seconds (0 to 604800, default 0), then is refused with 401. The new plain key is in this answer only.',
    security,
    parameters: [pathId('Key id')],
    requestBody: jsonBody({ type: 'object', additionalProperties: false, properties: { grace_seconds: { type: 'integer', minimum: 0, maximum: 604_800, default: 0 } } }),
    responses: {
      '201': answer('Rolled', dataOf(ref('RolledApiKey'))),
      '400': errorAnswer('grace_seconds out of range'),
      '404': errorAnswer('Key not found'),
      '409': errorAnswer('Key is revoked or expired (an expired key can no longer be rolled)'),
      ...unauthorized,
    },
    ...curl(`curl -s -X POST ${TOKEN} -H 'Content-Type: application/json' -d '{"grace_seconds":3600}' http://127.0.0.1:3000/admin/v1/keys/key_2bN7cD4fG6hJ8kL0mP1q/roll`),
  },
  'GET /admin/v1/stats': {
    operationId: 'adminStats',
    description: 'The version, uptime, user and key counts, the store (writes, fsyncs and log size for the file or commits for PostgreSQL, compactions), and where records and rate limits are kept.',
    security,
    responses: {
      '200': answer(
        'Statistics',
        dataOf({
          type: 'object',
          required: ['version', 'uptime_seconds', 'users', 'keys', 'store'],
          properties: {
            version: { type: 'string' },
            uptime_seconds: { type: 'integer', minimum: 0 },
            users: { type: 'integer', minimum: 0 },
            keys: { type: 'integer', minimum: 0 },
            store: {
              type: 'object',
              description: "The store's counters since start. The file log reports fsyncs and logBytes; PostgreSQL reports commits instead.",
              required: ['writes', 'batches', 'conflicts', 'conflictsByCollection', 'opsInLog', 'liveRecords', 'compactions', 'writable', 'lastWriteError'],
              properties: {
                writes: { type: 'integer', minimum: 0, description: 'Operations acknowledged.' },
                batches: { type: 'integer', minimum: 0, description: 'Group commits.' },
                conflicts: { type: 'integer', minimum: 0, description: "Writes decided again because another instance changed what they read (a shared database only)." },
                conflictsByCollection: { type: 'object', additionalProperties: { type: 'integer', minimum: 0 }, description: 'The same writes by the collections they were to change (a write counts once under each).' },
                fsyncs: { type: 'integer', minimum: 0, description: "The log file's fsyncs (the file log only)." },
                commits: { type: 'integer', minimum: 0, description: 'Batches committed to PostgreSQL (PostgreSQL only).' },
                opsInLog: { type: 'integer', minimum: 0 },
                liveRecords: { type: 'integer', minimum: 0 },
                logBytes: { type: 'integer', minimum: 0, description: "The log file's size (the file log only)." },
                compactions: { type: 'integer', minimum: 0 },
                writable: { type: 'boolean', description: 'False after a failed write until the next one succeeds.' },
                lastWriteError: { type: ['string', 'null'] },
              },
            },
            backends: {
              type: 'object',
              description: 'Where records and rate-limit windows are kept, in words: e.g. records "file log in ./data" or "PostgreSQL at db:5432/marketplace (TLS)", limits "in this process" or "Redis at cache:6379 (TLS)".',
              required: ['records', 'limits'],
              properties: { records: { type: 'string' }, limits: { type: 'string' } },
            },
          },
        }),
      ),
      ...unauthorized,
    },
    ...curl(`curl -s ${TOKEN} http://127.0.0.1:3000/admin/v1/stats`),
  },
  'POST /admin/v1/compact': {
    operationId: 'adminCompact',
    description: 'Rewrites the log with the live records only.',
    security,
    responses: {
      '200': answer(
        'Compacted',
        dataOf({
          type: 'object',
          required: ['bytes_before', 'bytes_after', 'records'],
          properties: { bytes_before: { type: 'integer' }, bytes_after: { type: 'integer' }, records: { type: 'integer' } },
        }),
      ),
      '503': errorAnswer('Disk unavailable'),
      ...unauthorized,
    },
    ...curl(`curl -s -X POST ${TOKEN} http://127.0.0.1:3000/admin/v1/compact`),
  },
  'GET /admin/v1/backup': {
    operationId: 'adminBackup',
    description: 'A consistent copy of the log: a header line, then one record per line. It is itself a valid log.',
    security,
    responses: {
      '200': { description: 'The log as JSON lines', content: { 'application/x-ndjson': { schema: { type: 'string' } } } },
      ...unauthorized,
    },
    ...curl(`curl -s ${TOKEN} -o backup.log http://127.0.0.1:3000/admin/v1/backup`),
  },
};
