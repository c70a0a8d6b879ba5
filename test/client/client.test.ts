// The typed client against small fake servers: the spec's retry rules on 429 and on network
// failures (waits recorded through an injected sleep, so nothing really sleeps), abort,
// Idempotency-Keys, paging, and what an error carries.

import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test, type TestContext } from 'node:test';
import { AdminClient, MarketplaceApiError, MarketplaceClient, MarketplaceNetworkError } from '../../src/client/index.ts';
import type { Listing } from '../../src/client/index.ts';
import { eventually } from '../helpers/eventually.ts';

interface SeenRequest {
  method: string;
  url: URL;
  headers: IncomingMessage['headers'];
  body: string;
}

type Reply = { status: number; headers?: Record<string, string>; body?: unknown } | 'drop-connection';

/** A server on port 0 that answers each request with what `reply` says and records it. */
async function fakeServer(t: TestContext, reply: (request: SeenRequest, index: number) => Reply) {
  const requests: SeenRequest[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const seen = { method: req.method ?? '', url: new URL(req.url ?? '/', 'http://fake'), headers: req.headers, body: Buffer.concat(chunks).toString() };
      requests.push(seen);
      const answer = reply(seen, requests.length - 1);
      if (answer === 'drop-connection') {
        req.socket.destroy();
        return;
      }
      const text = answer.body === undefined ? '' : typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body);
      res.writeHead(answer.status, { 'Content-Type': 'application/json', ...answer.headers });
      res.end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const { port } = server.address() as AddressInfo;
  return { baseUrl: `http://127.0.0.1:${port}`, requests };
}

const NOW_MS = Date.UTC(2026, 0, 1, 12, 0, 0);
const NOW_SECONDS = NOW_MS / 1000;
const tooMany = (headers: Record<string, string> = {}): Reply => ({ status: 429, headers, body: { error: 'Rate limit exceeded' } });
const ok = (data: unknown = { id: 'lst_1' }): Reply => ({ status: 200, body: { data } });

/** A client whose waits are recorded, not slept. */
function recordingClient(baseUrl: string, retry?: { maxRetries?: number; maxTotalWaitMs?: number; enabled?: boolean }) {
  const waits: number[] = [];
  const client = new MarketplaceClient({
    baseUrl,
    apiKey: 'mk_test',
    now: () => NOW_MS,
    sleep: async (ms) => {
      waits.push(ms);
    },
    ...(retry ? { retry } : {}),
  });
  return { client, waits };
}

test('429 with X-RateLimit-Reset: waits until Reset (preferred over Retry-After), then succeeds', async (t) => {
  const server = await fakeServer(t, (_request, index) =>
    index === 0 ? tooMany({ 'X-RateLimit-Reset': String(NOW_SECONDS + 7), 'Retry-After': '3' }) : ok(),
  );
  const { client, waits } = recordingClient(server.baseUrl);
  const listing = await client.listings.get('lst_1');
  assert.equal(listing.id, 'lst_1');
  assert.deepEqual(waits, [7000]);
  assert.equal(server.requests.length, 2);
});

test('429 with only Retry-After: waits that many seconds', async (t) => {
  const server = await fakeServer(t, (_request, index) => (index === 0 ? tooMany({ 'Retry-After': '4' }) : ok()));
  const { client, waits } = recordingClient(server.baseUrl);
  await client.listings.get('lst_1');
  assert.deepEqual(waits, [4000]);
});

test('429 with a Reset already past by our clock falls back to Retry-After', async (t) => {
  const server = await fakeServer(t, (_request, index) =>
    index === 0 ? tooMany({ 'X-RateLimit-Reset': String(NOW_SECONDS - 2), 'Retry-After': '2' }) : ok(),
  );
  const { client, waits } = recordingClient(server.baseUrl);
  await client.listings.get('lst_1');
  assert.deepEqual(waits, [2000]);
});

