// OpenAPI paths of the operator's audit log and the operations route /readyz (/metrics is the
// metrics module's).

import { answer, curl, errorAnswer, listOf, MALFORMED_REQUEST, ADMIN_ERRORS, ADMIN_SECURITY, PAGE_PARAMS, queryParam, ref, type Operations } from './schema.ts';

const TOKEN = '-H "Authorization: Bearer $ADMIN_TOKEN"';
const security = ADMIN_SECURITY;
const unauthorized = ADMIN_ERRORS;

export const auditOperations: Operations = {
  'GET /admin/v1/audit': {
      operationId: 'adminListAudit',
      description: 'Every operator action, newest first. Each entry was written in the same store write as its change.',
      security,
      parameters: [
        queryParam('action', { type: 'string' }, 'Only this action, e.g. user.suspend.'),
        queryParam('target_id', { type: 'string' }, 'Only actions on this user, key or listing.'),
        ...PAGE_PARAMS,
      ],
      responses: { '200': answer('Audit entries', listOf(ref('AuditEntry'))), '400': errorAnswer('Bad query'), ...unauthorized },
      ...curl(`curl -s ${TOKEN} 'http://127.0.0.1:3000/admin/v1/audit?action=user.suspend'`),
  },
};

export const readinessOperations: Operations = {
  'GET /readyz': {
      operationId: 'getReadiness',
      description:
        'Ready (200) when the store accepts writes (a probe file is written and fsynced beside the log, at most once a second), the server is not stopping and, with many instances, the database and Redis answer and this instance is caught up with the others; otherwise 503 with the reasons. /healthz stays the liveness check.',
      security: [],
      responses: {
        '200': answer('Ready', { type: 'object', required: ['status'], properties: { status: { const: 'ready' } } }),
        '503': answer('Not ready', {
          type: 'object',
          required: ['status', 'reasons'],
          properties: { status: { const: 'not_ready' }, reasons: { type: 'array', items: { type: 'string' } } },
        }),
        ...MALFORMED_REQUEST,
      },
  },
};
