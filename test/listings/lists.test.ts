// GET /v1/listings (contract sections 8 and 9): pagination at the edges, each filter and sort,
// unknown parameters, stable order, freshness after writes, ETag and 304.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { newestFirst } from '../helpers/creation-order.ts';
import { startServer, temporaryDir, type TestServer } from '../helpers/server.ts';

const WRITE = ['read:listings', 'write:listings'];

interface Listing {
  id: string;
  title: string;
  description: string;
  type: string;
  price: number;
  tags: string[];
  owner_id: string;
  created_at: string;
}

async function seed(server: TestServer, key: string, count: number, make: (index: number) => Record<string, unknown>): Promise<Listing[]> {
  const made: Listing[] = [];
  for (let index = 0; index < count; index += 1) {
    const response = await server.request('POST', '/v1/listings', { key, body: make(index) });
    assert.equal(response.status, 201, response.text);
    made.push(response.body.data);
  }
  return made;
}

test('pagination arithmetic at the edges', async (t) => {
  const server = await startServer(t);
  const { key } = await server.userWithKey('creator', WRITE);
  const page = async (query: string) => (await server.request('GET', `/v1/listings${query}`, { key })).body;

  const empty = await page('');
  assert.deepEqual(empty, { data: [], pagination: { page: 1, limit: 20, total: 0, total_pages: 0 } }, '0 items');

  await seed(server, key, 5, (index) => ({ title: `item ${index}`, type: 'TOOL', price: index }));
  const exact = await page('?limit=5');
  assert.equal(exact.data.length, 5);
  assert.deepEqual(exact.pagination, { page: 1, limit: 5, total: 5, total_pages: 1 }, 'exactly one page');

  const partial = await page('?limit=2&page=3');
  assert.equal(partial.data.length, 1, 'last partial page');
  assert.deepEqual(partial.pagination, { page: 3, limit: 2, total: 5, total_pages: 3 });

  const past = await page('?limit=2&page=4');
  assert.deepEqual(past.data, [], 'page past the end → 200 with data []');
  assert.equal(past.pagination.total, 5);

  const max = await page('?limit=100');
  assert.equal(max.pagination.limit, 100);
});

const BAD_QUERIES: Array<[string, string, string]> = [
  ['limit=0', '?limit=0', 'limit'],
  ['limit=101', '?limit=101', 'limit'],
  ['limit=abc', '?limit=abc', 'limit'],
  ['limit=2.5', '?limit=2.5', 'limit'],
  ['page=0', '?page=0', 'page'],
  ['page=-1', '?page=-1', 'page'],
  ['page empty', '?page=', 'page'],
  ['type unknown', '?type=PLUGIN', 'type'],
  ['sort unknown', '?sort=popularity', 'sort'],
  ['min_price negative', '?min_price=-1', 'min_price'],
  ['max_price not a number', '?max_price=cheap', 'max_price'],
  ['min_price > max_price', '?min_price=10&max_price=5', 'min_price'],
  ['unknown parameter', '?color=red', 'color'],
  ['a key in the query', '?api_key=market_live_x', 'api_key'],
  ['repeated parameter', '?page=1&page=2', 'page'],
];

test('bad query parameters → 400 saying which (and the allowed names for unknown ones)', async (t) => {
  const server = await startServer(t);
  const { key } = await server.userWithKey('creator', WRITE);
  for (const [name, query, field] of BAD_QUERIES) {
    await t.test(`GET /v1/listings${query} → 400 (${name})`, async () => {
      const response = await server.request('GET', `/v1/listings${query}`, { key });
      assert.equal(response.status, 400, `got ${response.status} ${response.text}`);
      assert.match(response.body.error, new RegExp(field));
    });
  }
  const unknown = await server.request('GET', '/v1/listings?color=red', { key });
  assert.match(unknown.body.error, /page, limit, type, q, min_price, max_price, owner_id, sort/);
});

