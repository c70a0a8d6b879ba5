// The OpenAPI 3.1 document served at /openapi.json, generated from the routers' own route
// declarations: every route becomes one operation (its path, method, summary and tag come
// from the route), completed by the details each area describes under src/openapi/. A route
// without details, or details without a route, stops the build, so the two cannot drift.

import type { ModuleName } from '../config.ts';
import type { ApiRoute, AdminRoute, PortalRoute, PublicRoute } from '../http/route.ts';
import { adminOperations } from './admin.ts';
import { analyticsOperations, analyticsSchemas } from './analytics.ts';
import { listingOperations } from './listings.ts';
import { auditOperations, readinessOperations } from './operations.ts';
import { errorAnswer, MALFORMED_REQUEST, type OpenApiPart, type OperationDetails, type Operations, type Schema } from './schema.ts';
import { SHARED_SCHEMAS } from './schemas.ts';
import { userOperations } from './users.ts';
import { webhookEvents, webhookOperations, webhookSchemas } from './webhooks.ts';
import { VERSION } from '../version.ts';

export interface DocumentedRoutes {
  api: readonly ApiRoute[];
  operator: readonly AdminRoute[];
  public: readonly PublicRoute[];
  portal: readonly PortalRoute[];
  /** What the loaded modules add: their operations, tags and security schemes. */
  parts: readonly OpenApiPart[];
  /** The modules loaded: some change what the description says and what every route of a kind documents (Idempotency-Key). */
  modules: readonly ModuleName[];
}

const TAGS = [
  { name: 'listings', description: 'Skills, agents, prompts, templates, datasets and tools offered on the marketplace.' },
  { name: 'users', description: 'Your own user and public profiles.' },
  { name: 'analytics', description: 'API usage of your key and the performance of your listings.' },
  { name: 'webhooks', description: 'Receivers of events about your listings and profile, and the events they get.' },
  { name: 'operator', description: 'The operator API: users, keys, moderation, the audit log, statistics, metrics, compaction and backups (operator token).' },
];
/** After the modules' own tags, last. */
const SERVICE_TAG = { name: 'service', description: 'Health, readiness and this document; no key needed.' };

const serviceOperations: Operations = {
  'GET /': {
    operationId: 'getHome',
    description:
      'Where things are: the API, the operator dashboard, this document, the health check and the docs. ' +
      'A browser (Accept: text/html) gets the same links as a small HTML page.',
    security: [],
    responses: {
      '200': {
        description: 'Links, relative to the server',
        content: {
          'application/json': {
            schema: {
              type: 'object',
              required: ['name', 'version', 'api', 'dashboard', 'portal', 'openapi', 'health', 'docs', 'hint'],
              properties: {
                name: { type: 'string' },
                version: { type: 'string' },
                api: { type: 'string' },
                dashboard: { type: 'string' },
                portal: { type: 'string' },
                openapi: { type: 'string' },
                health: { type: 'string' },
                docs: { type: 'string' },
                hint: { type: 'string' },
              },
            },
          },
          'text/html': { schema: { type: 'string' } },
        },
      },
      ...MALFORMED_REQUEST,
    },
  },
  'GET /healthz': {
    operationId: 'getHealth',
    description: 'Answers 200 while the server serves requests, with the version it runs. HEAD works too.',
    security: [],
    responses: {
      '200': {
        description: 'Serving',
        content: { 'application/json': { schema: { type: 'object', required: ['status', 'version'], properties: { status: { const: 'ok' }, version: { type: 'string' } } } } },
      },
      ...MALFORMED_REQUEST,
    },
  },
  'GET /openapi.json': {
    operationId: 'getOpenApiDocument',
    description: 'This document, made from the routes the server serves.',
    security: [],
    responses: { '200': { description: 'OpenAPI 3.1 document', content: { 'application/json': { schema: { type: 'object' } } } }, ...MALFORMED_REQUEST },
  },
};

const IDEMPOTENCY_KEY = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' },
  description:
    '1 to 255 visible ASCII characters (anything else is 400), scoped to your API key. The first 2xx answer is stored with the change; ' +
    'the same key and the same request within 24 h get that answer again (with `Idempotent-Replayed: true`) and change nothing. ' +
    'The same key with another request is 422; while the first is still running, 409.',
};

