// OpenAPI details of the listing endpoints.

import { answer, PRICE_QUERY, curl, dataOf, errorAnswer, GATE_ERRORS, IF_MATCH, jsonBody, listOf, PAGE_PARAMS, pathId, PRECONDITION_FAILED, queryParam, ref, type Operations } from './schema.ts';

const KEY = '-H "Authorization: Bearer $KEY"';

export const listingOperations: Operations = {
  'GET /v1/listings': {
    operationId: 'listListings',
    description:
      'Active listings, filtered and sorted, one page at a time. Pages are cached for about 30 s and dropped on any listing write. ' +
      'Send If-None-Match with the ETag to get 304. min_price must not be greater than max_price (400 otherwise), which the parameter schemas cannot say.',
    parameters: [
      ...PAGE_PARAMS,
      queryParam('type', { enum: ['SKILL', 'AGENT', 'PROMPT', 'TEMPLATE', 'DATASET', 'TOOL'] }, 'Only this type.'),
      queryParam(
        'q',
        { type: 'string', maxLength: 200 },
        'Word-prefix search: every word of q must be the start of a word in the title, description or tags (words are split at ' +
          'anything but letters and digits; case and accents ignored). "zeb" finds "Zebra"; "ebra" does not.',
      ),
      queryParam('min_price', PRICE_QUERY, 'Lowest price (inclusive); 1 to 7 digits, at most 2 decimals, no sign or exponent.'),
      queryParam('max_price', PRICE_QUERY, 'Highest price (inclusive); not below min_price. Same form as min_price.'),
      queryParam('owner_id', { type: 'string' }, "Only this user's listings."),
      queryParam('sort', { enum: ['created_at', '-created_at', 'price', '-price', 'title'], default: '-created_at' }, 'Order; ties broken by id.'),
    ],
    responses: {
      '200': answer('A page of listings', listOf(ref('Listing'))),
      '400': errorAnswer('Bad query parameter (unknown or repeated name, bad page/limit/price/sort/type, q too long, min_price above max_price)'),
      ...GATE_ERRORS,
    },
    ...curl(`curl -s ${KEY} 'http://127.0.0.1:3000/v1/listings?type=AGENT&q=vector&sort=price&limit=10'`),
  },
  'POST /v1/listings': {
    operationId: 'createListing',
    description: 'Creates an active listing owned by the calling user, who must have the creator role. Strings are trimmed before their lengths are checked.',
    requestBody: jsonBody(ref('NewListing')),
    responses: {
      '201': answer('Created', dataOf(ref('Listing'))),
      '400': errorAnswer('Invalid body; `details` names each bad field'),
      '403': errorAnswer('The key lacks write:listings, or the user is not a creator'),
      '401': GATE_ERRORS['401'],
      '429': GATE_ERRORS['429'],
    },
    ...curl(`curl -s ${KEY} -H 'Content-Type: application/json' -H 'Idempotency-Key: 7d1c0a' -d '{"title":"Vector search skill","type":"SKILL","price":9.99,"tags":["search"]}' http://127.0.0.1:3000/v1/listings`),
  },
  'GET /v1/listings/:id': {
    operationId: 'getListing',
    description: 'One listing by id, archived ones included. Send If-None-Match with the ETag to get 304.',
    parameters: [pathId('Listing id')],
    responses: { '200': answer('The listing', dataOf(ref('Listing'))), '404': errorAnswer('Listing not found'), ...GATE_ERRORS },
    ...curl(`curl -s ${KEY} http://127.0.0.1:3000/v1/listings/lst_4fQ2kLm9XcVb7NpR1sTz`),
  },
  'PUT /v1/listings/:id': {
    operationId: 'updateListing',
    description: 'Changes the fields sent (at least one) of a listing you own. Archived listings cannot be changed. Strings are trimmed before their lengths are checked.',
    parameters: [pathId('Listing id'), IF_MATCH],
    requestBody: jsonBody(ref('ListingChanges'), 'Any non-empty subset of title, description, type, price, tags'),
    responses: {
      '200': answer('Updated', dataOf(ref('Listing'))),
      '400': errorAnswer('Invalid body'),
      '403': errorAnswer('Not your listing, or the key lacks write:listings'),
      '404': errorAnswer('Listing not found'),
      '409': errorAnswer('The listing is archived'),
      ...PRECONDITION_FAILED,
      '401': GATE_ERRORS['401'],
      '429': GATE_ERRORS['429'],
    },
    ...curl(`curl -s -X PUT ${KEY} -H 'Content-Type: application/json' -d '{"price":14.5}' http://127.0.0.1:3000/v1/listings/lst_4fQ2kLm9XcVb7NpR1sTz`),
  },
  'DELETE /v1/listings/:id': {
    operationId: 'archiveListing',
    description: 'Archives a listing you own: it leaves the lists but can still be read by id. Archiving an archived listing changes nothing and answers 200.',
    parameters: [pathId('Listing id'), IF_MATCH],
    responses: {
      '200': answer('Archived (or already archived, unchanged)', dataOf(ref('Listing'))),
      ...PRECONDITION_FAILED,
      '403': errorAnswer('Not your listing, or the key lacks write:listings'),
      '404': errorAnswer('Listing not found'),
      '401': GATE_ERRORS['401'],
      '429': GATE_ERRORS['429'],
    },
    ...curl(`curl -s -X DELETE ${KEY} http://127.0.0.1:3000/v1/listings/lst_4fQ2kLm9XcVb7NpR1sTz`),
  },
};
