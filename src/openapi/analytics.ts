// OpenAPI paths of the analytics endpoints: a key's usage (/v1 for the calling key, /admin/v1
// for any key; one schema serves both) and the performance of the caller's own listings.

import { ISO_TIME } from '../analytics/time-range.ts';
import { answer, curl, dataOf, errorAnswer, GATE_ERRORS, ADMIN_ERRORS, ADMIN_SECURITY, PAGE_PARAMS, pathId, queryParam, ref, type Operations, type Schema } from './schema.ts';

const KEY = '-H "Authorization: Bearer $KEY"';
const TOKEN = '-H "Authorization: Bearer $ADMIN_TOKEN"';
const timestamp = { type: 'string', format: 'date-time' };
/** A query's time: the server's own pattern, since it also takes a plain date and times without seconds. */
const queryTime = { type: 'string', pattern: ISO_TIME.source, examples: ['2026-01-01', '2026-01-01T09:30Z', '2026-01-01T09:30:00+02:00'] };
const count = { type: 'integer', minimum: 0 };

const statusCounts: Schema = {
  type: 'object',
  required: ['2xx', '3xx', '4xx', '5xx'],
  properties: { '2xx': count, '3xx': count, '4xx': count, '5xx': count },
  description: 'Requests by status class; 429s are in 4xx.',
};

const usageCounts = {
  requests: { ...count, description: 'Every counted request, 429s included.' },
  by_status: statusCounts,
  rate_limited: { ...count, description: 'Requests refused with 429.' },
};
const usageCountsRequired = ['requests', 'by_status', 'rate_limited'];

const usageSchema: Schema = {
  type: 'object',
  required: ['key_id', 'granularity', 'from', 'to', 'totals', 'endpoints', 'series', 'window', 'quota'],
  properties: {
    key_id: { type: 'string' },
    granularity: { enum: ['hour', 'day'] },
    from: { ...timestamp, description: 'Start of the first bucket (the requested from, rounded down to the bucket).' },
    to: { ...timestamp, description: 'End of the last bucket (the requested to, rounded up), exclusive.' },
    totals: { type: 'object', required: usageCountsRequired, properties: usageCounts },
    endpoints: {
      type: 'array',
      description: 'Per endpoint (method and route pattern, never a concrete path), most requests first.',
      items: {
        type: 'object',
        required: ['endpoint', 'method', 'route', ...usageCountsRequired],
        properties: {
          endpoint: { type: 'string', examples: ['GET /v1/listings/:id'] },
          method: { type: 'string', examples: ['GET'] },
          route: { type: 'string', examples: ['/v1/listings/:id'] },
          ...usageCounts,
        },
      },
    },
    series: {
      type: 'object',
      required: ['granularity', 'from', 'to', 'points'],
      properties: {
        granularity: { enum: ['hour', 'day'] },
        from: timestamp,
        to: timestamp,
        points: {
          type: 'array',
          description: 'One point per UTC hour or day of the range, oldest first; buckets without requests are included with zeros.',
          items: {
            type: 'object',
            required: ['start', 'errors', ...usageCountsRequired],
            properties: {
              start: timestamp,
              ...usageCounts,
              errors: { ...count, description: '4xx and 5xx answers other than 429.' },
            },
          },
        },
      },
    },
    window: {
      type: 'object',
      required: ['limit', 'remaining', 'reset'],
      description: 'The rate-limit window of the key now, as the X-RateLimit-* headers show it.',
      properties: {
        limit: { ...count, description: 'Requests per minute.' },
        remaining: count,
        reset: { type: 'integer', description: 'Unix seconds at which one more request is admitted.' },
      },
    },
    quota: {
      oneOf: [{ $ref: '#/components/schemas/QuotaUsage' }, { type: 'null' }],
      description: "The quota of the key's plan, shared by all of its user's keys on the plan (as the window is); null when the plan has none.",
    },
  },
};

/** A plan quota's count now: the usage reads and the operator's top-up answer it. */
export const quotaUsageSchema: Schema = {
  type: 'object',
  required: ['requests', 'used', 'remaining', 'period', 'resets_at'],
  properties: {
    requests: { type: 'integer', minimum: 1, description: 'Requests allowed in the period.' },
    used: { ...count, description: "Requests counted in the period so far, by all of the user's keys on the plan." },
    remaining: count,
    period: { enum: ['day', 'month'], description: 'A UTC calendar day or month.' },
    resets_at: { ...timestamp, description: 'The end of the period, when the count starts again at 0.' },
  },
};

