// sendWebhook against real receivers on 127.0.0.1: what counts as delivered, redirects,
// 410, Retry-After, timeouts, large answers, and the SSRF guard stopping a request before it
// leaves.

import { test } from 'node:test';
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ManualClock } from '../../src/clock.ts';
import { parseRetryAfter, sendWebhook } from '../../src/webhooks/send.ts';
import type { BaseLookup } from '../../src/webhooks/address-guard.ts';
import { buildDeliveryHeaders, generateWebhookSecret } from '../../src/webhooks/signing.ts';
import { verifySignature } from '../../src/webhooks/verify.ts';
import { eventually } from '../helpers/eventually.ts';

interface ReceivedRequest {
  method: string | undefined;
  url: string | undefined;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

interface Receiver {
  url: string;
  port: number;
  received: ReceivedRequest[];
}

/** A local HTTP server that records each request and answers with `respond`. */
async function startReceiver(
  t: TestContext,
  respond: (request: IncomingMessage, response: ServerResponse) => void,
): Promise<Receiver> {
  const received: ReceivedRequest[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({ method: request.method, url: request.url, headers: request.headers, body: Buffer.concat(chunks) });
      respond(request, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/hooks/in`, port, received };
}

function answer(status: number, headers: Record<string, string> = {}, body = '') {
  return (_request: IncomingMessage, response: ServerResponse): void => {
    response.writeHead(status, headers);
    response.end(body);
  };
}

const BODY = Buffer.from('{"id":"evt_1","type":"ping","created_at":"2026-01-01T00:00:00.000Z","data":{}}');
const HEADERS = { 'content-type': 'application/json', 'webhook-id': 'evt_1' };

test('200 → delivered', async (t) => {
  const receiver = await startReceiver(t, answer(200, {}, 'ok'));
  const outcome = await sendWebhook({ url: receiver.url, body: BODY, headers: HEADERS, allowPrivate: true });
  assert.deepEqual(outcome, { delivered: true, status: 200, gone: false });
  assert.equal(receiver.received.length, 1);
});

test('204 → delivered', async (t) => {
  const receiver = await startReceiver(t, answer(204));
  const outcome = await sendWebhook({ url: receiver.url, body: BODY, headers: HEADERS, allowPrivate: true });
  assert.deepEqual(outcome, { delivered: true, status: 204, gone: false });
});

test('301 → not delivered, and the redirect target gets no request', async (t) => {
  const target = await startReceiver(t, answer(200));
  const redirecting = await startReceiver(t, answer(301, { location: target.url }));
  const outcome = await sendWebhook({ url: redirecting.url, body: BODY, headers: HEADERS, allowPrivate: true });
  assert.deepEqual(outcome, { delivered: false, status: 301, gone: false });
  assert.equal(redirecting.received.length, 1);
  assert.equal(target.received.length, 0);
});

test('410 → gone', async (t) => {
  const receiver = await startReceiver(t, answer(410));
  const outcome = await sendWebhook({ url: receiver.url, body: BODY, headers: HEADERS, allowPrivate: true });
  assert.deepEqual(outcome, { delivered: false, status: 410, gone: true });
});

test('429 with Retry-After: 7 → retryAfterMs 7000', async (t) => {
  const receiver = await startReceiver(t, answer(429, { 'retry-after': '7' }));
  const outcome = await sendWebhook({ url: receiver.url, body: BODY, headers: HEADERS, allowPrivate: true });
  assert.deepEqual(outcome, { delivered: false, status: 429, gone: false, retryAfterMs: 7000 });
});

test('503 with Retry-After as an HTTP date → milliseconds from the injected clock', async (t) => {
  const clock = new ManualClock();
  const retryAt = new Date(clock.now() + 120_000).toUTCString();
  const receiver = await startReceiver(t, answer(503, { 'retry-after': retryAt }));
  const outcome = await sendWebhook({ url: receiver.url, body: BODY, headers: HEADERS, allowPrivate: true, clock });
  assert.deepEqual(outcome, { delivered: false, status: 503, gone: false, retryAfterMs: 120_000 });
});

test('500 → not delivered with status 500 (Retry-After ignored)', async (t) => {
  const receiver = await startReceiver(t, answer(500, { 'retry-after': '7' }, 'internal details'));
  const outcome = await sendWebhook({ url: receiver.url, body: BODY, headers: HEADERS, allowPrivate: true });
  assert.deepEqual(outcome, { delivered: false, status: 500, gone: false });
});

test('a receiver that never answers → error "timeout" at the send\'s own deadline, not the default', async (t) => {
  let patientOpen = false;
  const receiver = await startReceiver(t, (request, response) => {
    if (!request.url?.endsWith('/patient')) return; // never answered either
    patientOpen = true;
    response.on('close', () => (patientOpen = false));
  });
  // A send with the 10 s default beside the one with 200 ms: the short one must end while the
  // other still holds its connection (an order a busy machine cannot reverse). The receiver's
  // clean-up ends the patient one.
  void sendWebhook({ url: `${receiver.url}/patient`, body: BODY, headers: HEADERS, allowPrivate: true });
  await eventually(async () => patientOpen, 30_000, 'the patient send to reach the receiver');
  const started = performance.now();
  const outcome = await sendWebhook({
    url: receiver.url,
    body: BODY,
    headers: HEADERS,
    allowPrivate: true,
    timeoutMs: 200,
  });
  const elapsedMs = performance.now() - started;
  assert.deepEqual(outcome, { delivered: false, status: null, error: 'timeout', gone: false });
  assert.ok(elapsedMs >= 150, `ended after ${elapsedMs} ms, before its 200 ms deadline`);
  assert.equal(patientOpen, true, 'the send with the default deadline is still waiting');
});

test('a status that arrived in time stands when the body then stalls', async (t) => {
  const receiver = await startReceiver(t, (_request, response) => {
    response.writeHead(200, { 'content-type': 'text/plain' });
    response.write('partial'); // and never ends
  });
  const outcome = await sendWebhook({
    url: receiver.url,
    body: BODY,
    headers: HEADERS,
    allowPrivate: true,
    // Long enough for the status to arrive on a busy machine (at 200 ms it once did not).
    timeoutMs: 2_000,
  });
  assert.deepEqual(outcome, { delivered: true, status: 200, gone: false });
});

test('a 1 MB answer is cut short and never returned', async (t) => {
  const receiver = await startReceiver(t, answer(200, { 'content-type': 'text/plain' }, 'x'.repeat(1024 * 1024)));
  const outcome = await sendWebhook({ url: receiver.url, body: BODY, headers: HEADERS, allowPrivate: true });
  assert.deepEqual(outcome, { delivered: true, status: 200, gone: false });
  assert.deepEqual(Object.keys(outcome).sort(), ['delivered', 'gone', 'status']);
});

// The send's deadline is 120 s and the test's own timeout 60 s: only the 4 KiB cap can end it in time.
test('reading stops after 4 KiB: a long answer that never ends does not hold the send', { timeout: 60_000 }, async (t) => {
  const receiver = await startReceiver(t, (_request, response) => {
    response.writeHead(500, { 'content-type': 'text/plain' });
    response.write('y'.repeat(64 * 1024)); // and never ends
  });
  const outcome = await sendWebhook({
    url: receiver.url,
    body: BODY,
    headers: HEADERS,
    allowPrivate: true,
    timeoutMs: 120_000,
  });
  assert.deepEqual(outcome, { delivered: false, status: 500, gone: false });
});

test('allowPrivate false + http://127.0.0.1 → refused without contacting the server', async (t) => {
  const receiver = await startReceiver(t, answer(200));
  const outcome = await sendWebhook({ url: receiver.url, body: BODY, headers: HEADERS, allowPrivate: false });
  assert.equal(outcome.delivered, false);
  assert.equal(outcome.status, null);
  assert.match(outcome.error ?? '', /^refused: .*private/);
  assert.equal(receiver.received.length, 0);
});

/** A base look-up that sends every name to 127.0.0.1, as a rebinding attacker's DNS would. */
const toLoopback: BaseLookup = (_hostname, _options, callback) => {
  setImmediate(() => callback(null, [{ address: '127.0.0.1', family: 4 }]));
};

test('a name resolving to 127.0.0.1 at send time → refused on the connection’s own look-up', async (t) => {
  const receiver = await startReceiver(t, answer(200));
  const outcome = await sendWebhook({
    url: `http://hooks.example.com:${receiver.port}/hooks/in`,
    body: BODY,
    headers: HEADERS,
    allowPrivate: false,
    lookup: toLoopback,
  });
  assert.deepEqual(outcome, { delivered: false, status: null, error: 'address not allowed', gone: false });
  assert.equal(receiver.received.length, 0);
});

