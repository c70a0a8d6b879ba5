// The OpenAPI 3.1 document served at /openapi.json. Each area describes its own paths; this
// file adds the shared schemas and assembles them. A test checks that its paths and methods
// are exactly the router's.

import { adminPaths } from './admin.ts';
import { adminUsagePath, analyticsPaths } from './analytics.ts';
import { listingPaths } from './listings.ts';
import { SHARED_SCHEMAS } from './schemas.ts';
import { userPaths } from './users.ts';
import { adminWebhookPaths, webhookEvents, webhookPaths, webhookSchemas } from './webhooks.ts';

export function buildOpenApiDocument(): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Marketplace API',
      version: '1.0.0',
      description:
        'A self-hosted marketplace of listings (skills, agents, prompts, templates, datasets, tools). ' +
        'Send an API key as `Authorization: Bearer <key>` (or `X-API-Key`). Every /v1 answer carries ' +
        'X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset; every answer carries X-Request-Id.',
    },
    servers: [{ url: 'http://127.0.0.1:3000' }],
    security: [{ bearerKey: [] }, { headerKey: [] }],
    paths: {
      '/healthz': {
        get: {
          summary: 'Health check',
          security: [],
          responses: { '200': { description: 'Serving', content: { 'application/json': { schema: { type: 'object', properties: { status: { const: 'ok' } } } } } } },
        },
      },
      '/openapi.json': { get: { summary: 'This document', security: [], responses: { '200': { description: 'OpenAPI 3.1 document' } } } },
      ...listingPaths,
      ...userPaths,
      ...analyticsPaths,
      ...webhookPaths,
      ...adminPaths,
      ...adminUsagePath,
      ...adminWebhookPaths,
    },
    webhooks: webhookEvents,
    components: {
      securitySchemes: {
        bearerKey: { type: 'http', scheme: 'bearer', description: 'An API key: `market_live_…` or `mk_…`.' },
        headerKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
        operatorToken: { type: 'http', scheme: 'bearer', description: 'MARKETPLACE_ADMIN_TOKEN (or DATA_DIR/admin-token).' },
      },
      schemas: { ...SHARED_SCHEMAS, ...webhookSchemas },
    },
  };
}