test('429 without timing headers: backs off 500 ms, 1 s, 2 s, 4 s, 8 s', async (t) => {
  const server = await fakeServer(t, (_request, index) => (index < 5 ? tooMany() : ok()));
  const { client, waits } = recordingClient(server.baseUrl);
  await client.listings.get('lst_1');
  assert.deepEqual(waits, [500, 1000, 2000, 4000, 8000]);
  assert.equal(server.requests.length, 6);
});

test('429 with a Reset already past and no Retry-After: backs off as if no timing were given', async (t) => {
  const server = await fakeServer(t, (_request, index) => (index < 2 ? tooMany({ 'X-RateLimit-Reset': String(NOW_SECONDS - 5) }) : ok()));
  const { client, waits } = recordingClient(server.baseUrl);
  await client.listings.get('lst_1');
  assert.deepEqual(waits, [500, 1000]);
});

test('429 with Retry-After as an HTTP date: waits until that date', async (t) => {
  const server = await fakeServer(t, (_request, index) => (index === 0 ? tooMany({ 'Retry-After': new Date(NOW_MS + 12_000).toUTCString() }) : ok()));
  const { client, waits } = recordingClient(server.baseUrl);
  await client.listings.get('lst_1');
  assert.deepEqual(waits, [12_000]);
});

test('backoff is capped at 30 s when more retries are allowed', async (t) => {
  const server = await fakeServer(t, (_request, index) => (index < 8 ? tooMany() : ok()));
  const { client, waits } = recordingClient(server.baseUrl, { maxRetries: 8 });
  await client.listings.get('lst_1');
  assert.deepEqual(waits, [500, 1000, 2000, 4000, 8000, 16000, 30000, 30000]);
});

test('stops after 5 retries and throws a MarketplaceApiError with status 429', async (t) => {
  const server = await fakeServer(t, () => tooMany());
  const { client, waits } = recordingClient(server.baseUrl);
  await assert.rejects(client.listings.list(), (error: unknown) => {
    assert.ok(error instanceof MarketplaceApiError);
    assert.equal(error.status, 429);
    assert.equal(error.error, 'Rate limit exceeded');
    return true;
  });
  assert.equal(server.requests.length, 6);
  assert.equal(waits.length, 5);
});

test('retries disabled: the first 429 is thrown at once', async (t) => {
  const server = await fakeServer(t, () => tooMany({ 'Retry-After': '1' }));
  const { client, waits } = recordingClient(server.baseUrl, { enabled: false });
  await assert.rejects(client.users.me(), { name: 'MarketplaceApiError', status: 429 });
  assert.equal(server.requests.length, 1);
  assert.deepEqual(waits, []);
});

test('retries disabled: a network failure is thrown at once too', async (t) => {
  const server = await fakeServer(t, () => 'drop-connection');
  const { client, waits } = recordingClient(server.baseUrl, { enabled: false });
  await assert.rejects(client.listings.list(), MarketplaceNetworkError);
  assert.equal(server.requests.length, 1);
  assert.deepEqual(waits, []);
});

test('maxRetries: 2 stops after two retries', async (t) => {
  const server = await fakeServer(t, () => tooMany({ 'Retry-After': '1' }));
  const { client, waits } = recordingClient(server.baseUrl, { maxRetries: 2 });
  await assert.rejects(client.listings.list(), { status: 429 });
  assert.deepEqual(waits, [1000, 1000]);
  assert.equal(server.requests.length, 3);
});

test('maxTotalWaitMs: a wait that would pass the cap is not made; the 429 is thrown instead', async (t) => {
  const server = await fakeServer(t, () => tooMany());
  const { client, waits } = recordingClient(server.baseUrl, { maxTotalWaitMs: 3000 });
  await assert.rejects(client.listings.list(), { status: 429 });
  // 500 + 1000 = 1500 fits; adding 2000 would make 3500 > 3000.
  assert.deepEqual(waits, [500, 1000]);
  assert.equal(server.requests.length, 3);
});

test('maxTotalWaitMs also bounds a server-given wait', async (t) => {
  const server = await fakeServer(t, () => tooMany({ 'Retry-After': '60' }));
  const { client, waits } = recordingClient(server.baseUrl, { maxTotalWaitMs: 10_000 });
  await assert.rejects(client.listings.list(), { status: 429 });
  assert.deepEqual(waits, []);
});

