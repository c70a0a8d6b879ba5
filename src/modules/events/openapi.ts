// OpenAPI paths of the events module: each user's event log, a page at a time or as a stream.

import { answer, curl, errorAnswer, GATE_ERRORS, queryParam, ref, type Operations } from '../../openapi/schema.ts';

const KEY = '-H "Authorization: Bearer $KEY"';

export const eventOperations: Operations = {
  'GET /v1/events': {
    operationId: 'listEvents',
    description:
      'Your own events, oldest first: every event your webhooks would receive (listing and profile events), with the same id and body, whether or not a webhook is registered. ' +
      'Kept EVENT_RETENTION_DAYS (30 by default), erased with your account. Page by passing the last id you have as `after`. Needs `read:webhooks`.',
    parameters: [
      queryParam('after', { type: 'string' }, 'The id of one of your kept events: the page starts after it. Without it, from your oldest kept event.'),
      queryParam('limit', { type: 'integer', minimum: 1, maximum: 100, default: 50 }, 'Events per page, 1-100.'),
    ],
    responses: {
      '200': answer('Your events after `after`, oldest first', ref('EventPage')),
      '400': errorAnswer('`after` is not one of your kept events (unknown, another user\'s, or older than the kept days), a bad limit, or an unknown query parameter'),
      ...GATE_ERRORS,
    },
    ...curl(`curl -s ${KEY} 'http://127.0.0.1:3000/v1/events?limit=50'`),
  },
  'GET /v1/events/stream': {
    operationId: 'streamEvents',
    description:
      'The same events as Server-Sent Events: each as `id: <event id>`, `event: <type>`, `data: <the event as JSON>` and a blank line. Resume with the `Last-Event-ID` header (as EventSource sends it) ' +
      'or `?after=`: the events you missed first, oldest first, then each new one as it happens, none missed and none twice. A comment line (`: keep-alive`) every 15 s keeps proxies from closing it. ' +
      'The stream ends when the key is revoked, expires or loses `read:webhooks` (noticed at the next event or heartbeat), and when the server stops; a reader that stops reading is dropped. ' +
      'At most 5 streams per key (and a cap per server): one more is 429. Needs `read:webhooks`.',
    parameters: [
      { name: 'Last-Event-ID', in: 'header', required: false, schema: { type: 'string' }, description: 'The id of the last event you have; the stream starts after it (wins over `after`).' },
      queryParam('after', { type: 'string' }, 'As Last-Event-ID, for clients that cannot set headers.'),
    ],
    responses: {
      '200': {
        description: 'The stream: kept events after the one named, then live ones; it stays open',
        content: { 'text/event-stream': { schema: { type: 'string', examples: ['id: evt_Q7mZ2xLp0sK4vN8rT1bY\nevent: listing.created\ndata: {"id":"evt_Q7mZ2xLp0sK4vN8rT1bY","type":"listing.created","created_at":"2026-01-31T12:00:00.000Z","data":{}}\n\n: keep-alive\n\n'] } } },
      },
      '400': errorAnswer('Last-Event-ID or `after` is not one of your kept events (start again without it), or an unknown query parameter'),
      ...GATE_ERRORS,
      '429': errorAnswer("The key's rate limit or CPU budget, or the key already holds 5 open streams (or the server its cap); close one or wait for Retry-After seconds."),
    },
    ...curl(`curl -s -N ${KEY} -H 'Last-Event-ID: evt_Q7mZ2xLp0sK4vN8rT1bY' http://127.0.0.1:3000/v1/events/stream`),
  },
};