test('the same name with private addresses allowed → delivered (the stub was the look-up used)', async (t) => {
  const receiver = await startReceiver(t, answer(200));
  const outcome = await sendWebhook({
    url: `http://hooks.example.com:${receiver.port}/hooks/in`,
    body: BODY,
    headers: HEADERS,
    allowPrivate: true,
    lookup: toLoopback,
  });
  assert.deepEqual(outcome, { delivered: true, status: 200, gone: false });
  assert.equal(receiver.received[0]?.headers.host, `hooks.example.com:${receiver.port}`);
});

test('the receiver gets exactly the bytes and headers passed, and the signature verifies', async (t) => {
  const receiver = await startReceiver(t, answer(200));
  const secret = generateWebhookSecret();
  const body = Buffer.from('{"id":"evt_2","type":"listing.created","data":{"title":"Stühle ✓"}}');
  const headers = buildDeliveryHeaders(secret, 'evt_2', 1767225600, body);
  await sendWebhook({ url: `${receiver.url}?source=test`, body, headers, allowPrivate: true });

  const [request] = receiver.received;
  assert.ok(request);
  assert.equal(request.method, 'POST');
  assert.equal(request.url, '/hooks/in?source=test');
  assert.deepEqual(request.body, body);
  for (const [name, value] of Object.entries(headers)) assert.equal(request.headers[name], value, name);
  assert.equal(request.headers['content-length'], String(body.length));
  assert.equal(verifySignature(secret, request.headers, request.body, 1767225600), true);
});

