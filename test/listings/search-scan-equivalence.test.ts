// GET /v1/listings answers the same, byte for byte, with the search module and without it
// (MARKETPLACE_MODULES without `search`: the core's scan, src/listings/scanning-search.ts). One
// server with every module takes a few hundred listings through the API (shared words and
// prefixes, accents, scripts without case, equal prices, many made in the same millisecond),
// then updates, archives and an owner's suspension; servers without the module, and with it,
// then start on a copy of its data. Every sort, q of one or two words, prefixes, odd characters
// and no match, each filter and their combinations, and paging, are asked of all three.

import assert from 'node:assert/strict';
import { cpSync } from 'node:fs';
import { test } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { LISTING_TYPES } from '../../src/domain/records.ts';
import { startServer, temporaryDir, type TestServer } from '../helpers/server.ts';
import { PRICES, randomQuery, seededRandom, SORTS, VOCABULARY } from './search-reference.ts';

const WRITE = ['read:listings', 'write:listings'];
const LISTINGS = 320;

/** The hand-picked queries: each sort alone and with each kind of q and filter, and pages. */
function chosenQueries(owners: readonly string[]): string[] {
  const texts = ['zebra', 'Zeb', 'z', 'ZÈBRE', 'app', 'a', 'apple zebra', 'café vector', 'cafe', 'naive', 'resume', 'é', '日', '日本語', 'file', 'ﬁ', 'x-ray', 'x ray', 'ray x', '4', '4x4 42', 'omega', 'ω', 'zzz', 'ebra', '!!', ' - ', '%', '😀', 'a b', 'vectors vector'];
  const filters = [
    '',
    'type=TOOL',
    `owner_id=${owners[0]}`,
    `owner_id=${owners[3]}`,
    'owner_id=usr_nobody',
    'min_price=10',
    'max_price=9.99',
    'min_price=5&max_price=250.5',
    'min_price=999999.99',
    `type=SKILL&owner_id=${owners[1]}`,
    `type=DATASET&min_price=1&max_price=100&owner_id=${owners[2]}`,
  ];
  const queries: string[] = [];
  for (const sort of [null, ...SORTS]) {
    const sorted = sort === null ? '' : `sort=${sort}`;
    for (const filter of filters) queries.push([filter, sorted].filter(Boolean).join('&'));
    for (const text of texts) queries.push([`q=${encodeURIComponent(text)}`, sorted].filter(Boolean).join('&'));
    for (const text of ['zebra', 'app', 'a']) for (const filter of filters.slice(1)) queries.push([`q=${encodeURIComponent(text)}`, filter, sorted].filter(Boolean).join('&'));
    // Paging through a search, past its end too.
    for (const page of [1, 2, 3, 7, 40]) {
      queries.push([`q=a&limit=9&page=${page}`, sorted].filter(Boolean).join('&'));
      queries.push([`min_price=1&limit=25&page=${page}`, sorted].filter(Boolean).join('&'));
    }
    for (const page of [1, 2, 5]) queries.push([`type=TOOL&limit=100&page=${page}`, sorted].filter(Boolean).join('&'));
  }
  return queries;
}