test('filters: type, q (title, description, tags; any case), price range, owner_id — and combined', async (t) => {
  const server = await startServer(t);
  const ada = await server.userWithKey('creator', WRITE);
  const bob = await server.userWithKey('creator', WRITE);
  const adaListings = await seed(server, ada.key, 6, (index) => ({
    title: index === 0 ? 'Vector Search' : `ada ${index}`,
    description: index === 1 ? 'uses VECTOR math' : 'plain',
    tags: index === 2 ? ['vectors'] : [],
    type: index % 2 === 0 ? 'SKILL' : 'AGENT',
    price: index * 10,
  }));
  const bobListings = await seed(server, bob.key, 3, (index) => ({ title: `bob ${index}`, type: 'SKILL', price: 5 + index }));
  const all = [...adaListings, ...bobListings];
  const ids = async (query: string) => {
    const response = await server.request('GET', `/v1/listings${query}`, { key: ada.key });
    assert.equal(response.status, 200, `${query}: ${response.text}`);
    return { ids: response.body.data.map((listing: Listing) => listing.id).sort(), total: response.body.pagination.total };
  };
  const expect = (filter: (listing: Listing) => boolean) => all.filter(filter).map((listing) => listing.id).sort();

  const cases: Array<[string, (listing: Listing) => boolean]> = [
    ['?type=SKILL', (listing) => listing.type === 'SKILL'],
    ['?q=vector', (listing) => /vector/i.test(listing.title + listing.description + listing.tags.join(' '))],
    ['?q=VECTOR', (listing) => /vector/i.test(listing.title + listing.description + listing.tags.join(' '))],
    ['?min_price=10', (listing) => listing.price >= 10],
    ['?max_price=6', (listing) => listing.price <= 6],
    ['?min_price=5&max_price=20', (listing) => listing.price >= 5 && listing.price <= 20],
    [`?owner_id=${bob.userId}`, (listing) => listing.owner_id === bob.userId],
    [`?owner_id=${ada.userId}&type=AGENT&min_price=20`, (listing) => listing.owner_id === ada.userId && listing.type === 'AGENT' && listing.price >= 20],
    ['?type=SKILL&q=bob', (listing) => listing.type === 'SKILL' && listing.title.includes('bob')],
    ['?q=nothing-matches', () => false],
  ];
  for (const [query, filter] of cases) {
    await t.test(query, async () => {
      const result = await ids(query);
      assert.deepEqual(result.ids, expect(filter), query);
      assert.equal(result.total, expect(filter).length, `${query} total`);
    });
  }
});

test('q matches word starts in title, description or tags, accents and case ignored, and follows an update of the text', async (t) => {
  const server = await startServer(t);
  const { key } = await server.userWithKey('creator', WRITE);
  const [listing] = await seed(server, key, 1, () => ({ title: 'Alpha', description: 'Beta', tags: ['Gamma'], type: 'TOOL', price: 1 }));
  const found = async (q: string) => {
    const response = await server.request('GET', `/v1/listings?q=${encodeURIComponent(q)}`, { key });
    assert.equal(response.status, 200, `q=${JSON.stringify(q)}: ${response.text}`);
    return response.body.data.length === 1;
  };
  // Contract section 8: every word of q matches the start of a word there, accents ignored.
  for (const q of ['alpha', 'BETA', 'gamm', 'a b', 'ÁLPH', 'gam alp be', 'a\nb', '  al-  ']) {
    await t.test(`q=${JSON.stringify(q)} matches`, async () => {
      assert.equal(await found(q), true, `q=${JSON.stringify(q)} matches`);
    });
  }
  for (const q of ['ph', 'alphabeta', 'lpha', 'alpha delta', 'betagamma']) {
    await t.test(`q=${JSON.stringify(q)} matches nothing`, async () => {
      assert.equal(await found(q), false, `q=${JSON.stringify(q)} starts no word (or not every word of it does)`);
    });
  }
  // U+0000 (which could join two fields) never reaches the search: %00 in a URL is refused.
  for (const q of ['a\u0000b', 'beta\u0000gamma']) {
    await t.test(`q=${JSON.stringify(q)} is refused`, async () => {
      assert.equal((await server.request('GET', `/v1/listings?q=${encodeURIComponent(q)}`, { key })).status, 400);
    });
  }

  const put = await server.request('PUT', `/v1/listings/${listing!.id}`, { key, body: { title: 'Delta', tags: ['Epsilon'] } });
  assert.equal(put.status, 200, put.text);
  assert.equal(await found('alpha'), false, 'the old title no longer matches');
  assert.equal(await found('gamma'), false, 'the old tag no longer matches');
  assert.equal(await found('delta'), true, 'the new title matches');
  assert.equal(await found('epsilon'), true, 'the new tag matches');
});

