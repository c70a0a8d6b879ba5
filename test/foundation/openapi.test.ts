// The OpenAPI document describes exactly the routes the server serves: same paths, same
// methods, nothing missing and nothing invented; every operation is named, tagged and summed
// up; and the checker that holds every answer of the suite to the document really catches
// departures (the test server helper runs it on each JSON answer).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ApiRoute } from '../../src/http/route.ts';
import { buildOpenApiDocument } from '../../src/openapi/document.ts';
import { SchemaValidator } from '../helpers/json-schema.ts';
import { AnswerChecker } from '../helpers/openapi-answers.ts';
import { startServer } from '../helpers/server.ts';

const toOpenApiPath = (pattern: string) => pattern.replace(/:([A-Za-z_]+)/g, '{$1}');

test('/openapi.json paths and methods equal the router routes', async (t) => {
  const server = await startServer(t);
  const response = await server.request('GET', '/openapi.json');
  assert.equal(response.status, 200);
  const document = response.body;
  assert.equal(document.openapi, '3.1.0');
  const documented = new Set<string>();
  for (const [path, item] of Object.entries(document.paths as Record<string, Record<string, unknown>>)) {
    for (const method of Object.keys(item)) documented.add(`${method.toUpperCase()} ${path}`);
  }
  const served = new Set(
    [...server.app.apiRoutes, ...server.app.adminRoutes, ...server.app.publicRoutes, ...server.app.portalRoutes].map((route) => `${route.method} ${toOpenApiPath(route.pattern)}`),
  );
  assert.deepEqual([...documented].sort(), [...served].sort());
});