/** Merged into components.schemas by the document (the /v1 and operator answers share it). */
export const analyticsSchemas: Record<string, Schema> = { Usage: usageSchema, QuotaUsage: quotaUsageSchema };

export const rangeParams = [
  queryParam('granularity', { enum: ['hour', 'day'], default: 'hour' }, 'Bucket size of the series (UTC hours or UTC days).'),
  queryParam('from', queryTime, 'ISO 8601 time with Z or an offset, or a date. Default: 24 hours (hour) or 30 days (day) before `to`. Rounded down to the bucket.'),
  queryParam('to', queryTime, 'ISO 8601, after `from`. Default: the end of the current hour or day. Rounded up to the bucket. At most 31 days after `from` for hour, 366 days for day.'),
];

const listingStatsSchema: Schema = {
  type: 'object',
  required: ['data', 'pagination', 'totals'],
  properties: {
    data: {
      type: 'array',
      items: {
        type: 'object',
        required: ['listing_id', 'title', 'status', 'views', 'impressions'],
        properties: {
          listing_id: { type: 'string' },
          title: { type: 'string' },
          status: { enum: ['active', 'archived', 'removed'] },
          views: { ...count, description: 'Successful GET /v1/listings/:id (a HEAD is not a view).' },
          impressions: { ...count, description: 'Appearances on served GET /v1/listings pages, cached pages included (not on a HEAD).' },
        },
      },
    },
    pagination: ref('Pagination'),
    totals: { type: 'object', required: ['views', 'impressions'], properties: { views: count, impressions: count }, description: 'Over all your listings, not only this page.' },
  },
};

export const analyticsOperations: Operations = {
  'GET /v1/analytics/usage': {
    operationId: 'getUsage',
    description:
      'Totals, per-endpoint counts and a time series of the requests made with the calling key (only that key), ' +
      'plus its current rate-limit window. Counts are kept per UTC hour for 90 days. `from` must be earlier than `to` (400 otherwise), which the parameter schemas cannot say.',
    parameters: rangeParams,
    responses: {
      '200': answer('Usage of this key', dataOf(ref('Usage'))),
      '400': errorAnswer('Unknown query parameter, bad granularity, from/to not ISO 8601, from not before to, or a range too wide'),
      ...GATE_ERRORS,
    },
    ...curl(`curl -s ${KEY} 'http://127.0.0.1:3000/v1/analytics/usage?granularity=day&from=2026-01-01&to=2026-01-31'`),
  },
  'GET /v1/analytics/listings': {
    operationId: 'getListingStats',
    description:
      'One row per listing you own (archived ones too), with totals over all of them. Without from/to, counts cover the whole ' +
      'retention (90 days); from/to are rounded out to whole UTC hours. When both are given, `from` must be earlier than `to` (400 otherwise), which the parameter schemas cannot say.',
    parameters: [
      ...PAGE_PARAMS,
      queryParam('sort', { enum: ['-views', 'views', '-impressions', 'impressions'], default: '-views' }, 'Order; ties broken by listing id.'),
      queryParam('from', queryTime, 'Count from this ISO 8601 time (rounded down to the hour).'),
      queryParam('to', queryTime, 'Count until this ISO 8601 time (rounded up to the hour).'),
    ],
    responses: {
      '200': answer('A page of your listings with their counts', listingStatsSchema),
      '400': errorAnswer('Unknown query parameter, bad page/limit/sort, from/to not ISO 8601, or from not before to'),
      ...GATE_ERRORS,
    },
    ...curl(`curl -s ${KEY} 'http://127.0.0.1:3000/v1/analytics/listings?sort=-impressions&limit=10'`),
  },
  'GET /admin/v1/keys/:id/usage': {
    operationId: 'adminGetKeyUsage',
    description: "Any key's usage: the same answer as /v1/analytics/usage gives that key. `from` must be earlier than `to` (400 otherwise).",
    security: ADMIN_SECURITY,
    parameters: [pathId('Key id'), ...rangeParams],
    responses: {
      '200': answer('Usage of the key', dataOf(ref('Usage'))),
      '400': errorAnswer('Bad query parameter'),
      '404': errorAnswer('Key not found'),
      ...ADMIN_ERRORS,
    },
    ...curl(`curl -s ${TOKEN} 'http://127.0.0.1:3000/admin/v1/keys/key_2bN7cD4fG6hJ8kL0mP1q/usage?granularity=hour'`),
  },
};
