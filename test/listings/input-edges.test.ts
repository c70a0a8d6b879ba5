// Input a hostile or careless client sends, through a real server: field names that reach
// JavaScript's object machinery (__proto__, constructor, prototype) are refused by name,
// prices are judged on their decimal text (no float tolerance lets 1.000000001 through), and
// lengths count Unicode code points after trimming, as JSON Schema's maxLength does.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startServer } from '../helpers/server.ts';

const PERMISSIONS = ['read:listings', 'write:listings', 'read:users', 'write:users', 'read:webhooks', 'write:webhooks'];
const VALID = '"title":"Vector search skill","type":"SKILL","price":9.99';
const EMOJI = '😀'; // one code point, two UTF-16 units

const REFUSED: Array<{ name: string; method: string; path: string; raw: string; field: string }> = [
  { name: 'POST /v1/listings with "__proto__" → 400', method: 'POST', path: '/v1/listings', raw: `{${VALID},"__proto__":{"admin":true}}`, field: '__proto__' },
  { name: 'POST /v1/listings with "__proto__": null → 400', method: 'POST', path: '/v1/listings', raw: `{${VALID},"__proto__":null}`, field: '__proto__' },
  { name: 'POST /v1/listings with "constructor" → 400', method: 'POST', path: '/v1/listings', raw: `{${VALID},"constructor":{"prototype":{}}}`, field: 'constructor' },
  { name: 'POST /v1/listings with "prototype" → 400', method: 'POST', path: '/v1/listings', raw: `{${VALID},"prototype":1}`, field: 'prototype' },
  { name: 'PUT /v1/users/me with "__proto__" → 400', method: 'PUT', path: '/v1/users/me', raw: '{"bio":"hi","__proto__":{"role":"creator"}}', field: '__proto__' },
  { name: 'POST /v1/webhooks with "__proto__" → 400', method: 'POST', path: '/v1/webhooks', raw: '{"url":"https://example.com/hook","__proto__":{}}', field: '__proto__' },
  { name: 'POST /v1/listings price 1.000000001 → 400', method: 'POST', path: '/v1/listings', raw: '{"title":"x","type":"SKILL","price":1.000000001}', field: 'price' },
  { name: 'POST /v1/listings price 9.999 → 400', method: 'POST', path: '/v1/listings', raw: '{"title":"x","type":"SKILL","price":9.999}', field: 'price' },
  { name: 'POST /v1/listings price 0.001 → 400', method: 'POST', path: '/v1/listings', raw: '{"title":"x","type":"SKILL","price":0.001}', field: 'price' },
  { name: 'POST /v1/listings price 1e-3 → 400', method: 'POST', path: '/v1/listings', raw: '{"title":"x","type":"SKILL","price":1e-3}', field: 'price' },
  { name: 'POST /v1/listings price 9.990000000000000001 → 400', method: 'POST', path: '/v1/listings', raw: '{"title":"x","type":"SKILL","price":9.990000000000000001}', field: 'price' },
  { name: 'POST /v1/listings a tag of 33 emoji → 400', method: 'POST', path: '/v1/listings', raw: JSON.stringify({ title: 'x', type: 'SKILL', price: 1, tags: [EMOJI.repeat(33)] }), field: 'tags' },
  { name: 'POST /v1/listings a title of 201 emoji → 400', method: 'POST', path: '/v1/listings', raw: JSON.stringify({ title: EMOJI.repeat(201), type: 'SKILL', price: 1 }), field: 'title' },
  { name: 'POST /v1/listings a description of 5,001 emoji → 400', method: 'POST', path: '/v1/listings', raw: JSON.stringify({ title: 'x', description: EMOJI.repeat(5001), type: 'SKILL', price: 1 }), field: 'description' },
];

const ACCEPTED: Array<{ name: string; raw: string; check: (listing: Record<string, unknown>) => void }> = [
  { name: 'a tag of 17 emoji → 201', raw: JSON.stringify({ title: 'x', type: 'SKILL', price: 1, tags: [EMOJI.repeat(17)] }), check: (listing) => assert.deepEqual(listing.tags, [EMOJI.repeat(17)]) },
  { name: 'a tag of 32 emoji, padded with spaces → 201, trimmed', raw: JSON.stringify({ title: 'x', type: 'SKILL', price: 1, tags: [`  ${EMOJI.repeat(32)}  `] }), check: (listing) => assert.deepEqual(listing.tags, [EMOJI.repeat(32)]) },
  { name: 'a title of 200 emoji → 201', raw: JSON.stringify({ title: EMOJI.repeat(200), type: 'SKILL', price: 1 }), check: (listing) => assert.equal(listing.title, EMOJI.repeat(200)) },
  { name: 'a description of 5,000 emoji → 201', raw: JSON.stringify({ title: 'x', description: EMOJI.repeat(5000), type: 'SKILL', price: 1 }), check: (listing) => assert.equal([...String(listing.description)].length, 5000) },
  { name: 'price 999e-2 (9.99 in exponent form) → 201', raw: '{"title":"x","type":"SKILL","price":999e-2}', check: (listing) => assert.equal(listing.price, 9.99) },
  { name: 'price 19.90 → 201', raw: '{"title":"x","type":"SKILL","price":19.90}', check: (listing) => assert.equal(listing.price, 19.9) },
  { name: 'price 0.10 with a description holding "price": 1.999 → 201', raw: '{"title":"x","description":"\\"price\\": 1.999","type":"SKILL","price":0.10}', check: (listing) => assert.equal(listing.price, 0.1) },
];

test('hostile and careless bodies → 400 naming the field, nothing written', async (t) => {
  const server = await startServer(t, { dataDir: null });
  const { key } = await server.userWithKey('creator', PERMISSIONS);
  const before = await server.request('GET', '/v1/users/me', { key });
  for (const { name, method, path, raw, field } of REFUSED) {
    await t.test(name, async () => {
      const response = await server.request(method, path, { key, rawBody: raw, headers: { 'content-type': 'application/json' } });
      assert.equal(response.status, 400, response.text);
      assert.ok(response.body.error.includes(field), `the error names ${field}: ${response.text}`);
    });
  }
  const listings = await server.request('GET', '/v1/listings', { key });
  assert.equal(listings.body.pagination.total, 0);
  const webhooks = await server.request('GET', '/v1/webhooks', { key });
  assert.deepEqual(webhooks.body.data, []);
  const after = await server.request('GET', '/v1/users/me', { key });
  assert.deepEqual(after.body.data, before.body.data);
});

test('lengths in code points and prices by their decimal text: the edges are accepted', async (t) => {
  const server = await startServer(t, { dataDir: null });
  const { key } = await server.userWithKey('creator', PERMISSIONS);
  for (const { name, raw, check } of ACCEPTED) {
    await t.test(name, async () => {
      const response = await server.request('POST', '/v1/listings', { key, rawBody: raw, headers: { 'content-type': 'application/json' } });
      assert.equal(response.status, 201, response.text);
      check(response.body.data);
    });
  }
});
