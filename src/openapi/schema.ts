// Small builders for the OpenAPI document, so each operation reads as a short description of
// the endpoint instead of a page of nested JSON.

import { MAX_LIMIT, MAX_PAGE } from '../http/lists.ts';

export type Schema = Record<string, unknown>;

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
  '429': errorAnswer('Rate limit exceeded; wait for Retry-After seconds.'),
};

/** For routes with no key and no input: only a request Node's HTTP parser refuses gets a 4xx. */
export const MALFORMED_REQUEST = { '4XX': errorAnswer('A request the HTTP parser refused (bad framing, headers too large, too slow)') };

/** The operator API's refusals before any handler runs. */
export const OPERATOR_ERRORS = {
  '401': errorAnswer('Operator token missing or wrong'),
  '429': errorAnswer('Too many failed authentications from this address (the limit /v1 keys share); wait for Retry-After seconds.'),
};
export const OPERATOR_SECURITY = [{ operatorToken: [] }];

/** A curl example for the endpoint, shown by tools that read x-codeSamples. */
export const curl = (source: string) => ({ 'x-codeSamples': [{ lang: 'curl', source }] });