const DESCRIPTION_START = [
  'A self-hosted marketplace of listings (skills, agents, prompts, templates, datasets, tools).',
  '',
  'Send an API key as `Authorization: Bearer <key>` (or `X-API-Key`). Every /v1 answer carries X-RateLimit-Limit, ',
  'X-RateLimit-Remaining and X-RateLimit-Reset and `Cache-Control: private, no-cache`; every answer carries X-Request-Id.',
];
/** After the modules' description lines. */
const DESCRIPTION_END = [
  '',
  'String fields are trimmed before they are checked and stored; lengths count Unicode code points after trimming.',
  'Successful GET answers carry an ETag (one per encoding, made from the content alone: equal on every instance and after a restart) and answer 304 to a matching If-None-Match. HEAD works on every GET route.',
];
/** The description's last line, with the compression module. */
const COMPRESSION_LINE = 'Answers of 1 KiB or more are compressed (br or gzip) when Accept-Encoding allows it.';
/** The webhook events every server sends; the modules' parts name theirs. */
const CORE_WEBHOOK_EVENTS = ['listing.created', 'listing.updated', 'listing.archived', 'listing.removed', 'user.updated', 'ping'];

export function buildOpenApiDocument(routes: DocumentedRoutes): Record<string, unknown> {
  const details: Operations = {
    ...serviceOperations,
    ...listingOperations,
    ...userOperations,
    ...analyticsOperations,
    ...webhookOperations,
    ...adminOperations,
    ...auditOperations,
    ...readinessOperations,
    ...Object.assign({}, ...routes.parts.map((part) => part.operations)),
  };
  const unused = new Set(Object.keys(details));
  const paths: Record<string, Record<string, Schema>> = {};
  const add = (route: PublicRoute | ApiRoute | PortalRoute, tag: string): void => {
    const label = `${route.method} ${route.pattern}`;
    const operation = details[label];
    if (operation === undefined) throw new Error(`OpenAPI: the route ${label} has no operation details under src/openapi/`);
    unused.delete(label);
    const path = route.pattern.replace(/:([A-Za-z_]+)/g, '{$1}');
    paths[path] ??= {};
    paths[path][route.method.toLowerCase()] = operationOf(route, tag, operation, routes.modules.includes('idempotency'));
  };
  for (const route of routes.api) add(route, route.resource);
  for (const route of routes.operator) add(route, 'operator');
  for (const route of routes.public) add(route, 'service');
  for (const route of routes.portal) add(route, 'portal');
  if (unused.size > 0) throw new Error(`OpenAPI: operation details for routes that do not exist: ${[...unused].join(', ')}`);
  const webhooks = sentEvents(routes.parts);

  return {
    openapi: '3.1.0',
    info: {
      title: 'Marketplace API',
      version: VERSION,
      description: [
        ...DESCRIPTION_START,
        ...routes.parts.flatMap((part) => part.descriptionLines ?? []),
        ...DESCRIPTION_END,
        ...(routes.modules.includes('compression') ? [COMPRESSION_LINE] : []),
      ].join('\n'),
      contact: { name: 'The operator of this server' },
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: '/' }],
    security: [{ bearerKey: [] }, { headerKey: [] }],
    tags: [...TAGS, ...routes.parts.flatMap((part) => part.tags ?? []), SERVICE_TAG],
    paths,
    webhooks,
    components: {
      securitySchemes: {
        bearerKey: { type: 'http', scheme: 'bearer', description: 'An API key: `market_live_…` or `mk_…`.' },
        headerKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
        operatorToken: { type: 'http', scheme: 'bearer', description: 'MARKETPLACE_ADMIN_TOKEN (or DATA_DIR/admin-token).' },
        ...Object.assign({}, ...routes.parts.map((part) => part.securitySchemes ?? {})),
      },
      schemas: referencedOnly({ ...SHARED_SCHEMAS, ...analyticsSchemas, ...webhookSchemas }, { paths, webhooks }),
    },
  };
}

