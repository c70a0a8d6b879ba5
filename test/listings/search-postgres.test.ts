// Two instances on one PostgreSQL database: random listing writes (creates, changes of every
// field, archives) spread over both, each instance applying the other's through the store's
// change reactions; once both have every write, random queries of every filter, text, sort and
// page on each instance give exactly what a plain filter over the written listings gives.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LISTING_TYPES, type ListingRecord } from '../../src/domain/records.ts';
import { eventually } from '../helpers/eventually.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { postgresAndRedisForFile, skipUnlessServices } from '../helpers/services.ts';
import { plainAnswer, PRICES, randomQuery, seededRandom, VOCABULARY } from './search-reference.ts';

const skip = skipUnlessServices('postgresBin', 'redisServer');
const services = postgresAndRedisForFile(skip);

test('two PostgreSQL instances answer searches as a plain filter does after 400 random writes spread over both', { skip, timeout: 300_000 }, async (t) => {
  const databaseUrl = services.postgres.createDatabase(`search_test_${process.pid}`);
  const servers: TestServer[] = [];
  for (let index = 0; index < 2; index += 1) {
    servers.push(await startServer(t, { dataDir: null, config: { databaseUrl, redisUrl: services.redis.url } }));
  }
  const permissions = ['read:listings', 'write:listings'];
  const owners = [await servers[0]!.userWithKey('creator', permissions, 100_000), await servers[0]!.userWithKey('creator', permissions, 100_000)];
  const random = seededRandom(32);
  const pick = <Item>(items: readonly Item[]): Item => items[Math.floor(random() * items.length)]!;
  const text = (words: number): string => Array.from({ length: words }, () => pick(VOCABULARY)).join(pick([' ', ', ', '/']));
  const written = new Map<string, ListingRecord>();
  let last: ListingRecord | undefined;

  for (let write = 0; write < 400; write += 1) {
    const server = pick(servers);
    const owner = pick(owners);
    const mine = [...written.values()].filter((listing) => listing.owner_id === owner.userId && listing.status === 'active');
    const roll = random();
    let response;
    if (mine.length < 5 || roll < 0.5) {
      const body = { title: text(1 + Math.floor(random() * 3)), description: text(Math.floor(random() * 6)), type: pick(LISTING_TYPES), price: pick(PRICES), tags: [pick(VOCABULARY)] };
      response = await server.request('POST', '/v1/listings', { key: owner.key, body });
      assert.equal(response.status, 201, response.text);
    } else if (roll < 0.9) {
      const field = pick(['title', 'description', 'tags', 'type', 'price']);
      const value = { title: text(2), description: text(4), tags: [pick(VOCABULARY), pick(VOCABULARY)], type: pick(LISTING_TYPES), price: pick(PRICES) }[field];
      response = await server.request('PUT', `/v1/listings/${pick(mine).id}`, { key: owner.key, body: { [field]: value } });
      assert.equal(response.status, 200, response.text);
    } else {
      response = await server.request('DELETE', `/v1/listings/${pick(mine).id}`, { key: owner.key });
      assert.equal(response.status, 200, response.text);
    }
    written.set(response.body.data.id, response.body.data);
    last = response.body.data;
  }
  // An instance applies the other's writes in commit order: once it shows the last one, it has them all.
  for (const server of servers) {
    await eventually(async () => {
      const shown = await server.request('GET', `/v1/listings/${last!.id}`, { key: owners[0]!.key });
      return JSON.stringify(shown.body.data) === JSON.stringify(last);
    }, 10_000, 'the last write on both instances');
  }

  for (const [number, server] of servers.entries()) {
    for (let query = 0; query < 150; query += 1) {
      const params = randomQuery(random, owners.map((owner) => owner.userId));
      const response = await server.request('GET', `/v1/listings?${params}`, { key: owners[0]!.key });
      assert.equal(response.status, 200, response.text);
      const answer = { ids: response.body.data.map((listing: ListingRecord) => listing.id), total: response.body.pagination.total };
      assert.deepEqual(answer, plainAnswer(written.values(), new Set(), params), `instance ${number + 1}: ?${params}`);
    }
  }
});
