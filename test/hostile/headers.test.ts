// Headers every answer carries, through a real server: X-Content-Type-Options: nosniff on every
// answer (errors, the dashboard, health, the operator API included), and Cache-Control: no-store
// on the answers that hold a secret (a new key, a new webhook's secret, and their replays).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startServer } from '../helpers/server.ts';

test('every answer carries X-Content-Type-Options: nosniff', async (t) => {
  const server = await startServer(t, { dataDir: null });
  const { key } = await server.userWithKey('creator', ['read:listings', 'write:listings']);
  const cases: Array<{ name: string; send: () => Promise<{ status: number; headers: Headers }> }> = [
    { name: 'GET /healthz → 200', send: () => server.request('GET', '/healthz') },
    { name: 'GET /openapi.json → 200', send: () => server.request('GET', '/openapi.json') },
    { name: 'GET /dashboard/ → 200', send: () => server.request('GET', '/dashboard/') },
    { name: 'GET /nowhere → 404', send: () => server.request('GET', '/nowhere') },
    { name: 'GET /v1/listings without a key → 401', send: () => server.request('GET', '/v1/listings') },
    { name: 'GET /v1/listings → 200', send: () => server.request('GET', '/v1/listings', { key }) },
    { name: 'DELETE /v1/listings → 405', send: () => server.request('DELETE', '/v1/listings', { key }) },
    { name: 'POST /v1/listings bad JSON → 400', send: () => server.request('POST', '/v1/listings', { key, rawBody: '{', headers: { 'content-type': 'application/json' } }) },
    { name: 'GET /admin/v1/users without the token → 401', send: () => server.request('GET', '/admin/v1/users') },
    { name: 'GET /admin/v1/users → 200', send: () => server.admin('GET', '/admin/v1/users') },
  ];
  for (const { name, send } of cases) {
    await t.test(name, async () => {
      const response = await send();
      assert.equal(response.headers.get('x-content-type-options'), 'nosniff', `status ${response.status}`);
    });
  }
});

test('answers holding a secret carry Cache-Control: no-store; others keep private, no-cache', async (t) => {
  const server = await startServer(t, { dataDir: null, env: { WEBHOOK_ALLOW_PRIVATE: '1' } });
  const { userId, key } = await server.userWithKey('member', ['read:webhooks', 'write:webhooks']);

  await t.test('POST /admin/v1/keys → 201 with the key, no-store', async () => {
    const response = await server.admin('POST', '/admin/v1/keys', { user_id: userId });
    assert.equal(response.status, 201, response.text);
    assert.equal(typeof response.body.data.key, 'string');
    assert.equal(response.headers.get('cache-control'), 'no-store');
  });

  const body = { url: 'http://127.0.0.1:9/hook', events: ['listing.created'] };
  await t.test('POST /v1/webhooks → 201 with the secret, no-store', async () => {
    const response = await server.request('POST', '/v1/webhooks', { key, body, headers: { 'idempotency-key': 'one' } });
    assert.equal(response.status, 201, response.text);
    assert.match(response.body.data.secret, /^whsec_/);
    assert.equal(response.headers.get('cache-control'), 'no-store');
  });

  await t.test('POST /v1/webhooks replayed by Idempotency-Key → the secret again, no-store', async () => {
    const response = await server.request('POST', '/v1/webhooks', { key, body, headers: { 'idempotency-key': 'one' } });
    assert.equal(response.headers.get('idempotent-replayed'), 'true');
    assert.match(response.body.data.secret, /^whsec_/);
    assert.equal(response.headers.get('cache-control'), 'no-store');
  });

  await t.test('GET /v1/webhooks (no secret) → private, no-cache', async () => {
    const response = await server.request('GET', '/v1/webhooks', { key });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('cache-control'), 'private, no-cache');
  });
});