test('abort during a wait rejects promptly with an AbortError, even if the sleep ignores the signal', async (t) => {
  const server = await fakeServer(t, () => tooMany({ 'Retry-After': '30' }));
  const controller = new AbortController();
  let waitStarted!: () => void;
  const started = new Promise<void>((resolve) => (waitStarted = resolve));
  const client = new MarketplaceClient({
    baseUrl: server.baseUrl,
    apiKey: 'mk_test',
    sleep: () => {
      waitStarted();
      return new Promise<void>(() => undefined); // never ends by itself
    },
  });
  const call = client.listings.list({}, { signal: controller.signal });
  await started;
  controller.abort();
  await assert.rejects(call, { name: 'AbortError' });
  assert.equal(server.requests.length, 1);
});

// The test's own timeout (20 s) is shorter than the 30 s the client would otherwise sleep.
test('abort during a real 30 s wait (default timer sleep) ends the call at once', { timeout: 20_000 }, async (t) => {
  const server = await fakeServer(t, () => tooMany({ 'Retry-After': '30' }));
  const client = new MarketplaceClient({ baseUrl: server.baseUrl, apiKey: 'mk_test' });
  const controller = new AbortController();
  const call = client.listings.list({}, { signal: controller.signal });
  await eventually(async () => server.requests.length === 1, 15_000, 'the first request answered 429');
  controller.abort();
  await assert.rejects(call, { name: 'AbortError' });
  assert.equal(server.requests.length, 1, 'no retry after the abort');
});

test('an already-aborted signal sends nothing', async (t) => {
  const server = await fakeServer(t, () => ok());
  const { client } = recordingClient(server.baseUrl);
  await assert.rejects(client.listings.get('lst_1', { signal: AbortSignal.abort() }), { name: 'AbortError' });
  assert.equal(server.requests.length, 0);
});

test('a POST keeps one Idempotency-Key across its retries; the next call gets a new one', async (t) => {
  const server = await fakeServer(t, (_request, index) =>
    index === 0 ? tooMany() : index === 1 ? 'drop-connection' : { status: 201, body: { data: { id: `lst_${index}` } } },
  );
  const { client, waits } = recordingClient(server.baseUrl);
  const input = { title: 'Prompt pack', type: 'PROMPT', price: 0 } as const;
  await client.listings.create(input);
  await client.listings.create(input);
  const keys = server.requests.map((request) => request.headers['idempotency-key']);
  assert.equal(server.requests.length, 4);
  assert.match(String(keys[0]), /^[0-9a-f-]{36}$/);
  assert.equal(keys[1], keys[0], 'the retry after the 429 reuses the key');
  assert.equal(keys[2], keys[0], 'the retry after the dropped connection reuses the key');
  assert.notEqual(keys[3], keys[0], 'a new call gets a new key');
  assert.deepEqual(waits, [500, 1000]);
  assert.deepEqual(JSON.parse(server.requests[0]?.body ?? ''), input);
  assert.equal(server.requests[0]?.headers['content-type'], 'application/json');
});

test('a caller-given Idempotency-Key is sent as is; GETs carry none', async (t) => {
  const server = await fakeServer(t, () => ({ status: 201, body: { data: { id: 'wh_1', secret: 'whsec_x' } } }));
  const { client } = recordingClient(server.baseUrl);
  const webhook = await client.webhooks.create({ url: 'https://example.com/hook' }, { idempotencyKey: 'my-key-1' });
  assert.equal(webhook.secret, 'whsec_x');
  await client.webhooks.list();
  assert.equal(server.requests[0]?.headers['idempotency-key'], 'my-key-1');
  assert.equal(server.requests[1]?.headers['idempotency-key'], undefined);
});

