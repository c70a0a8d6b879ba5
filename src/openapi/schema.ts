// Small builders for the OpenAPI document, so each operation reads as a short description of
// the endpoint instead of a page of nested JSON.

import { PERMISSION_METHODS } from '../auth/key-rules.ts';
import { MAX_LIMIT, MAX_PAGE } from '../http/lists.ts';
import { RESOURCES } from '../http/route.ts';

export type Schema = Record<string, unknown>;

/** The server trims strings and refuses one left empty: at least one character that is not white space. */
export const NOT_BLANK = '\\S';

/**
 * An address as the server accepts it (src/domain/email.ts), before its further checks: a local
 * part, "@", and a domain of two or more non-empty labels; surrounding white space is trimmed.
 */
export const EMAIL_SHAPE = '^\\s*[^\\s@]+@[^\\s@.]+(\\.[^\\s@.]+)+\\s*$';

/**
 * A permission entry (src/auth/key-rules.ts): a scope of a known resource, or a method and a
 * /v1 route, concrete path or prefix ending in "/*". The route must exist, which no pattern says.
 */
export const PERMISSION_ENTRY: Schema = {
  type: 'string',
  pattern: `^(?:(?:read|write):(?:${RESOURCES.join('|')})|(?:${PERMISSION_METHODS.join('|')}) /v1(?:/[A-Za-z0-9_.~:-]+)*(?:/\\*)?)$`,
  description:
    'A scope (`read:listings`, `write:webhooks`; write = POST, PUT, PATCH and DELETE), a route (`GET /v1/listings`, `PUT /v1/listings/:id`), a concrete path (`GET /v1/listings/lst_…`) or a prefix (`GET /v1/listings/*`). A route or prefix must name at least one route the server has.',
  examples: ['read:listings', 'GET /v1/listings/:id', 'GET /v1/listings/*'],
};

/** A price in a query string: digits, at most 2 decimals, below 10,000,000, no sign or exponent. */
export const PRICE_QUERY: Schema = {
  type: 'number',
  minimum: 0,
  exclusiveMaximum: 10_000_000,
  multipleOf: 0.01,
  description: 'Written as 1 to 7 digits with at most 2 decimals (`^\\d{1,7}(\\.\\d{1,2})?$`): no sign, no exponent.',
};

/**
 * What the document says about one route beyond what the route declares itself. The route
 * gives the path, the method, the summary and the tag; this gives the rest.
 */
export interface OperationDetails {
  operationId: string;
  description: string;
  parameters?: Schema[];
  requestBody?: Schema;
  responses: Record<string, Schema>;
  security?: Array<Record<string, string[]>>;
  'x-codeSamples'?: Array<{ lang: string; source: string }>;
}

/** Operation details keyed by the route's own "METHOD /pattern" (e.g. "GET /v1/listings/:id"). */
export type Operations = Record<string, OperationDetails>;

/** A module's part of the document (src/module.ts): its operations, and its tags and security schemes if any. */
export interface OpenApiPart {
  operations: Operations;
  tags?: readonly { name: string; description: string }[];
  securitySchemes?: Record<string, Schema>;
  /** Lines of the document's description about what the part adds to every answer. */
  descriptionLines?: readonly string[];
  /** The webhook events the part sends (the document lists the core's and these). */
  webhookEvents?: readonly string[];
}

export const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });

export const jsonBody = (schema: Schema, description = 'JSON body') => ({
  required: true,
  description,
  content: { 'application/json': { schema } },
});

export const dataOf = (schema: Schema): Schema => ({ type: 'object', required: ['data'], properties: { data: schema } });

export const listOf = (item: Schema): Schema => ({
  type: 'object',
  required: ['data', 'pagination'],
  properties: { data: { type: 'array', items: item }, pagination: ref('Pagination') },
});

export function answer(description: string, schema?: Schema, headers?: Record<string, unknown>) {
  return {
    description,
    ...(headers ? { headers } : {}),
    ...(schema ? { content: { 'application/json': { schema } } } : {}),
  };
}

export const errorAnswer = (description: string) => answer(description, ref('Error'));

export const queryParam = (name: string, schema: Schema, description: string) => ({ name, in: 'query', required: false, schema, description });

export const pathId = (description: string) => ({ name: 'id', in: 'path', required: true, schema: { type: 'string' }, description });

export const PAGE_PARAMS = [
  queryParam('page', { type: 'integer', minimum: 1, maximum: MAX_PAGE, default: 1 }, `Page number, from 1 to ${MAX_PAGE}.`),
  queryParam('limit', { type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: 20 }, `Items per page, 1-${MAX_LIMIT}.`),
];

/** Optimistic concurrency on a change: the header, and the answer when it no longer matches. */
export const IF_MATCH = {
  name: 'If-Match',
  in: 'header',
  required: false,
  schema: { type: 'string' },
  description:
    'The ETag you read (plain or of a compressed answer), or `*`. When the resource has changed since, nothing is changed and the answer is 412.',
};
export const PRECONDITION_FAILED = { '412': errorAnswer('If-Match does not name the current ETag: the resource changed since you read it; nothing was changed') };

/** The errors every /v1 route can answer, whatever it does. */
export const GATE_ERRORS = {
  '401': errorAnswer('Missing, malformed, unknown, revoked or expired API key, or a rolled secret past its grace (with a hint).'),
  '403': errorAnswer('The key lacks the permission; `required` lists entries that would allow it.'),
  '429': errorAnswer(
    "Rate limit exceeded, the key used its share of the server's time for the last minute (its CPU budget), or the plan's quota for the day or month is used up (the body then has `quota`, and Retry-After is the time until the period ends); wait for Retry-After seconds.",
  ),
};

/** For routes with no key and no input: only a request Node's HTTP parser refuses gets a 4xx. */
export const MALFORMED_REQUEST = { '4XX': errorAnswer('A request the HTTP parser refused (bad framing, headers too large, too slow)') };

/** The operator API's refusals before any handler runs. */
export const ADMIN_ERRORS = {
  '401': errorAnswer('Operator token missing or wrong'),
  '429': errorAnswer('Too many failed authentications from this address (the limit /v1 keys share); wait for Retry-After seconds.'),
};
export const ADMIN_SECURITY = [{ operatorToken: [] }];

/** A curl example for the endpoint, shown by tools that read x-codeSamples. */
export const curl = (source: string) => ({ 'x-codeSamples': [{ lang: 'curl', source }] });
