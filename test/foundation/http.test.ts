// The server skeleton over real HTTP: health, routing (404, 405 + Allow), request bodies (413,
// 415, 400), request ids, the JSON error shape, and the operator token.

import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { test } from 'node:test';
import { startServer } from '../helpers/server.ts';

test('GET /healthz answers 200 {status: ok, version} without a key', async (t) => {
  const server = await startServer(t);
  const response = await server.request('GET', '/healthz');
  assert.equal(response.status, 200);
  assert.deepEqual(response.body, { status: 'ok', version: response.body.version });
  assert.match(response.body.version, /^\d+\.\d+\.\d+/);
  assert.match(response.headers.get('content-type')!, /^application\/json/);
});

test('every response carries a unique X-Request-Id, and errors repeat it in the body', async (t) => {
  const server = await startServer(t);
  const first = await server.request('GET', '/healthz');
  const second = await server.request('GET', '/nowhere');
  const firstId = first.headers.get('x-request-id');
  const secondId = second.headers.get('x-request-id');
  assert.ok(firstId && secondId);
  assert.notEqual(firstId, secondId);
  assert.equal(second.status, 404);
  assert.equal(second.body.request_id, secondId);
  assert.equal(typeof second.body.error, 'string');
});

test('unknown paths are 404; a known path with another method is 405 with Allow', async (t) => {
  const server = await startServer(t);
  const missing = await server.request('GET', '/no/such/path');
  assert.equal(missing.status, 404);
  const wrongMethod = await server.request('DELETE', '/healthz');
  assert.equal(wrongMethod.status, 405);
  assert.equal(wrongMethod.headers.get('allow'), 'GET, HEAD');
  const adminWrongMethod = await server.admin('PUT', '/admin/v1/users');
  assert.equal(adminWrongMethod.status, 405);
  assert.equal(adminWrongMethod.headers.get('allow'), 'POST, GET, HEAD');
});

test('request bodies: 415 without JSON content type, 400 for malformed JSON or a non-object, 413 over 64 KiB', async (t) => {
  const server = await startServer(t);
  const token = { authorization: 'Bearer test-operator-token-0123456789' };
  const notJson = await server.request('POST', '/admin/v1/users', { rawBody: 'name=x', headers: { ...token, 'content-type': 'text/plain' } });
  assert.equal(notJson.status, 415);
  const malformed = await server.request('POST', '/admin/v1/users', { rawBody: '{"name": ', headers: { ...token, 'content-type': 'application/json' } });
  assert.equal(malformed.status, 400);
  assert.match(malformed.body.error, /JSON/);
  const array = await server.request('POST', '/admin/v1/users', { rawBody: '[1,2]', headers: { ...token, 'content-type': 'application/json' } });
  assert.equal(array.status, 400);
  const huge = await server.request('POST', '/admin/v1/users', {
    rawBody: JSON.stringify({ name: 'x', bio: 'y'.repeat(70 * 1024) }),
    headers: { ...token, 'content-type': 'application/json' },
  });
  assert.equal(huge.status, 413);
  assert.match(huge.body.error, /64 KiB/);
  // Nothing was created by any of them.
  const users = await server.admin('GET', '/admin/v1/users');
  assert.equal(users.body.pagination.total, 0);
});

test('a body that never finishes and malformed requests do not take the server down', async (t) => {
  const server = await startServer(t);
  const url = new URL(server.url);
  await new Promise<void>((resolve) => {
    const request = httpRequest({ host: url.hostname, port: url.port, method: 'POST', path: '/admin/v1/users', headers: { 'content-type': 'application/json', 'content-length': '100' } });
    request.on('error', () => resolve());
    request.write('{"name":');
    setTimeout(() => {
      request.destroy();
      resolve();
    }, 50);
  });
  const percent = await server.request('GET', '/v1/listings/%E0%A4%A');
  assert.ok(percent.status < 500);
  const health = await server.request('GET', '/healthz');
  assert.equal(health.status, 200);
});

test('the operator API refuses a missing or wrong token with 401 and a hint', async (t) => {
  const server = await startServer(t);
  const missing = await server.request('GET', '/admin/v1/users');
  assert.equal(missing.status, 401);
  assert.match(missing.body.hint, /Bearer/);
  const wrong = await server.request('GET', '/admin/v1/users', { headers: { authorization: 'Bearer not-the-token' } });
  assert.equal(wrong.status, 401);
  const right = await server.admin('GET', '/admin/v1/users');
  assert.equal(right.status, 200);
});

test('the dashboard is served with its security headers', async (t) => {
  const server = await startServer(t);
  const page = await server.request('GET', '/dashboard');
  assert.equal(page.status, 200);
  assert.match(page.headers.get('content-type')!, /text\/html/);
  assert.match(page.headers.get('content-security-policy')!, /script-src 'self'/);
  assert.equal(page.headers.get('x-frame-options'), 'DENY');
  assert.equal(page.headers.get('x-content-type-options'), 'nosniff');
});

test('a body that arrives in pieces is read whole, with Content-Length or chunked', async (t) => {
  const server = await startServer(t);
  const url = new URL(server.url);
  const body = JSON.stringify({ name: 'Pieces', bio: 'é'.repeat(400) });
  const bytes = Buffer.from(body);
  for (const framing of ['content-length', 'chunked'] as const) {
    await t.test(framing, async () => {
      const answer = await new Promise<{ status: number; text: string }>((resolve, reject) => {
        const headers: Record<string, string> = { 'content-type': 'application/json', authorization: 'Bearer test-operator-token-0123456789' };
        if (framing === 'content-length') headers['content-length'] = String(bytes.length);
        const request = httpRequest({ host: url.hostname, port: url.port, method: 'POST', path: '/admin/v1/users', headers }, (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => resolve({ status: response.statusCode!, text: Buffer.concat(chunks).toString() }));
        });
        request.on('error', reject);
        // Cut inside a two-byte character, with pauses, so the pieces arrive as separate reads.
        const cuts = [0, 101, 401, 701, bytes.length];
        let piece = 0;
        const next = (): void => {
          request.write(bytes.subarray(cuts[piece]!, cuts[piece + 1]!));
          piece += 1;
          if (piece < cuts.length - 1) setTimeout(next, 20);
          else request.end();
        };
        next();
      });
      assert.equal(answer.status, 201, answer.text);
      const created = JSON.parse(answer.text) as { data: { id: string; name: string; bio: string } };
      assert.equal(created.data.name, 'Pieces');
      assert.equal(created.data.bio, 'é'.repeat(400), `${framing}: the bio came through whole`);
    });
  }
  const users = await server.admin('GET', '/admin/v1/users');
  assert.equal(users.body.pagination.total, 2);
});
