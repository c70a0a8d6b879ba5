// CORS (CORS_ORIGINS): preflights answered 204 before the key check and never counted as failed
// authentications; allowed origins get Access-Control-* on every /v1 answer, errors included;
// other origins, the operator API and the dashboard get none. The configuration is checked.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { rawRequest } from '../helpers/raw-http.ts';
import { ADMIN_TOKEN, startServer } from '../helpers/server.ts';

const ALLOWED = 'https://app.example.com';
const OTHER = 'https://evil.example.net';
const CORS_ENV = { CORS_ORIGINS: `${ALLOWED}, http://localhost:5173` };
const ALLOWED_HEADERS = 'Authorization, X-API-Key, Content-Type, Idempotency-Key, If-Match, If-None-Match';
const EXPOSED = ['X-Request-Id', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'X-Quota-Limit', 'X-Quota-Remaining', 'X-Quota-Reset', 'Retry-After', 'ETag'];

const corsHeaderNames = (headers: Record<string, unknown>) => Object.keys(headers).filter((name) => name.startsWith('access-control-'));
const preflightOf = (origin: string, method: string, requestHeaders = 'authorization') => ({
  origin,
  'access-control-request-method': method,
  'access-control-request-headers': requestHeaders,
});

test('CORS_ORIGINS: unset means none, * means any, a list is read; anything else is one clear line', async (t) => {
  assert.equal(loadConfig({}).corsOrigins, null);
  assert.equal(loadConfig({ CORS_ORIGINS: '' }).corsOrigins, null);
  assert.equal(loadConfig({ CORS_ORIGINS: '*' }).corsOrigins, '*');
  assert.deepEqual(loadConfig({ CORS_ORIGINS: 'https://a.example.com, http://localhost:8080' }).corsOrigins, ['https://a.example.com', 'http://localhost:8080']);
  for (const bad of ['https://a.example.com/', 'a.example.com', 'https://a.example.com/path', 'ftp://a.example.com', 'https://a.example.com,,https://b.example.com', '*, https://a.example.com']) {
    await t.test(JSON.stringify(bad), async () => {
      assert.throws(() => loadConfig({ CORS_ORIGINS: bad }), (error: unknown) => error instanceof ConfigError && /^CORS_ORIGINS must be/.test(error.message) && !error.message.includes('\n'), bad);
    });
  }
});

test('a preflight from an allowed origin → 204 allowing the route methods and the request headers, before any key', async (t) => {
  const server = await startServer(t, { dataDir: null, env: CORS_ENV });
  const collection = await rawRequest(server.url, 'OPTIONS', '/v1/listings', preflightOf(ALLOWED, 'POST', 'authorization, content-type, idempotency-key'));
  assert.equal(collection.status, 204);
  assert.equal(collection.headers['access-control-allow-origin'], ALLOWED);
  assert.match(String(collection.headers.vary), /Origin/);
  assert.deepEqual(String(collection.headers['access-control-allow-methods']).split(', ').sort(), ['GET', 'HEAD', 'POST']);
  assert.equal(collection.headers['access-control-allow-headers'], ALLOWED_HEADERS);
  assert.equal(collection.body.length, 0);
  const one = await rawRequest(server.url, 'OPTIONS', '/v1/listings/lst_anything', preflightOf(ALLOWED, 'PUT'));
  assert.equal(one.status, 204);
  assert.deepEqual(String(one.headers['access-control-allow-methods']).split(', ').sort(), ['DELETE', 'GET', 'HEAD', 'PUT']);
  const second = await rawRequest(server.url, 'OPTIONS', '/v1/users/me', preflightOf('http://localhost:5173', 'GET'));
  assert.equal(second.headers['access-control-allow-origin'], 'http://localhost:5173');
});

test('a preflight from another origin, or with CORS off, → 204 without any CORS header', async (t) => {
  const server = await startServer(t, { dataDir: null, env: CORS_ENV });
  const refused = await rawRequest(server.url, 'OPTIONS', '/v1/listings', preflightOf(OTHER, 'GET'));
  assert.equal(refused.status, 204);
  assert.deepEqual(corsHeaderNames(refused.headers), []);
  const off = await startServer(t, { dataDir: null });
  const offAnswer = await rawRequest(off.url, 'OPTIONS', '/v1/listings', preflightOf(ALLOWED, 'GET'));
  assert.equal(offAnswer.status, 204);
  assert.deepEqual(corsHeaderNames(offAnswer.headers), []);
});

test('preflights never count as failed authentications: 150 of them, then a wrong key is still 401, not 429', async (t) => {
  const server = await startServer(t, { dataDir: null, env: CORS_ENV });
  const answers = await Promise.all(
    Array.from({ length: 150 }, (_, index) => rawRequest(server.url, 'OPTIONS', '/v1/listings', preflightOf(index % 2 === 0 ? ALLOWED : OTHER, 'GET'))),
  );
  assert.deepEqual([...new Set(answers.map((answer) => answer.status))], [204]);
  const wrongKey = await server.request('GET', '/v1/listings', { key: 'market_live_not-a-real-key' });
  assert.equal(wrongKey.status, 401, 'the failed-authentication limit (100 a minute) was not touched by preflights');
  const { key } = await server.userWithKey('member', ['read:listings']);
  assert.equal((await server.request('GET', '/v1/listings', { key })).status, 200);
});

