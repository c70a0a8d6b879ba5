// OpenAPI paths of the moderation module: one user with counts, erasure, suspensions, and every
// listing with removal and restore.

import { answer, curl, NOT_BLANK, dataOf, errorAnswer, jsonBody, listOf, ADMIN_ERRORS, ADMIN_SECURITY, PAGE_PARAMS, pathId, queryParam, ref, type Operations } from '../../openapi/schema.ts';

const TOKEN = '-H "Authorization: Bearer $ADMIN_TOKEN"';
const security = ADMIN_SECURITY;
const unauthorized = ADMIN_ERRORS;
const reasonBody = jsonBody({
  type: 'object',
  additionalProperties: false,
  required: ['reason'],
  properties: { reason: { type: 'string', minLength: 1, maxLength: 500, pattern: NOT_BLANK, description: 'Why; trimmed (the length counts after trimming), not only white space; kept on the record and in the audit log.' } },
});
const counts = {
  type: 'object',
  required: ['listings', 'keys', 'active_keys', 'webhooks'],
  properties: { listings: { type: 'integer' }, keys: { type: 'integer' }, active_keys: { type: 'integer' }, webhooks: { type: 'integer' } },
};
const userWithCounts = { allOf: [ref('AdminUser'), { type: 'object', required: ['counts'], properties: { counts } }] };
const USER = 'usr_8hJ3kQ0pLr5sT2vW9xYz';
const LISTING = 'lst_4fQ2kLm9XcVb7NpR1sTz';

export const moderationOperations: Operations = {
  'GET /admin/v1/users/:id': {
      operationId: 'adminGetUser',
      description: 'One user whatever their status (an erased user shows emptied fields and status erased), with counts of their listings (any status), keys (and unrevoked ones) and webhooks.',
      security,
      parameters: [pathId('User id')],
      responses: { '200': answer('The user', dataOf(userWithCounts)), '404': errorAnswer('User not found'), ...unauthorized },
      ...curl(`curl -s ${TOKEN} http://127.0.0.1:3000/admin/v1/users/${USER}`),
  },
  'DELETE /admin/v1/users/:id': {
      operationId: 'adminEraseUser',
      description: 'Erasure: keys revoked (their names emptied), webhooks (and their pending deliveries) removed, every listing of the user set to removed with its title, description and tags emptied, stored replies forgotten, name, email, bio, website and avatar_url erased. Every text the server wrote about the user, her keys, webhooks or listings, or about her own portal actions (audit entries, suspension and removal reasons) reads "[erased]"; the operator\'s text about anyone else that mentions one of her current or earlier values does too. The erasure is audited with counts only. GET /v1/users/:id answers 404. The log is compacted before the answer (on PostgreSQL, the table vacuumed), so the erased data no longer exists in DATA_DIR, in any table row or in later backups (backups made earlier still hold it).',
      security,
      parameters: [pathId('User id')],
      responses: {
        '200': answer('Erased (asking again compacts again and answers the same)', dataOf(ref('AdminUser'))),
        '404': errorAnswer('User not found'),
        '503': errorAnswer('Disk unavailable: the erasure or the compaction did not complete; ask again'),
        ...unauthorized,
      },
      ...curl(`curl -s -X DELETE ${TOKEN} http://127.0.0.1:3000/admin/v1/users/${USER}`),
  },
  'POST /admin/v1/users/:id/suspend': {
      operationId: 'adminSuspendUser',
      description: "Their keys get 403 on every /v1 request (after the key and limit checks), their listings leave lists and answer 404 by id to everyone else, their webhooks receive nothing (pending deliveries are dropped).",
      security,
      parameters: [pathId('User id')],
      requestBody: reasonBody,
      responses: { '200': answer('Suspended', dataOf(ref('AdminUser'))), '400': errorAnswer('Missing reason'), '404': errorAnswer('User not found'), '409': errorAnswer('Already suspended'), ...unauthorized },
      ...curl(`curl -s ${TOKEN} -H 'Content-Type: application/json' -d '{"reason":"spam"}' http://127.0.0.1:3000/admin/v1/users/${USER}/suspend`),
  },
  'POST /admin/v1/users/:id/unsuspend': {
      operationId: 'adminUnsuspendUser',
      description: 'Back to status active: keys work again and listings reappear.',
      security,
      parameters: [pathId('User id')],
      responses: { '200': answer('Active again', dataOf(ref('AdminUser'))), '404': errorAnswer('User not found'), '409': errorAnswer('Not suspended'), ...unauthorized },
      ...curl(`curl -s -X POST ${TOKEN} http://127.0.0.1:3000/admin/v1/users/${USER}/unsuspend`),
  },
  'GET /admin/v1/listings': {
      operationId: 'adminListListings',
      description: 'Every listing whatever its status or its owner\'s, newest first (ties by id, highest first).',
      security,
      parameters: [
        queryParam('status', { enum: ['active', 'archived', 'removed'] }, 'Only listings with this status.'),
        queryParam('owner_id', { type: 'string' }, "Only this user's listings."),
        queryParam('q', { type: 'string', maxLength: 200 }, 'Case-insensitive text in title, description or tags.'),
        ...PAGE_PARAMS,
      ],
      responses: { '200': answer('Listings', listOf(ref('Listing'))), '400': errorAnswer('Bad query'), ...unauthorized },
      ...curl(`curl -s ${TOKEN} 'http://127.0.0.1:3000/admin/v1/listings?status=removed&limit=50'`),
  },
  'POST /admin/v1/listings/:id/remove': {
      operationId: 'adminRemoveListing',
      description: "Status removed with removal_reason and removed_at: gone from lists, 404 by id to everyone but its owner, the owner's PUT and DELETE answer 409, the owner's webhooks get listing.removed.",
      security,
      parameters: [pathId('Listing id')],
      requestBody: reasonBody,
      responses: { '200': answer('Removed', dataOf(ref('Listing'))), '400': errorAnswer('Missing reason'), '404': errorAnswer('Listing not found'), '409': errorAnswer('Already removed'), ...unauthorized },
      ...curl(`curl -s ${TOKEN} -H 'Content-Type: application/json' -d '{"reason":"infringes a trademark"}' http://127.0.0.1:3000/admin/v1/listings/${LISTING}/remove`),
  },
  'POST /admin/v1/listings/:id/restore': {
      operationId: 'adminRestoreListing',
      description: 'A removed listing becomes active again (removal_reason and removed_at are dropped).',
      security,
      parameters: [pathId('Listing id')],
      responses: { '200': answer('Active again', dataOf(ref('Listing'))), '404': errorAnswer('Listing not found'), '409': errorAnswer('Not removed, or its owner was erased'), ...unauthorized },
      ...curl(`curl -s -X POST ${TOKEN} http://127.0.0.1:3000/admin/v1/listings/${LISTING}/restore`),
  },
};
