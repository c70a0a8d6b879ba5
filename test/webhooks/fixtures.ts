// Shared by the webhook tests: a recording HTTP receiver on 127.0.0.1, a polling wait, and
// webhook records written straight to a store (no HTTP server needed).

import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestContext } from 'node:test';
import { isoTime } from '../../src/clock.ts';
import { newId } from '../../src/domain/ids.ts';
import { WEBHOOKS } from '../../src/domain/records.ts';
import type { Store } from '../../src/store/store.ts';
import { EVENT_TYPES } from '../../src/domain/events.ts';
import type { EventOutbox, EventType } from '../../src/domain/events.ts';
import type { WebhookRecord } from '../../src/domain/webhook-records.ts';
import { generateWebhookSecret } from '../../src/webhooks/signing.ts';

export interface ReceivedRequest {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** performance.now() when the body had arrived. */
  at: number;
}

export interface Receiver {
  /** http://127.0.0.1:<port>/<token>/hook; any path under /<token>/ is this test's. */
  url: string;
  received: ReceivedRequest[];
  /** Requests to this port for another path: a sender elsewhere still aiming at an earlier owner of the port. */
  strays: number;
  /** Requests whose answer has not been sent yet. */
  open: number;
  maxOpen: number;
}

/** Answers request number `index` (0-based). May answer later, or never. */
export type Responder = (request: ReceivedRequest, response: ServerResponse, index: number) => void;

export function answer(status: number, headers: Record<string, string> = {}): Responder {
  return (_request, response) => {
    response.writeHead(status, headers);
    response.end();
  };
}

/**
 * A local receiver that records every request to its own paths; closed (connections dropped)
 * after the test. Its paths start with a token of its own because the port is the kernel's to
 * reuse: a dispatcher in another test process may still be retrying an address that an earlier,
 * closed receiver had, and those requests must not count here.
 */
export async function startReceiver(t: TestContext, respond: Responder): Promise<Receiver> {
  const receiver: Receiver = { url: '', received: [], strays: 0, open: 0, maxOpen: 0 };
  const token = `/${randomBytes(6).toString('hex')}/`;
  const server = http.createServer((request: IncomingMessage, response: ServerResponse) => {
    if (!(request.url ?? '').startsWith(token)) {
      receiver.strays += 1;
      response.writeHead(404).end();
      request.resume();
      return;
    }
    const chunks: Buffer[] = [];
    receiver.open += 1;
    receiver.maxOpen = Math.max(receiver.maxOpen, receiver.open);
    response.on('close', () => {
      receiver.open -= 1;
    });
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const received: ReceivedRequest = {
        path: request.url ?? '',
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: performance.now(),
      };
      receiver.received.push(received);
      respond(received, response, receiver.received.length - 1);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${token}hook`;
  return receiver;
}

/**
 * Polls `condition` every few milliseconds; fails with `what` after `timeoutMs`. The budget only
 * bounds how long a broken test takes to fail: it is far above what a busy machine needs.
 */
export async function waitFor(what: string, condition: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

export function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export function webhookRecord(fields: { userId: string; url: string; events?: readonly EventType[]; active?: boolean }): WebhookRecord {
  const createdAt = isoTime(Date.now());
  return {
    id: newId('wh'),
    user_id: fields.userId,
    url: fields.url,
    events: fields.events ?? [...EVENT_TYPES],
    description: '',
    active: fields.active ?? true,
    secret: generateWebhookSecret(),
    created_at: createdAt,
    updated_at: createdAt,
    last_delivery: null,
  };
}

/** Writes a webhook record as the registration handler would (without the ping). */
export async function addWebhook(store: Store, fields: Parameters<typeof webhookRecord>[0]): Promise<WebhookRecord> {
  const webhook = webhookRecord(fields);
  await store.write([{ op: 'put', collection: WEBHOOKS, id: webhook.id, data: webhook }]);
  return webhook;
}

/** Queues each `[type, ownerId, data]` event through `outbox`, all in one write decided as a handler's is. */
export function queueEvents(store: Store, outbox: EventOutbox, ...events: ReadonlyArray<readonly [EventType, string, object]>): Promise<void> {
  return store.commit((tx) => ({ ops: events.flatMap(([type, ownerId, data]) => outbox.eventOps(tx, type, ownerId, data)), result: undefined }));
}