test('answers to an allowed origin carry Allow-Origin, Vary: Origin and the exposed headers, errors included; other origins get none', async (t) => {
  const server = await startServer(t, { dataDir: null, env: CORS_ENV });
  const { key } = await server.userWithKey('member', ['read:listings'], 1);
  const cases: Array<{ what: string; headers: Record<string, string>; status: number }> = [
    { what: 'a 200', headers: { authorization: `Bearer ${key}` }, status: 200 },
    { what: 'a 429', headers: { authorization: `Bearer ${key}` }, status: 429 },
    { what: 'a 401', headers: {}, status: 401 },
  ];
  for (const { what, headers, status } of cases) {
    await t.test(what, async () => {
      const answer = await rawRequest(server.url, 'GET', '/v1/listings', { ...headers, origin: ALLOWED });
      assert.equal(answer.status, status, what);
      assert.equal(answer.headers['access-control-allow-origin'], ALLOWED, what);
      assert.match(String(answer.headers.vary), /\bOrigin\b/, what);
      assert.deepEqual(String(answer.headers['access-control-expose-headers']).split(', '), EXPOSED, what);
      assert.equal(answer.headers['cache-control'], 'private, no-cache', what);
    });
  }
  const other = await rawRequest(server.url, 'GET', '/v1/listings', { origin: OTHER });
  assert.equal(other.status, 401);
  assert.deepEqual(corsHeaderNames(other.headers), []);
});

test('CORS_ORIGINS=* allows any origin with "*" itself, never by echoing the origin (not even "null")', async (t) => {
  const server = await startServer(t, { dataDir: null, env: { CORS_ORIGINS: '*' } });
  for (const origin of [OTHER, 'null']) {
    const preflight = await rawRequest(server.url, 'OPTIONS', '/v1/webhooks', preflightOf(origin, 'POST'));
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers['access-control-allow-origin'], '*', origin);
    const answer = await rawRequest(server.url, 'GET', '/v1/listings', { origin });
    assert.equal(answer.status, 401);
    assert.equal(answer.headers['access-control-allow-origin'], '*', origin);
  }
});

test('with a list of origins every /v1 answer says Vary: Origin, also to other origins and to requests without one, so a shared cache never serves one origin\'s answer to another', async (t) => {
  const server = await startServer(t, { dataDir: null, env: CORS_ENV });
  for (const headers of [{ origin: OTHER }, {}, { origin: ALLOWED }] as Array<Record<string, string>>) {
    const answer = await rawRequest(server.url, 'GET', '/v1/listings', headers);
    assert.match(String(answer.headers.vary), /\bOrigin\b/, JSON.stringify(headers));
  }
});

test('a preflight for a mistyped /v1 path lets the browser send the request, so the page reads the JSON 404 instead of a CORS failure', async (t) => {
  const server = await startServer(t, { dataDir: null, env: CORS_ENV });
  const preflight = await rawRequest(server.url, 'OPTIONS', '/v1/listingz', preflightOf(ALLOWED, 'GET', 'authorization'));
  assert.equal(preflight.status, 204);
  assert.equal(preflight.headers['access-control-allow-origin'], ALLOWED);
  assert.match(String(preflight.headers['access-control-allow-methods']), /\bGET\b/);
  assert.equal(preflight.headers['access-control-allow-headers'], ALLOWED_HEADERS);
  const { key } = await server.userWithKey('member', ['read:listings']);
  const answer = await rawRequest(server.url, 'GET', '/v1/listingz', { origin: ALLOWED, authorization: `Bearer ${key}` });
  assert.equal(answer.status, 404);
  assert.equal(answer.headers['access-control-allow-origin'], ALLOWED);
});

test('the operator API, the dashboard, /healthz and /openapi.json never answer cross-origin', async (t) => {
  const server = await startServer(t, { dataDir: null, env: { CORS_ORIGINS: '*' } });
  const operator = await rawRequest(server.url, 'GET', '/admin/v1/users', { origin: ALLOWED, authorization: `Bearer ${ADMIN_TOKEN}` });
  assert.equal(operator.status, 200);
  assert.deepEqual(corsHeaderNames(operator.headers), []);
  const operatorPreflight = await rawRequest(server.url, 'OPTIONS', '/admin/v1/users', preflightOf(ALLOWED, 'GET'));
  assert.notEqual(operatorPreflight.status, 204);
  assert.deepEqual(corsHeaderNames(operatorPreflight.headers), []);
  for (const path of ['/dashboard/', '/healthz', '/openapi.json']) {
    await t.test(path, async () => {
      const answer = await rawRequest(server.url, 'GET', path, { origin: ALLOWED });
      assert.equal(answer.status, 200, path);
      assert.deepEqual(corsHeaderNames(answer.headers), [], path);
    });
  }
});