test('GET, PUT and DELETE are retried after a network failure', async (t) => {
  const server = await fakeServer(t, (_request, index) => (index % 2 === 0 ? 'drop-connection' : ok()));
  const { client, waits } = recordingClient(server.baseUrl);
  await client.listings.get('lst_1');
  await client.listings.update('lst_1', { price: 5 });
  await client.listings.archive('lst_1');
  assert.deepEqual(
    server.requests.map((request) => request.method),
    ['GET', 'GET', 'PUT', 'PUT', 'DELETE', 'DELETE'],
  );
  assert.deepEqual(waits, [500, 500, 500]);
});

test('no answer at all is a MarketplaceNetworkError, not an API error', async (t) => {
  const server = await fakeServer(t, () => 'drop-connection');
  const { client, waits } = recordingClient(server.baseUrl);
  await assert.rejects(client.users.me(), (error: unknown) => {
    assert.ok(error instanceof MarketplaceNetworkError);
    assert.ok(!(error instanceof MarketplaceApiError));
    assert.match(error.message, /GET .*\/v1\/users\/me failed before any answer/);
    return true;
  });
  assert.deepEqual(waits, [500, 1000, 2000, 4000, 8000]);
});

test('error answers carry status, error, details, hint, required and requestId', async (t) => {
  const server = await fakeServer(t, (request) => {
    if (request.method === 'POST') {
      return { status: 400, body: { error: 'Invalid listing', details: { price: 'must be a number >= 0' }, request_id: 'req_body' } };
    }
    if (request.url.pathname === '/v1/webhooks') {
      return { status: 403, body: { error: 'Missing permission', required: ['GET /v1/webhooks', 'read:webhooks'], request_id: 'req_403' } };
    }
    if (request.url.pathname === '/v1/users/me') {
      return { status: 401, body: { error: 'API key missing or invalid', hint: 'Send Authorization: Bearer <key>' } };
    }
    return { status: 404, headers: { 'X-Request-Id': 'req_header' }, body: { error: 'Listing not found' } };
  });
  const { client } = recordingClient(server.baseUrl);

  const invalid = await client.listings.create({ title: 'x', type: 'TOOL', price: -1 }).catch((error: unknown) => error);
  assert.ok(invalid instanceof MarketplaceApiError);
  assert.equal(invalid.status, 400);
  assert.equal(invalid.error, 'Invalid listing');
  assert.deepEqual(invalid.details, { price: 'must be a number >= 0' });
  assert.equal(invalid.requestId, 'req_body');

  const forbidden = await client.webhooks.list().catch((error: unknown) => error);
  assert.ok(forbidden instanceof MarketplaceApiError);
  assert.equal(forbidden.status, 403);
  assert.deepEqual(forbidden.required, ['GET /v1/webhooks', 'read:webhooks']);

  const unauthorized = await client.users.me().catch((error: unknown) => error);
  assert.ok(unauthorized instanceof MarketplaceApiError);
  assert.equal(unauthorized.hint, 'Send Authorization: Bearer <key>');

  const missing = await client.listings.get('lst_nope').catch((error: unknown) => error);
  assert.ok(missing instanceof MarketplaceApiError);
  assert.equal(missing.status, 404);
  assert.equal(missing.requestId, 'req_header', 'falls back to the X-Request-Id header');
  assert.match(missing.message, /GET \/v1\/listings\/lst_nope → 404: Listing not found/);
});

test('a non-JSON error body still gives a MarketplaceApiError', async (t) => {
  const server = await fakeServer(t, () => ({ status: 502, headers: { 'Content-Type': 'text/html' }, body: '<html>Bad gateway</html>' }));
  const { client } = recordingClient(server.baseUrl);
  await assert.rejects(client.listings.list(), (error: unknown) => {
    assert.ok(error instanceof MarketplaceApiError);
    assert.equal(error.status, 502);
    assert.match(error.error, /^HTTP 502/);
    assert.equal(error.body, '<html>Bad gateway</html>');
    return true;
  });
});