/** Makes the listings through the API: several owners, a clock that moves only every few listings. */
async function fill(server: TestServer, clock: ManualClock, random: () => number): Promise<string[]> {
  const pick = <Item>(items: readonly Item[]): Item => items[Math.floor(random() * items.length)]!;
  const text = (words: number): string => Array.from({ length: words }, () => pick(VOCABULARY)).join(pick([' ', ', ', ' — ', '/', '-']));
  const owners: Array<{ userId: string; key: string }> = [];
  for (let owner = 0; owner < 5; owner += 1) owners.push(await server.userWithKey('creator', WRITE, 1_000_000));
  const made: Array<{ id: string; key: string }> = [];
  for (let number = 0; number < LISTINGS; number += 1) {
    // Three or so listings a millisecond: ties of created_at broken by id.
    if (random() < 0.35) clock.advance(1 + Math.floor(random() * 5_000));
    const owner = pick(owners);
    const body = {
      title: `${text(1 + Math.floor(random() * 3))}${random() < 0.2 ? ` ${number}` : ''}`,
      description: random() < 0.3 ? '' : text(Math.floor(random() * 6)),
      type: pick(LISTING_TYPES),
      price: pick(PRICES),
      tags: Array.from({ length: Math.floor(random() * 3) }, () => pick(VOCABULARY).slice(0, 30)),
    };
    const response = await server.request('POST', '/v1/listings', { key: owner.key, body });
    assert.equal(response.status, 201, response.text);
    made.push({ id: response.body.data.id, key: owner.key });
  }
  // Changes after the index has them: new titles, prices and types, and archives.
  for (const { id, key } of made.slice(0, 60)) {
    clock.advance(1);
    const change = pick([{ title: text(2) }, { price: pick(PRICES) }, { type: pick(LISTING_TYPES) }, { description: text(4), tags: [pick(VOCABULARY)] }]);
    const response = await server.request('PUT', `/v1/listings/${id}`, { key, body: change });
    assert.equal(response.status, 200, response.text);
  }
  for (const { id, key } of made.slice(60, 100)) {
    const response = await server.request('DELETE', `/v1/listings/${id}`, { key });
    assert.ok(response.status === 200 || response.status === 204, response.text);
  }
  // One owner suspended (their listings leave every answer); another suspended and reinstated.
  const suspend = async (userId: string, act: 'suspend' | 'unsuspend'): Promise<void> => {
    const response = await server.admin('POST', `/admin/v1/users/${userId}/${act}`, act === 'suspend' ? { reason: 'test' } : undefined);
    assert.equal(response.status, 200, response.text);
  };
  await suspend(owners[4]!.userId, 'suspend');
  await suspend(owners[3]!.userId, 'suspend');
  await suspend(owners[3]!.userId, 'unsuspend');
  return owners.map((owner) => owner.userId);
}

test('with the search module and without it, every listing search answers the same', { timeout: 120_000 }, async (t) => {
  const clock = new ManualClock();
  const settings = { config: { keyCpuBudgetMs: 0 }, clock };
  const indexed = await startServer(t, { ...settings, env: { MARKETPLACE_MODULES: 'all' } });
  const owners = await fill(indexed, clock, seededRandom(51));

  // The same records, loaded from a copy of the log: without the module, and with it (its index
  // then made at start rather than write by write).
  const copy = temporaryDir(t);
  cpSync(indexed.dataDir!, copy, { recursive: true });
  const scanning = await startServer(t, { ...settings, dataDir: copy, env: { MARKETPLACE_MODULES: 'none' } });
  assert.equal(scanning.app.config.modules.includes('search'), false);
  const secondCopy = temporaryDir(t);
  cpSync(indexed.dataDir!, secondCopy, { recursive: true });
  const reloaded = await startServer(t, { ...settings, dataDir: secondCopy, env: { MARKETPLACE_MODULES: 'search' } });

  const { key } = await indexed.userWithKey('member', ['read:listings'], 1_000_000);
  const { key: scanningKey } = await scanning.userWithKey('member', ['read:listings'], 1_000_000);
  const { key: reloadedKey } = await reloaded.userWithKey('member', ['read:listings'], 1_000_000);

  const random = seededRandom(5151);
  const queries = [...chosenQueries(owners), ...Array.from({ length: 100 }, () => String(randomQuery(random, owners)))];
  // Each answer's bytes, read plainly (no answer checks, which would cost more than the searches).
  const answer = async (server: TestServer, path: string, bearer: string): Promise<{ status: number; text: string }> => {
    const response = await fetch(server.url + path, { headers: { authorization: `Bearer ${bearer}`, 'accept-encoding': 'identity' } });
    return { status: response.status, text: await response.text() };
  };
  let nonEmpty = 0;
  for (const query of queries) {
    const path = `/v1/listings?${query}`;
    const [expected, scanned, again] = await Promise.all([answer(indexed, path, key), answer(scanning, path, scanningKey), answer(reloaded, path, reloadedKey)]);
    assert.equal(expected.status, 200, `${path}: ${expected.text}`);
    assert.deepEqual(JSON.parse(scanned.text), JSON.parse(expected.text), `without the module: ${path}`);
    assert.deepEqual(JSON.parse(again.text), JSON.parse(expected.text), `with the module, loaded at start: ${path}`);
    // Not only equal values: the same bytes.
    assert.equal(scanned.text, expected.text, path);
    assert.equal(again.text, expected.text, path);
    if (JSON.parse(expected.text).data.length > 0) nonEmpty += 1;
  }
  // The data make the queries tell something: most find listings, some several pages' worth.
  assert.ok(nonEmpty > queries.length / 2, `${nonEmpty} of ${queries.length} queries found listings`);
  const all = await indexed.request('GET', '/v1/listings?limit=1', { key });
  assert.ok(all.body.pagination.total > 150 && all.body.pagination.total < LISTINGS - 40, `${all.body.pagination.total} listed`);
});
