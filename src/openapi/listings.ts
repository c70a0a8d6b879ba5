// OpenAPI paths of the listing endpoints.

import { answer, curl, dataOf, errorAnswer, GATE_ERRORS, jsonBody, listOf, PAGE_PARAMS, pathId, queryParam, ref } from './schema.ts';

const KEY = '-H "Authorization: Bearer $KEY"';
const rateHeaders = {
  'X-RateLimit-Limit': { schema: { type: 'integer' } },
  'X-RateLimit-Remaining': { schema: { type: 'integer' } },
  'X-RateLimit-Reset': { schema: { type: 'integer' }, description: 'Unix seconds' },
  ETag: { schema: { type: 'string' } },
};

export const listingPaths = {
  '/v1/listings': {
    get: {
      summary: 'List active listings',
      description: 'Pages are cached for ~30 s and dropped on any listing write. Send If-None-Match with the ETag to get 304.',
      parameters: [
        ...PAGE_PARAMS,
        queryParam('type', { enum: ['SKILL', 'AGENT', 'PROMPT', 'TEMPLATE', 'DATASET', 'TOOL'] }, 'Only this type.'),
        queryParam('q', { type: 'string', maxLength: 200 }, 'Case-insensitive text in title, description or tags.'),
        queryParam('min_price', { type: 'number', minimum: 0 }, 'Lowest price.'),
        queryParam('max_price', { type: 'number', minimum: 0 }, 'Highest price.'),
        queryParam('owner_id', { type: 'string' }, "Only this user's listings."),
        queryParam('sort', { enum: ['created_at', '-created_at', 'price', '-price', 'title'], default: '-created_at' }, 'Order; ties broken by id.'),
      ],
      responses: {
        '200': answer('A page of listings', listOf(ref('Listing')), rateHeaders),
        '304': answer('Not modified (If-None-Match matched)'),
        '400': errorAnswer('Bad query parameter (unknown name, bad page/limit/price/sort/type)'),
        ...GATE_ERRORS,
      },
      ...curl(`curl -s ${KEY} 'http://127.0.0.1:3000/v1/listings?type=AGENT&q=vector&sort=price&limit=10'`),
    },
    post: {
      summary: 'Create a listing (creators only)',
      parameters: [{ name: 'Idempotency-Key', in: 'header', required: false, schema: { type: 'string', maxLength: 255 }, description: 'Repeat-safe POST: same key and body within 24 h → the first answer again.' }],
      requestBody: jsonBody(ref('NewListing')),
      responses: {
        '201': answer('Created', dataOf(ref('Listing'))),
        '400': errorAnswer('Invalid body; `details` names each bad field'),
        '403': errorAnswer('The key lacks write:listings, or the user is not a creator'),
        '409': errorAnswer('A request with this Idempotency-Key is still in progress'),
        '413': errorAnswer('Body over 64 KiB'),
        '415': errorAnswer('Body is not application/json'),
        '422': errorAnswer('Idempotency-Key reused with a different request'),
        '401': GATE_ERRORS['401'],
        '429': GATE_ERRORS['429'],
      },
      ...curl(`curl -s ${KEY} -H 'Content-Type: application/json' -H 'Idempotency-Key: 7d1c0a' -d '{"title":"Vector search skill","type":"SKILL","price":9.99,"tags":["search"]}' http://127.0.0.1:3000/v1/listings`),
    },
  },
  '/v1/listings/{id}': {
    get: {
      summary: 'Get one listing (archived ones too)',
      parameters: [pathId('Listing id')],
      responses: { '200': answer('The listing', dataOf(ref('Listing')), rateHeaders), '304': answer('Not modified'), '404': errorAnswer('Listing not found'), ...GATE_ERRORS },
      ...curl(`curl -s ${KEY} http://127.0.0.1:3000/v1/listings/lst_4fQ2kLm9XcVb7NpR1sTz`),
    },
    put: {
      summary: 'Update your listing',
      parameters: [pathId('Listing id')],
      requestBody: jsonBody(ref('ListingChanges'), 'Any non-empty subset of title, description, type, price, tags'),
      responses: {
        '200': answer('Updated', dataOf(ref('Listing'))),
        '400': errorAnswer('Invalid body'),
        '403': errorAnswer('Not your listing, or the key lacks write:listings'),
        '404': errorAnswer('Listing not found'),
        '409': errorAnswer('The listing is archived'),
        '401': GATE_ERRORS['401'],
        '429': GATE_ERRORS['429'],
      },
      ...curl(`curl -s -X PUT ${KEY} -H 'Content-Type: application/json' -d '{"price":14.5}' http://127.0.0.1:3000/v1/listings/lst_4fQ2kLm9XcVb7NpR1sTz`),
    },
    delete: {
      summary: 'Archive your listing (idempotent)',
      parameters: [pathId('Listing id')],
      responses: {
        '200': answer('Archived (or already archived, unchanged)', dataOf(ref('Listing'))),
        '403': errorAnswer('Not your listing, or the key lacks write:listings'),
        '404': errorAnswer('Listing not found'),
        '401': GATE_ERRORS['401'],
        '429': GATE_ERRORS['429'],
      },
      ...curl(`curl -s -X DELETE ${KEY} http://127.0.0.1:3000/v1/listings/lst_4fQ2kLm9XcVb7NpR1sTz`),
    },
  },
};
