// POST and PUT /v1/listings input rules (contract section 7), as a table of named cases: each
// bad body is a 400 whose details name the field, and changes nothing.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startServer } from '../helpers/server.ts';

const VALID = { title: 'Vector search skill', type: 'SKILL', price: 9.99 };
const WRITE = ['read:listings', 'write:listings'];

const BAD_CREATES: Array<[string, Record<string, unknown>, string]> = [
  ['price=-1', { ...VALID, price: -1 }, 'price'],
  ['price=1000000.01', { ...VALID, price: 1_000_000.01 }, 'price'],
  ['price=9.999 (3 decimals)', { ...VALID, price: 9.999 }, 'price'],
  ['price="9.99" (a string)', { ...VALID, price: '9.99' }, 'price'],
  ['price missing', { title: 'x', type: 'SKILL' }, 'price'],
  ['title missing', { type: 'SKILL', price: 1 }, 'title'],
  ['title blank after trimming', { ...VALID, title: '   ' }, 'title'],
  ['title of 201 characters', { ...VALID, title: 'x'.repeat(201) }, 'title'],
  ['title a number', { ...VALID, title: 42 }, 'title'],
  ['type missing', { title: 'x', price: 1 }, 'type'],
  ['type lower case', { ...VALID, type: 'skill' }, 'type'],
  ['type unknown', { ...VALID, type: 'PLUGIN' }, 'type'],
  ['description of 5001 characters', { ...VALID, description: 'x'.repeat(5001) }, 'description'],
  ['tags not a list', { ...VALID, tags: 'ai' }, 'tags'],
  ['11 tags', { ...VALID, tags: Array.from({ length: 11 }, (_, index) => `t${index}`) }, 'tags'],
  ['a tag of 33 characters', { ...VALID, tags: ['x'.repeat(33)] }, 'tags'],
  ['a tag not a string', { ...VALID, tags: [1] }, 'tags'],
  ['id (read-only)', { ...VALID, id: 'lst_mine' }, 'id'],
  ['owner_id (read-only)', { ...VALID, owner_id: 'usr_someone' }, 'owner_id'],
  ['status (read-only)', { ...VALID, status: 'archived' }, 'status'],
  ['created_at (read-only)', { ...VALID, created_at: '2020-01-01T00:00:00Z' }, 'created_at'],
  ['an unknown field', { ...VALID, featured: true }, 'featured'],
];

test('POST /v1/listings refuses each bad body with 400 naming the field, and creates nothing', async (t) => {
  const server = await startServer(t);
  const { key } = await server.userWithKey('creator', WRITE);
  for (const [name, body, field] of BAD_CREATES) {
    await t.test(`POST /v1/listings with ${name} → 400 naming ${field}`, async () => {
      const response = await server.request('POST', '/v1/listings', { key, body });
      assert.equal(response.status, 400, `got ${response.status} ${response.text}`);
      assert.ok(response.body.details && field in response.body.details, `details name ${field}: ${response.text}`);
      assert.match(response.body.error, new RegExp(field));
    });
  }
  await t.test('nothing was created', async () => {
    const list = await server.request('GET', '/v1/listings', { key });
    assert.equal(list.body.pagination.total, 0);
  });
});

test('POST /v1/listings accepts the edges: price 0, 1,000,000, 2 decimals, 200-character title, 10 tags', async (t) => {
  const server = await startServer(t);
  const { key, userId } = await server.userWithKey('creator', WRITE);
  const goods: Array<[string, Record<string, unknown>]> = [
    ['price=0 (free)', { ...VALID, price: 0 }],
    ['price=1000000', { ...VALID, price: 1_000_000 }],
    ['price=0.1+0.2 style cents', { ...VALID, price: 19.99 }],
    ['title of 200 characters', { ...VALID, title: 'x'.repeat(200) }],
    ['10 tags of 32 characters', { ...VALID, tags: Array.from({ length: 10 }, (_, index) => `${index}`.padEnd(32, 'x')) }],
    ['every type', { ...VALID, type: 'DATASET', description: 'd'.repeat(5000) }],
  ];
  for (const [name, body] of goods) {
    await t.test(`POST /v1/listings with ${name} → 201`, async () => {
      const response = await server.request('POST', '/v1/listings', { key, body });
      assert.equal(response.status, 201, response.text);
      const listing = response.body.data;
      assert.equal(listing.owner_id, userId);
      assert.equal(listing.status, 'active');
      assert.match(listing.id, /^lst_/);
      assert.equal(listing.created_at, listing.updated_at);
      assert.equal(listing.price, body.price);
    });
  }
  const trimmed = await server.request('POST', '/v1/listings', { key, body: { ...VALID, title: '  padded  ' } });
  assert.equal(trimmed.body.data.title, 'padded');
  assert.deepEqual(trimmed.body.data.tags, []);
  assert.equal(trimmed.body.data.description, '');
});

test('PUT /v1/listings/:id: empty body and mass assignment refused; nothing changes', async (t) => {
  const server = await startServer(t);
  const { key } = await server.userWithKey('creator', WRITE);
  const created = (await server.request('POST', '/v1/listings', { key, body: VALID })).body.data;
  const attempts: Array<[string, Record<string, unknown>, string | null]> = [
    ['empty body', {}, null],
    ['owner_id', { owner_id: 'usr_other' }, 'owner_id'],
    ['id', { id: 'lst_other', title: 'new' }, 'id'],
    ['status', { status: 'archived' }, 'status'],
    ['created_at', { created_at: '2000-01-01T00:00:00.000Z' }, 'created_at'],
    ['updated_at', { updated_at: '2000-01-01T00:00:00.000Z' }, 'updated_at'],
    ['unknown field', { promoted: true }, 'promoted'],
    ['bad price', { price: -5 }, 'price'],
  ];
  for (const [name, body, field] of attempts) {
    await t.test(`PUT /v1/listings/:id with ${name} → 400${field ? ` naming ${field}` : ''}`, async () => {
      const response = await server.request('PUT', `/v1/listings/${created.id}`, { key, body });
      assert.equal(response.status, 400, response.text);
      if (field) assert.ok(field in response.body.details, response.text);
    });
  }
  await t.test('the listing is unchanged', async () => {
    const after = await server.request('GET', `/v1/listings/${created.id}`, { key });
    assert.deepEqual(after.body.data, created);
  });
});

test('PUT applies a non-empty subset and moves updated_at only', async (t) => {
  const server = await startServer(t);
  const { key } = await server.userWithKey('creator', WRITE);
  const created = (await server.request('POST', '/v1/listings', { key, body: { ...VALID, tags: ['a'] } })).body.data;
  await new Promise((resolve) => setTimeout(resolve, 5));
  const updated = await server.request('PUT', `/v1/listings/${created.id}`, { key, body: { price: 0, tags: ['b', 'c'] } });
  assert.equal(updated.status, 200);
  assert.equal(updated.body.data.price, 0);
  assert.deepEqual(updated.body.data.tags, ['b', 'c']);
  assert.equal(updated.body.data.title, created.title);
  assert.equal(updated.body.data.created_at, created.created_at);
  assert.notEqual(updated.body.data.updated_at, created.updated_at);
});