test('listAll walks every page', async (t) => {
  const all = Array.from({ length: 5 }, (_unused, index) => ({ id: `lst_${index + 1}`, title: `Listing ${index + 1}` }));
  const server = await fakeServer(t, (request) => {
    const page = Number(request.url.searchParams.get('page'));
    const limit = Number(request.url.searchParams.get('limit'));
    return {
      status: 200,
      body: { data: all.slice((page - 1) * limit, page * limit), pagination: { page, limit, total: all.length, total_pages: Math.ceil(all.length / limit) } },
    };
  });
  const { client } = recordingClient(server.baseUrl);
  const seen: Listing[] = [];
  for await (const listing of client.listings.listAll({ limit: 2, type: 'SKILL' })) seen.push(listing);
  assert.deepEqual(
    seen.map((listing) => listing.id),
    all.map((listing) => listing.id),
  );
  assert.deepEqual(
    server.requests.map((request) => Object.fromEntries(request.url.searchParams)),
    [1, 2, 3].map((page) => ({ type: 'SKILL', limit: '2', page: String(page) })),
  );
});

test('requests carry the key as a Bearer header, encoded ids and only the given query fields', async (t) => {
  const server = await fakeServer(t, () => ({
    status: 200,
    headers: { 'X-RateLimit-Limit': '100', 'X-RateLimit-Remaining': '99', 'X-RateLimit-Reset': String(NOW_SECONDS + 60) },
    body: { data: { id: 'usr_1' } },
  }));
  const client = new MarketplaceClient({ baseUrl: `${server.baseUrl}/`, apiKey: 'mk_secret' });
  assert.equal(client.rateLimit, null);
  await client.users.get('usr/../1');
  await client.analytics.usage({ granularity: 'hour' });
  assert.equal(server.requests[0]?.headers.authorization, 'Bearer mk_secret');
  assert.equal(server.requests[0]?.url.pathname, '/v1/users/usr%2F..%2F1');
  assert.equal(server.requests[1]?.url.search, '?granularity=hour');
  assert.deepEqual(client.rateLimit, { limit: 100, remaining: 99, reset: NOW_SECONDS + 60 });
});

test('AdminClient: Bearer token, PATCH updates, backup as a byte stream', async (t) => {
  const logLines = '{"v":1}\n{"op":"put"}\n';
  const server = await fakeServer(t, (request) =>
    request.url.pathname === '/admin/v1/backup'
      ? { status: 200, headers: { 'Content-Type': 'application/x-ndjson' }, body: logLines }
      : { status: 200, body: { data: { id: 'key_1', rate_limit: 500 } } },
  );
  const admin = new AdminClient({ baseUrl: server.baseUrl, token: 'admin-token-123456' });
  const key = await admin.keys.update('key_1', { rate_limit: 500 });
  assert.equal(key.rate_limit, 500);
  const stream = await admin.backup();
  const text = await new Response(stream).text();
  assert.equal(text, logLines);
  assert.equal(server.requests[0]?.method, 'PATCH');
  assert.equal(server.requests[0]?.headers.authorization, 'Bearer admin-token-123456');
  assert.equal(server.requests[1]?.headers.accept, 'application/x-ndjson');
});

test('AdminClient: a create that lost its connection is not repeated blindly', async (t) => {
  const server = await fakeServer(t, () => 'drop-connection');
  const admin = new AdminClient({ baseUrl: server.baseUrl, token: 'admin-token-123456', sleep: async () => undefined });
  await assert.rejects(admin.keys.create({ user_id: 'usr_1' }), MarketplaceNetworkError);
  await assert.rejects(admin.users.create({ name: 'Ada' }), MarketplaceNetworkError);
  assert.equal(server.requests.length, 2);
});

test('constructor refuses a missing key or a base URL that is not http(s)', () => {
  assert.throws(() => new MarketplaceClient({ baseUrl: 'http://127.0.0.1:1', apiKey: ' ' }), TypeError);
  assert.throws(() => new MarketplaceClient({ baseUrl: '127.0.0.1:3000', apiKey: 'mk_x' }), /baseUrl must be an http\(s\) URL/);
  assert.throws(() => new MarketplaceClient({ baseUrl: 'http://x', apiKey: 'mk_x', retry: { maxRetries: -1 } }), RangeError);
});
