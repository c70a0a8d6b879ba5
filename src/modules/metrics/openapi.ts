// OpenAPI path of the metrics module: GET /metrics, behind the operator token.

import { curl, ADMIN_ERRORS, ADMIN_SECURITY, type Operations } from '../../openapi/schema.ts';

const TOKEN = '-H "Authorization: Bearer $ADMIN_TOKEN"';
const security = ADMIN_SECURITY;
const unauthorized = ADMIN_ERRORS;

export const metricsOperations: Operations = {
  'GET /metrics': {
      operationId: 'getMetrics',
      description: 'Prometheus text format 0.0.4: request counts by route pattern, method and status class; request durations by route pattern; 429s; store fsync durations; log size; webhook deliveries by outcome and pending; resident memory; event-loop delay.',
      security,
      responses: { '200': { description: 'Metrics', content: { 'text/plain': { schema: { type: 'string' } } } }, ...unauthorized },
      ...curl(`curl -s ${TOKEN} http://127.0.0.1:3000/metrics`),
  },
};
