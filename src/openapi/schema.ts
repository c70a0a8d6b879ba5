// Small builders for the OpenAPI document, so each path reads as a short description of the
// endpoint instead of a page of nested JSON.

export type Schema = Record<string, unknown>;

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
  queryParam('page', { type: 'integer', minimum: 1, default: 1 }, 'Page number, from 1.'),
  queryParam('limit', { type: 'integer', minimum: 1, maximum: 100, default: 20 }, 'Items per page, 1-100.'),
];

/** The errors every /v1 route can answer, whatever it does. */
export const GATE_ERRORS = {
  '401': errorAnswer('Missing, malformed, unknown or revoked API key (with a hint).'),
  '403': errorAnswer('The key lacks the permission; `required` lists entries that would allow it.'),
  '429': errorAnswer('Rate limit exceeded; wait for Retry-After seconds.'),
};

/** A curl example for the endpoint, shown by tools that read x-codeSamples. */
export const curl = (source: string) => ({ 'x-codeSamples': [{ lang: 'curl', source }] });