test('a filtered search pages consistently, sees the next write, and is never confused with another filter', async (t) => {
  const server = await startServer(t);
  const { key } = await server.userWithKey('creator', WRITE);
  await seed(server, key, 7, (index) => ({ title: index < 5 ? `vector ${index}` : `other ${index}`, type: 'TOOL', price: 1 }));
  const list = async (query: string) => {
    const response = await server.request('GET', `/v1/listings${query}`, { key });
    assert.equal(response.status, 200, `${query}: ${response.text}`);
    return response.body;
  };
  const pages = [await list('?q=vector&limit=2&page=1'), await list('?q=vector&limit=2&page=2'), await list('?q=vector&limit=2&page=3')];
  const walked = pages.flatMap((page) => page.data.map((listing: Listing) => listing.id));
  const whole = (await list('?q=vector&limit=100')).data.map((listing: Listing) => listing.id);
  assert.equal(whole.length, 5);
  assert.deepEqual(walked, whole, 'pages of 2 walk the same matches in the same order as one page');
  for (const page of pages) assert.equal(page.pagination.total, 5);

  const [added] = await seed(server, key, 1, () => ({ title: 'vector newest', type: 'TOOL', price: 1 }));
  const after = await list('?q=vector&limit=2&page=1');
  assert.equal(after.pagination.total, 6, 'the new match counts at once');
  const matches: Listing[] = [...pages.flatMap((page) => page.data), added!];
  assert.equal(after.data[0].id, matches.sort(newestFirst)[0]!.id, 'and leads the default order (or ties by id with one made in its millisecond)');

  // q="a||" and q="a" with owner_id="||" are different searches, whatever their cache keys.
  await seed(server, key, 1, () => ({ title: 'a|| pipes', type: 'TOOL', price: 1 }));
  const byOddOwner = await list(`?q=a&owner_id=${encodeURIComponent('||')}`);
  const byPipes = await list(`?q=${encodeURIComponent('a||')}`);
  assert.deepEqual(byOddOwner.data, [], 'no owner has that id');
  assert.deepEqual(byPipes.data.map((listing: Listing) => listing.title), ['a|| pipes']);
});

test('sorts: default -created_at, created_at, price, -price, title; ties broken by id; stable across pages', async (t) => {
  const server = await startServer(t);
  const { key } = await server.userWithKey('creator', WRITE);
  const made = await seed(server, key, 7, (index) => ({ title: ['beta', 'Alpha', 'gamma', 'alpha', 'Delta', 'beta', 'epsilon'][index], type: 'PROMPT', price: [3, 1, 3, 2, 1, 3, 0][index] }));
  const order = async (query: string) => {
    const response = await server.request('GET', `/v1/listings${query}`, { key });
    return response.body.data.map((listing: Listing) => listing.id);
  };
  const byId = (left: Listing, right: Listing) => (left.id < right.id ? -1 : 1);
  const expected: Array<[string, Listing[]]> = [
    ['', [...made].sort(newestFirst)],
    ['?sort=-created_at', [...made].sort(newestFirst)],
    ['?sort=created_at', [...made].sort(newestFirst).reverse()],
    ['?sort=price', [...made].sort((left, right) => left.price - right.price || byId(left, right))],
    ['?sort=-price', [...made].sort((left, right) => right.price - left.price || byId(right, left))],
    ['?sort=title', [...made].sort((left, right) => left.title.toLowerCase().localeCompare(right.title.toLowerCase()) || byId(left, right))],
  ];
  for (const [query, listings] of expected) {
    assert.deepEqual(await order(query), listings.map((listing) => listing.id), `order of ${query || 'default'}`);
  }
  // Walking pages of 2 gives the same order as one page of 100, with no repeats or gaps.
  const walked: string[] = [];
  for (let page = 1; page <= 4; page += 1) walked.push(...(await order(`?sort=price&limit=2&page=${page}`)));
  assert.deepEqual(walked, await order('?sort=price&limit=100'));
});