/** The webhook events this server sends: the core's and those of the loaded modules, in the order webhooks.ts describes them. */
function sentEvents(parts: readonly OpenApiPart[]): Record<string, Schema> {
  const sent = new Set([...CORE_WEBHOOK_EVENTS, ...parts.flatMap((part) => part.webhookEvents ?? [])]);
  return Object.fromEntries(Object.entries(webhookEvents).filter(([type]) => sent.has(type)));
}

/** The schemas the document refers to, directly or through another schema (a module left out leaves its schemas out). */
function referencedOnly(schemas: Record<string, Schema>, document: object): Record<string, Schema> {
  const referenced = new Set<string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (typeof node !== 'object' || node === null) return;
    for (const [field, value] of Object.entries(node)) {
      if (field === '$ref' && typeof value === 'string' && value.startsWith('#/components/schemas/')) {
        const name = value.slice('#/components/schemas/'.length);
        if (!referenced.has(name)) {
          referenced.add(name);
          visit(schemas[name]);
        }
      } else visit(value);
    }
  };
  visit(document);
  return Object.fromEntries(Object.entries(schemas).filter(([name]) => referenced.has(name)));
}

/**
 * One operation: the route's own summary and tag, its details, and what the pipeline adds to
 * every route of its kind (304 on GET, 400/413/415 with a body, Idempotency-Key on a /v1 POST
 * when `idempotencyKeys`, 400 for %00 in the URL on every route).
 */
function operationOf(route: PublicRoute | ApiRoute | PortalRoute, tag: string, details: OperationDetails, idempotencyKeys: boolean): Schema {
  const responses: Record<string, Schema> = { ...details.responses };
  const parameters = [...(details.parameters ?? [])];
  // Node's HTTP parser answers 400 on any route (bad request line, header or framing).
  if (!('4XX' in responses)) responses['400'] ??= errorAnswer('The request is not valid HTTP/1.1 (bad request line, header or body framing), or its input is refused');
  let security = details.security;
  if (tag === 'portal') {
    // The portal's gate: writes only from the server's own origin, a session unless the route is open.
    if (route.method !== 'GET') {
      const refused = 'A write from another origin (Origin must be this server\'s own, or Sec-Fetch-Site: same-origin), or a body that is not JSON';
      responses['403'] = errorAnswer(responses['403'] ? `${String(responses['403'].description)}; or ${refused.charAt(0).toLowerCase()}${refused.slice(1)}` : refused);
    }
    if (!('open' in route && route.open === true)) {
      responses['401'] ??= errorAnswer('No live session: sign in first');
      security ??= [{ sessionCookie: [] }];
    }
  }
  if (details.requestBody) {
    responses['400'] ??= errorAnswer('Body not valid UTF-8 or JSON, nested deeper than 32 levels, or holding U+0000 or an unpaired surrogate');
    responses['413'] ??= errorAnswer('Body over 64 KiB');
    // The portal's gate refuses a body that is not JSON with its 403 (above), before any 415.
    if (tag !== 'portal') responses['415'] ??= errorAnswer('Body is not application/json');
  }
  if (route.pattern.startsWith('/v1/') || route.pattern.startsWith('/admin/')) {
    responses['503'] ??= errorAnswer(
      'Unavailable for now (Retry-After): the store cannot save changes, the shared rate limiter cannot be reached, or (many instances) this instance cannot vouch it has caught up with the others',
    );
  }
  if (route.method === 'GET') responses['304'] ??= { description: 'Not modified: If-None-Match matched the ETag of this representation' };
  if (route.method === 'POST' && 'resource' in route && idempotencyKeys) {
    parameters.push(IDEMPOTENCY_KEY);
    responses['400'] ??= errorAnswer('Invalid Idempotency-Key');
    responses['409'] = errorAnswer(
      responses['409'] ? `${String(responses['409'].description)}; or a request with this Idempotency-Key is still running` : 'A request with this Idempotency-Key is still running',
    );
    responses['422'] = errorAnswer('Idempotency-Key already used with a different request');
  }
  responses['400'] ??= errorAnswer('The path or query holds %00 (U+0000)');
  const { operationId, ...rest } = details;
  return {
    operationId,
    summary: route.summary,
    tags: [tag],
    ...rest,
    ...(security ? { security } : {}),
    ...(parameters.length > 0 ? { parameters } : {}),
    responses,
  };
}