test('a content-length passed by the caller is replaced by the body’s own', async (t) => {
  const receiver = await startReceiver(t, answer(200));
  await sendWebhook({ url: receiver.url, body: BODY, headers: { 'Content-Length': '3' }, allowPrivate: true });
  assert.equal(receiver.received[0]?.headers['content-length'], String(BODY.length));
  assert.deepEqual(receiver.received[0]?.body, BODY);
});

test('connection refused → a short error code, no stack', async (t) => {
  const receiver = await startReceiver(t, answer(200));
  // Find a port nobody listens on: open one, note it, close it.
  const probe = http.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));

  const outcome = await sendWebhook({ url: `http://127.0.0.1:${port}/`, body: BODY, headers: HEADERS, allowPrivate: true });
  assert.deepEqual(outcome, { delivered: false, status: null, error: 'ECONNREFUSED', gone: false });
  assert.equal(receiver.received.length, 0);
});

test('bad input never throws: a malformed URL, a header with a line break', async () => {
  const badUrl = await sendWebhook({ url: 'ftp://example.com/', body: BODY, headers: HEADERS, allowPrivate: true });
  assert.equal(badUrl.delivered, false);
  assert.match(badUrl.error ?? '', /^refused: /);

  const badHeader = await sendWebhook({
    url: 'http://127.0.0.1:9/',
    body: BODY,
    headers: { 'x-evil': 'a\r\nb' },
    allowPrivate: true,
  });
  assert.equal(badHeader.delivered, false);
  assert.equal(badHeader.status, null);
  assert.doesNotMatch(badHeader.error ?? '', /\n/);
});

test('parseRetryAfter reads delta seconds and HTTP dates', () => {
  const nowMs = Date.UTC(2026, 0, 1);
  assert.equal(parseRetryAfter('7', nowMs), 7000);
  assert.equal(parseRetryAfter(' 0 ', nowMs), 0);
  assert.equal(parseRetryAfter('Thu, 01 Jan 2026 00:01:00 GMT', nowMs), 60_000);
  assert.equal(parseRetryAfter('Wed, 31 Dec 2025 23:00:00 GMT', nowMs), 0, 'a date in the past means now');
  assert.equal(parseRetryAfter('soon', nowMs), undefined);
  assert.equal(parseRetryAfter('-5', nowMs), undefined);
  assert.equal(parseRetryAfter(undefined, nowMs), undefined);
});