test('freshness: a write is visible in the very next list call, even when the page was cached', async (t) => {
  // A standing clock: the cached page never ages out, and both listings share one millisecond.
  const server = await startServer(t, { clock: new ManualClock(Date.UTC(2026, 0, 1, 12)) });
  const { key } = await server.userWithKey('creator', WRITE);
  const [first] = await seed(server, key, 1, () => ({ title: 'first', type: 'TOOL', price: 1 }));
  const before = await server.request('GET', '/v1/listings', { key });
  assert.equal(before.body.pagination.total, 1);
  await server.request('GET', '/v1/listings', { key }); // now certainly served from the cache

  const created = (await server.request('POST', '/v1/listings', { key, body: { title: 'second', type: 'TOOL', price: 2 } })).body.data;
  const afterCreate = await server.request('GET', '/v1/listings', { key });
  assert.deepEqual(afterCreate.body.data.map((listing: Listing) => listing.id), [first!, created].sort(newestFirst).map((listing) => listing.id));

  await server.request('PUT', `/v1/listings/${first!.id}`, { key, body: { title: 'first, renamed' } });
  const afterUpdate = await server.request('GET', '/v1/listings', { key });
  assert.equal(afterUpdate.body.data.find((listing: Listing) => listing.id === first!.id).title, 'first, renamed');

  await server.request('DELETE', `/v1/listings/${created.id}`, { key });
  const afterArchive = await server.request('GET', '/v1/listings', { key });
  assert.equal(afterArchive.body.pagination.total, 1);
});

test('ETag on GET answers; If-None-Match → 304 without a body; a write changes the ETag', async (t) => {
  const server = await startServer(t);
  const { key } = await server.userWithKey('creator', [...WRITE, 'read:users']);
  const [listing] = await seed(server, key, 1, () => ({ title: 'tagged', type: 'TOOL', price: 1 }));
  for (const path of ['/v1/listings', `/v1/listings/${listing!.id}`, '/v1/users/me']) {
    await t.test(path, async () => {
      const first = await server.request('GET', path, { key });
      const etag = first.headers.get('etag');
      assert.ok(etag, `${path} has an ETag`);
      const cached = await server.request('GET', path, { key, headers: { 'if-none-match': etag } });
      assert.equal(cached.status, 304, path);
      assert.equal(cached.text, '');
      assert.equal(cached.headers.get('etag'), etag);
      assert.ok(cached.headers.get('x-ratelimit-remaining'), '304 still carries the rate-limit headers');
      const other = await server.request('GET', path, { key, headers: { 'if-none-match': '"something-else"' } });
      assert.equal(other.status, 200);
    });
  }
  const listEtag = (await server.request('GET', '/v1/listings', { key })).headers.get('etag');
  await server.request('PUT', `/v1/listings/${listing!.id}`, { key, body: { price: 2 } });
  const afterWrite = await server.request('GET', '/v1/listings', { key, headers: { 'if-none-match': listEtag! } });
  assert.equal(afterWrite.status, 200);
  assert.notEqual(afterWrite.headers.get('etag'), listEtag);
});

test('a page and a listing keep their ETags across a restart: an If-None-Match from before still gets 304', async (t) => {
  const dataDir = temporaryDir(t);
  const first = await startServer(null, { dataDir });
  const { key } = await first.userWithKey('creator', WRITE);
  const [listing] = await seed(first, key, 3, (index) => ({ title: `kept ${index}`, type: 'TOOL', price: index + 1 }));
  const paths = ['/v1/listings?limit=2', '/v1/listings?limit=2&page=2', `/v1/listings/${listing!.id}`];
  const tags = new Map<string, string>();
  for (const path of paths) tags.set(path, (await first.request('GET', path, { key })).headers.get('etag')!);
  await first.close();

  const second = await startServer(t, { dataDir });
  for (const path of paths) {
    const again = await second.request('GET', path, { key, headers: { 'if-none-match': tags.get(path)! } });
    assert.equal(again.status, 304, `${path}: the tag from before the restart still names the answer`);
  }
  assert.notEqual(tags.get(paths[0]!), tags.get(paths[1]!), 'two pages of different listings have different tags');
});