test('servers is relative; every operation has an operationId (unique), a declared tag, a summary, a description and responses', async (t) => {
  const server = await startServer(t);
  const { body: document } = await server.request('GET', '/openapi.json');
  assert.deepEqual(document.servers, [{ url: '/' }]);
  const declaredTags = new Set((document.tags as Array<{ name: string; description: string }>).map((tag) => tag.name));
  const operationIds = new Set<string>();
  const operations = [
    ...Object.entries(document.paths as Record<string, Record<string, any>>),
    ...Object.entries(document.webhooks as Record<string, Record<string, any>>),
  ].flatMap(([path, item]) => Object.entries(item).map(([method, operation]) => ({ path, method, operation })));
  for (const { path, method, operation } of operations) {
    await t.test(`${method} ${path}`, async () => {
      const name = `${method} ${path}`;
      assert.match(operation.operationId ?? '', /^[A-Za-z][A-Za-z0-9]+$/, `${name} has an operationId`);
      assert.ok(!operationIds.has(operation.operationId), `${name}: operationId ${operation.operationId} is unique`);
      operationIds.add(operation.operationId);
      assert.equal(operation.tags?.length, 1, `${name} has a tag`);
      assert.ok(declaredTags.has(operation.tags[0]), `${name}: tag ${operation.tags[0]} is declared`);
      assert.ok(operation.summary, `${name} has a summary`);
      assert.ok(operation.description, `${name} has a description`);
      assert.ok(operation.responses && Object.keys(operation.responses).length > 0, `${name} has responses`);
      if (path.startsWith('/v1') || path.startsWith('/admin')) {
        assert.match(operation['x-codeSamples']?.[0]?.source ?? '', /^curl /, `${name} has a curl example`);
      }
    });
  }
  // Every $ref points at a schema that exists.
  const refs = JSON.stringify(document).match(/#\/components\/schemas\/[A-Za-z]+/g) ?? [];
  for (const ref of new Set(refs)) assert.ok(document.components.schemas[ref.split('/').pop()!], `${ref} exists`);
});

test('the document states what the server enforces: page maximum, Idempotency-Key on every /v1 POST, fields always sent are required', async (t) => {
  const server = await startServer(t);
  const { body: document } = await server.request('GET', '/openapi.json');
  const page = document.paths['/v1/listings'].get.parameters.find((parameter: { name: string }) => parameter.name === 'page');
  assert.equal(typeof page.schema.maximum, 'number');
  const { key } = await server.userWithKey('member', ['read:listings']);
  assert.equal((await server.request('GET', `/v1/listings?page=${page.schema.maximum}`, { key })).status, 200, 'the maximum is accepted');
  assert.equal((await server.request('GET', `/v1/listings?page=${page.schema.maximum + 1}`, { key })).status, 400, 'one more is refused');

  for (const route of server.app.apiRoutes.filter((candidate) => candidate.method === 'POST')) {
    await t.test(`POST ${route.pattern}`, async () => {
      const operation = document.paths[toOpenApiPath(route.pattern)].post;
      assert.ok(operation.parameters.some((parameter: { name: string }) => parameter.name === 'Idempotency-Key'), `${route.pattern} documents Idempotency-Key`);
      assert.ok(operation.responses['422'], `${route.pattern} documents 422`);
    });
  }
  const schemas = document.components.schemas;
  assert.ok(schemas.ApiKey.required.includes('last_used_at') && schemas.ApiKey.required.includes('updated_at'));
  assert.ok(schemas.User.allOf[1].required.includes('updated_at'));
});

test('a route without operation details, or details without a route, stops the document from being built', async (t) => {
  const server = await startServer(t);
  const { documentedRoutes } = server.app;
  const { api: apiRoutes } = documentedRoutes;
  const undocumented: ApiRoute = { method: 'GET', pattern: '/v1/undocumented', resource: 'listings', summary: 'Nothing', handle: () => ({ status: 200 }) };
  assert.throws(() => buildOpenApiDocument({ ...documentedRoutes, api: [...apiRoutes, undocumented] }), /GET \/v1\/undocumented has no operation details/);
  assert.throws(() => buildOpenApiDocument({ ...documentedRoutes, api: apiRoutes.slice(1) }), /routes that do not exist: GET \/v1\/listings/);
});

test('the answer checker catches a missing required field, a wrong type, an undocumented status and a non-Error error', async (t) => {
  const server = await startServer(t);
  const checker = new AnswerChecker(buildOpenApiDocument(server.app.documentedRoutes));
  const listing = {
    id: 'lst_1',
    title: 'T',
    description: '',
    type: 'SKILL',
    price: 1,
    tags: [],
    status: 'active',
    owner_id: 'usr_1',
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
  };
  assert.deepEqual(checker.problems('GET', '/v1/listings/lst_1', 200, { data: listing }), []);
  const { updated_at: _dropped, ...withoutUpdatedAt } = listing;
  assert.match(checker.problems('GET', '/v1/listings/lst_1', 200, { data: withoutUpdatedAt }).join(), /required field "updated_at"/);
  assert.match(checker.problems('GET', '/v1/listings/lst_1', 200, { data: { ...listing, price: '1' } }).join(), /price: expected number/);
  assert.match(checker.problems('GET', '/v1/listings/lst_1', 202, { data: listing }).join(), /status 202 is not documented/);
  assert.match(checker.problems('GET', '/v1/listings/lst_1', 418, { message: 'teapot' }).join(), /required field "error"/);
  assert.match(checker.problems('GET', '/v1/listings?page=1', 200, { data: [{ ...listing, title: 'x'.repeat(201) }], pagination: { page: 1, limit: 20, total: 1, total_pages: 1 } }).join(), /longer than 200/);
});

test('query parameters: the server accepts exactly the values the document allows, and refuses the others with 400', async (t) => {
  const server = await startServer(t, { dataDir: null });
  const { body: document } = await server.request('GET', '/openapi.json');
  const validator = new SchemaValidator(document);
  const { key } = await server.userWithKey('creator', ['read:listings', 'read:analytics']);
  const trials: Array<[pathAndBase: string, name: string, values: string[]]> = [
    ['/v1/listings', 'page', ['1', '1000000000', '1000000001', '0', '-1', '1.5', 'x']],
    ['/v1/listings', 'limit', ['1', '100', '101', '0']],
    ['/v1/listings', 'sort', ['price', '-price', 'title', '-title', 'x']],
    ['/v1/listings', 'type', ['SKILL', 'TOOL', 'skill', 'x']],
    // Digits with at most 2 decimals below 10,000,000; no sign, no exponent.
    ['/v1/listings', 'min_price', ['0', '10.5', '-1', '9999999.99', '10000000', '1.234', '1e2', '+1', ' 1']],
    // maxLength counts code points: 150 emoji are 300 UTF-16 units but within 200.
    ['/v1/listings', 'q', ['a'.repeat(200), 'a'.repeat(201), '😀'.repeat(150), '😀'.repeat(201)]],
    ['/admin/v1/listings', 'q', ['a'.repeat(200), 'a'.repeat(201), '😀'.repeat(150), '😀'.repeat(201)]],
    ['/v1/analytics/usage', 'granularity', ['hour', 'day', 'week']],
    ['/v1/analytics/usage?to=2026-01-20', 'from', ['2026-01-01', '2026-01-01T09:30Z', '2026-01-01T09:30:00.123+02:00', '2026-01-01T09', '2026/01/01', 'yesterday']],
    ['/v1/analytics/listings', 'sort', ['-views', 'impressions', 'views_desc']],
  ];
  for (const [pathAndBase, name, values] of trials) {
    await t.test(`${pathAndBase} ${name}`, async () => {
      // Some trials hold other parameters fixed (a `to` near `from`, so the range stays within its limit).
      const [path, base] = pathAndBase.split('?') as [string, string | undefined];
      const parameter = document.paths[path].get.parameters.find((candidate: { name: string }) => candidate.name === name);
      assert.ok(parameter, `${path} documents ${name}`);
      for (const value of values) {
        // A query value is text; numeric schemas judge it as the number it spells.
        const typed = /^-?\d+(\.\d+)?$/.test(value) && ['integer', 'number'].includes(parameter.schema.type) ? Number(value) : value;
        const documentAllows = validator.validate(typed, parameter.schema).length === 0;
        const url = `${path}?${base ? `${base}&` : ''}${name}=${encodeURIComponent(value)}`;
        const answer = path.startsWith('/admin/') ? await server.admin('GET', url) : await server.request('GET', url, { key });
        assert.equal(answer.status === 200, documentAllows, `${path}?${name}=${value.slice(0, 40)}: the document ${documentAllows ? 'allows' : 'forbids'} it, the server answered ${answer.status}`);
        if (!documentAllows) assert.equal(answer.status, 400);
      }
    });
  }
});

test('plan names: the document allows 1 to 60 characters counted in code points, not blank; the server agrees', async (t) => {
  const server = await startServer(t, { dataDir: null });
  const { body: document } = await server.request('GET', '/openapi.json');
  const validator = new SchemaValidator(document);
  const schema = document.paths['/admin/v1/plans'].put.requestBody.content['application/json'].schema;
  for (const name of ['Pro', 'x'.repeat(60), 'x'.repeat(61), '😀'.repeat(60), '😀'.repeat(61), '', '   ']) {
    const body = { plans: [{ id: 'free', name, rate_limit: 100, self_service: true }] };
    const documentAllows = validator.validate(body, schema).length === 0;
    const answer = await server.admin('PUT', '/admin/v1/plans', body);
    assert.equal(answer.status === 200, documentAllows, `name=${JSON.stringify(name).slice(0, 30)}: the document ${documentAllows ? 'allows' : 'forbids'} it, the server answered ${answer.status}`);
  }
});

test('request bodies: the server accepts exactly the field values the document allows, and refuses the others with 400', async (t) => {
  const server = await startServer(t, { dataDir: null });
  const { body: document } = await server.request('GET', '/openapi.json');
  const validator = new SchemaValidator(document);
  const { key } = await server.userWithKey('creator', ['read:listings', 'write:listings', 'read:users', 'write:users']);
  const listing = { title: 'Base', type: 'SKILL', price: 1 };
  const listingTrials: Record<string, unknown[]> = {
    title: ['x', 'x'.repeat(200), 'x'.repeat(201), '', '   ', '\t\n', '😀'.repeat(200), '😀'.repeat(201), 5],
    description: ['', 'x'.repeat(5000), 'x'.repeat(5001)],
    type: ['SKILL', 'DATASET', 'skill', 'x'],
    price: [0, 1_000_000, 1_000_001, -1, 9.99, 9.999, '1'],
    tags: [[], ['a'], ['a'.repeat(32)], ['a'.repeat(33)], Array.from({ length: 10 }, (_, index) => `t${index}`), Array.from({ length: 11 }, (_, index) => `t${index}`), [''], ['  '], 'a'],
    owner_id: ['usr_x'],
  };
  const profileTrials: Record<string, unknown[]> = {
    name: ['A', 'x'.repeat(100), 'x'.repeat(101), '', '  '],
    bio: ['', 'x'.repeat(500), 'x'.repeat(501)],
    website: ['', 'https://example.com/me', 'http://example.com', 'ftp://example.com', 'not a url'],
    avatar_url: ['', 'https://example.com/a.png', 'mailto:a@example.com'],
    email: ['', 'me@example.com', 'me@', 'x'.repeat(250) + '@e.co', 'me@example.com.', 'me@example..com', 'me@.example.com', 'me@localhost', 'm e@example.com', 'a@b@example.com'],
  };
  const { id: keyOwner } = await server.createUser();
  // Permission entries: scopes of known resources, routes, concrete paths and prefixes under /v1.
  const keyTrials: Record<string, unknown[]> = {
    permissions: [['read:listings'], ['write:webhooks'], ['GET /v1/listings/:id'], ['GET /v1/listings/lst_1'], ['GET /v1/listings/*'], ['read:things'], ['read:Listings'], ['get /v1/listings'], ['GET /admin/v1/users'], ['GET  /v1/listings'], [' read:listings'], [5]],
  };
  const cases = [
    ...Object.entries(listingTrials).map(([field, values]) => ({ method: 'POST', path: '/v1/listings', schemaPath: ['/v1/listings', 'post'], base: listing, field, values })),
    ...Object.entries(profileTrials).map(([field, values]) => ({ method: 'PUT', path: '/v1/users/me', schemaPath: ['/v1/users/me', 'put'], base: {}, field, values })),
    ...Object.entries(keyTrials).map(([field, values]) => ({ method: 'POST', path: '/admin/v1/keys', schemaPath: ['/admin/v1/keys', 'post'], base: { user_id: keyOwner }, field, values })),
  ];
  for (const { method, path, schemaPath, base, field, values } of cases) {
    await t.test(`${method} ${path} ${field}`, async () => {
      const schema = document.paths[schemaPath[0]!][schemaPath[1]!].requestBody.content['application/json'].schema;
      for (const value of values) {
        const body = { ...base, [field]: value };
        const documentAllows = validator.validate(body, schema).length === 0;
        const answer = path.startsWith('/admin/') ? await server.admin(method, path, body) : await server.request(method, path, { key, body });
        const shown = JSON.stringify(value).slice(0, 40);
        assert.equal(answer.status < 300, documentAllows, `${method} ${path} ${field}=${shown}: the document ${documentAllows ? 'allows' : 'forbids'} it, the server answered ${answer.status}`);
        if (!documentAllows) assert.equal(answer.status, 400, `${field}=${shown}`);
      }
    });
  }
});
