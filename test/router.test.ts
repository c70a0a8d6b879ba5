// The router on its own: parameter-free paths, patterns with parameters, HEAD by GET, 405 with
// the path's methods, decoding of parameters, and what never matches. Each case is its own subtest.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Router, type RouteMatch } from '../src/router.ts';

interface TestRoute {
  method: string;
  pattern: string;
}

const ROUTES: TestRoute[] = [
  { method: 'GET', pattern: '/v1/listings' },
  { method: 'POST', pattern: '/v1/listings' },
  { method: 'GET', pattern: '/v1/listings/:id' },
  { method: 'PUT', pattern: '/v1/listings/:id' },
  { method: 'DELETE', pattern: '/v1/listings/:id' },
  { method: 'GET', pattern: '/v1/users/me' },
  { method: 'GET', pattern: '/v1/users/:id' },
  { method: 'GET', pattern: '/admin/v1/keys/:id/usage' },
  { method: 'GET', pattern: '/v1/files/a.b+c' },
];

function routerOfTestRoutes(): Router<TestRoute> {
  const router = new Router<TestRoute>();
  for (const route of ROUTES) router.add(route);
  return router;
}

/** A match as one short line, so a failing case says what it got. */
function describe(match: RouteMatch<TestRoute>): string {
  if (match.kind === 'found') return `found ${match.route.method} ${match.route.pattern} ${JSON.stringify(match.params)}`;
  if (match.kind === 'method-not-allowed') return `405 allow ${match.allowed.join(', ')}`;
  return '404';
}

const CASES: Array<[method: string, path: string, expected: string]> = [
  ['GET', '/v1/listings', 'found GET /v1/listings {}'],
  ['POST', '/v1/listings', 'found POST /v1/listings {}'],
  ['GET', '/v1/listings/lst_1', 'found GET /v1/listings/:id {"id":"lst_1"}'],
  ['DELETE', '/v1/listings/lst_1', 'found DELETE /v1/listings/:id {"id":"lst_1"}'],
  // A parameter-free path wins over a pattern that would also match it.
  ['GET', '/v1/users/me', 'found GET /v1/users/me {}'],
  ['GET', '/v1/users/usr_9', 'found GET /v1/users/:id {"id":"usr_9"}'],
  ['GET', '/admin/v1/keys/key_1/usage', 'found GET /admin/v1/keys/:id/usage {"id":"key_1"}'],
  // Parameters are decoded; a malformed escape is kept as sent rather than failing.
  ['GET', '/v1/listings/a%20b', 'found GET /v1/listings/:id {"id":"a b"}'],
  ['GET', '/v1/listings/%E0%A4%A', 'found GET /v1/listings/:id {"id":"%E0%A4%A"}'],
  // Characters special in a regular expression are literal in a pattern.
  ['GET', '/v1/files/a.b+c', 'found GET /v1/files/a.b+c {}'],
  ['GET', '/v1/files/aXb+c', '404'],
  // HEAD is answered by the path's GET route.
  ['HEAD', '/v1/listings/lst_1', 'found GET /v1/listings/:id {"id":"lst_1"}'],
  ['HEAD', '/v1/users/me', 'found GET /v1/users/me {}'],
  // A known path with another method: 405 with the path's methods in the order they were
  // added, HEAD beside GET.
  ['PATCH', '/v1/listings', '405 allow GET, HEAD, POST'],
  ['POST', '/v1/listings/lst_1', '405 allow GET, HEAD, PUT, DELETE'],
  ['DELETE', '/v1/users/me', '405 allow GET, HEAD'],
  // Never a match: unknown paths, a trailing slash, an empty parameter, an extra segment.
  ['GET', '/v1/nothing', '404'],
  ['GET', '/v1/listings/', '404'],
  ['GET', '/v1/listings/lst_1/extra', '404'],
  ['GET', '/v1//listings', '404'],
  ['GET', '/', '404'],
];

for (const [method, path, expected] of CASES) {
  test(`${method} ${path} → ${expected}`, () => {
    assert.equal(describe(routerOfTestRoutes().match(method, path)), expected);
  });
}

test('routes() lists every route added, in order', () => {
  assert.deepEqual(routerOfTestRoutes().routes(), ROUTES);
});

test('a route added again for the same method and path replaces the first', () => {
  const router = routerOfTestRoutes();
  const replacement = { method: 'GET', pattern: '/v1/listings/:id' };
  router.add(replacement);
  const match = router.match('GET', '/v1/listings/x');
  assert.equal(match.kind === 'found' && match.route, replacement);
});
