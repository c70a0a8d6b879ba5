// The records in a real PostgreSQL shared by several instances (here in one process, each with
// its own store, connections and caches): a write on one is seen by the others, concurrent
// writes on different instances lose nothing, a restart loads everything, and an outage turns
// writes into 503 while reads go on, healing by itself. Each write is checked against what it
// read, so instances writing different records do not refuse each other, while two writes that
// depend on the same data (one email) still cannot both win. A database made by the first
// schema is migrated in place at start.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import { SCHEMA_MIGRATIONS, SCHEMA_VERSION } from '../../src/backends/postgres/schema.ts';
import type { Config } from '../../src/config.ts';
import { eventually } from '../helpers/eventually.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { skipUnlessServices, postgresAndRedisForFile } from '../helpers/services.ts';
import { answer, startReceiver } from '../webhooks/fixtures.ts';

const skip = skipUnlessServices('postgresBin', 'redisServer');
const services = postgresAndRedisForFile(skip);
let databases = 0;


/** A fresh database and `count` instances on it. */
async function instances(t: import('node:test').TestContext, count: number, url?: string, config: Partial<Config> = {}): Promise<{ servers: TestServer[]; url: string }> {
  databases += 1;
  const databaseUrl = url ?? services.postgres.createDatabase(`store_test_${process.pid}_${databases}`);
  const servers: TestServer[] = [];
  for (let index = 0; index < count; index += 1) {
    servers.push(await startServer(t, { dataDir: null, config: { databaseUrl, redisUrl: services.redis.url, ...config }, expectedServerErrors: [503] }));
  }
  return { servers, url: databaseUrl };
}

test('a listing created on one instance is read on the others; its update and archive follow', { skip, timeout: 120_000 }, async (t) => {
  const { servers } = await instances(t, 3);
  const [first, second, third] = servers as [TestServer, TestServer, TestServer];
  const creator = await first.userWithKey('creator', ['read:listings', 'write:listings']);
  const made = await first.request('POST', '/v1/listings', { key: creator.key, body: { title: 'Shared', type: 'TOOL', price: 5 } });
  assert.equal(made.status, 201);
  const id = made.body.data.id;
  for (const server of [second, third]) {
    await eventually(async () => (await server.request('GET', `/v1/listings/${id}`, { key: creator.key })).status === 200, 30_000);
    assert.equal((await server.request('GET', `/v1/listings/${id}`, { key: creator.key })).body.data.title, 'Shared');
  }
  assert.equal((await second.request('PUT', `/v1/listings/${id}`, { key: creator.key, body: { price: 7 } })).status, 200);
  await eventually(async () => (await third.request('GET', '/v1/listings', { key: creator.key })).body.data[0]?.price === 7, 30_000);
  assert.equal((await third.request('DELETE', `/v1/listings/${id}`, { key: creator.key })).status, 200);
  await eventually(async () => (await first.request('GET', '/v1/listings', { key: creator.key })).body.pagination.total === 0, 30_000);
});

test('20 concurrent PUTs of different fields spread over instances lose nothing; a concurrent archive is never undone (3 trials)', { skip, timeout: 120_000 }, async (t) => {
  const { servers } = await instances(t, 3);
  const creator = await servers[0]!.userWithKey('creator', ['read:listings', 'write:listings'], 10_000);
  const base = { title: 'Base', description: 'base', price: 1, tags: ['base'] };
  const change = (index: number): Record<string, unknown> =>
    [{ title: `Title ${index}` }, { description: `Description ${index}` }, { price: 100 + index }, { tags: [`t${index}`] }][index % 4]!;
  for (let trial = 0; trial < 3; trial += 1) {
    const ids: string[] = [];
    for (const _ of [0, 1]) ids.push((await servers[0]!.request('POST', '/v1/listings', { key: creator.key, body: { ...base, type: 'TOOL' } })).body.data.id);
    const [kept, archived] = ids as [string, string];
    await Promise.all(servers.map((server) => eventually(async () => (await server.request('GET', `/v1/listings/${archived}`, { key: creator.key })).status === 200)));
    // Each PUT sends one field. A PUT decided on an older copy of the record would write that
    // copy's other fields back: some field would return to its base value.
    const puts = Array.from({ length: 20 }, (_unused, index) =>
      servers[index % 3]!.request('PUT', `/v1/listings/${kept}`, { key: creator.key, body: change(index) }),
    );
    const racing = Array.from({ length: 6 }, (_unused, index) =>
      servers[index % 3]!.request('PUT', `/v1/listings/${archived}`, { key: creator.key, body: { price: 50 + index } }),
    );
    const archive = servers[2]!.request('DELETE', `/v1/listings/${archived}`, { key: creator.key });
    const answers = await Promise.all(puts);
    assert.deepEqual(answers.map((answer) => answer.status), Array(20).fill(200), answers.map((a) => a.text).filter((x) => x.includes("error")).join("\n"));
    for (const answer of await Promise.all(racing)) assert.ok([200, 409].includes(answer.status), answer.text);
    assert.equal((await archive).status, 200);
    for (const server of servers) {
      await eventually(async () => {
        const seen = (await server.request('GET', `/v1/listings/${kept}`, { key: creator.key })).body.data;
        return seen.title !== base.title && seen.description !== base.description && seen.price !== base.price && seen.tags[0] !== 'base';
      }, 5_000, `every field changed on ${server.url} (trial ${trial + 1})`);
      await eventually(async () => (await server.request('GET', `/v1/listings/${archived}`, { key: creator.key })).body.data.status === 'archived', 30_000, 'archived');
    }
    const final = (await servers[1]!.request('GET', `/v1/listings/${kept}`, { key: creator.key })).body.data;
    // Every field holds the value of one of the acknowledged PUTs that sent it.
    assert.match(final.title, /^Title \d+$/);
    assert.match(final.description, /^Description \d+$/);
    assert.ok(final.price >= 100 && final.price < 120);
    assert.match(final.tags[0], /^t\d+$/);
  }
});

test('a new instance loads every record; the schema version is kept', { skip, timeout: 120_000 }, async (t) => {
  const { servers, url } = await instances(t, 1);
  const creator = await servers[0]!.userWithKey('creator', ['read:listings', 'write:listings']);
  const ids: string[] = [];
  for (let index = 0; index < 25; index += 1) {
    ids.push((await servers[0]!.request('POST', '/v1/listings', { key: creator.key, body: { title: `L${index}`, type: 'TOOL', price: index } })).body.data.id);
  }
  await servers[0]!.request('DELETE', `/v1/listings/${ids[0]}`, { key: creator.key });
  await servers[0]!.close();
  const { servers: later } = await instances(t, 1, url);
  const list = await later[0]!.request('GET', '/v1/listings?limit=100', { key: creator.key });
  assert.equal(list.body.pagination.total, 24);
  assert.equal((await later[0]!.request('GET', `/v1/listings/${ids[0]}`, { key: creator.key })).body.data.status, 'archived');
});

test('PostgreSQL stopped: writes 503, reads 200; restarted: writes resume on every instance without a restart', { skip, timeout: 180_000 }, async (t) => {
  const { servers } = await instances(t, 2);
  const [first, second] = servers as [TestServer, TestServer];
  const creator = await first.userWithKey('creator', ['read:listings', 'write:listings']);
  const id = (await first.request('POST', '/v1/listings', { key: creator.key, body: { title: 'Before', type: 'TOOL', price: 1 } })).body.data.id;
  await eventually(async () => (await second.request('GET', `/v1/listings/${id}`, { key: creator.key })).status === 200);

  await services.postgres.stop();
  try {
    for (const server of servers) {
      const write = await server.request('PUT', `/v1/listings/${id}`, { key: creator.key, body: { price: 2 } });
      assert.equal(write.status, 503, write.text);
      assert.equal(write.headers.get('retry-after'), '5');
      assert.equal((await server.request('GET', `/v1/listings/${id}`, { key: creator.key })).body.data.price, 1);
      assert.equal((await server.request('GET', '/v1/listings', { key: creator.key })).status, 200);
    }
  } finally {
    await services.postgres.start();
  }
  await eventually(async () => (await second.request('PUT', `/v1/listings/${id}`, { key: creator.key, body: { price: 3 } })).status === 200, 20_000);
  await eventually(async () => (await first.request('GET', `/v1/listings/${id}`, { key: creator.key })).body.data.price === 3, 30_000);
  assert.equal((await first.request('PUT', `/v1/listings/${id}`, { key: creator.key, body: { price: 4 } })).status, 200);
  await eventually(async () => (await second.request('GET', `/v1/listings/${id}`, { key: creator.key })).body.data.price === 4, 30_000);
});

test('analytics sum every instance: requests counted on two instances show in one answer', { skip, timeout: 120_000 }, async (t) => {
  const { servers } = await instances(t, 2);
  const [first, second] = servers as [TestServer, TestServer];
  const reader = await first.userWithKey('creator', ['read:listings', 'write:listings', 'read:analytics']);
  await eventually(async () => (await second.request('GET', '/v1/listings', { key: reader.key })).status === 200, 30_000, 'key known');
  const listing = (await first.request('POST', '/v1/listings', { key: reader.key, body: { title: 'Counted', type: 'TOOL', price: 1 } })).body.data.id;
  await eventually(async () => (await second.request('GET', `/v1/listings/${listing}`, { key: reader.key })).status === 200, 30_000, 'listing known');
  for (let index = 0; index < 5; index += 1) await first.request('GET', '/v1/listings', { key: reader.key });
  for (let index = 0; index < 3; index += 1) await second.request('GET', '/v1/listings', { key: reader.key });
  for (let index = 0; index < 4; index += 1) await first.request('GET', `/v1/listings/${listing}`, { key: reader.key });
  // Its counts reach the database at the latest when it stops (and every minute before).
  await first.close();
  // second: 1 (key known) + 3 listing pages, plus its own listing views until the listing was known.
  await eventually(async () => {
    const usage = (await second.request('GET', '/v1/analytics/usage', { key: reader.key })).body.data;
    const pages = usage.endpoints.find((endpoint: { endpoint: string }) => endpoint.endpoint === 'GET /v1/listings');
    return pages?.requests === 5 + 1 + 3;
  }, 10_000, 'pages counted on both instances');
  const views = (await second.request('GET', '/v1/analytics/listings', { key: reader.key })).body.data.find((row: { listing_id: string }) => row.listing_id === listing);
  // 4 views on the first instance, and at least one on the second (the look-up that found it).
  assert.ok(views.views >= 5, `views ${views.views}`);
  // The 8 pages asked after it was made showed it once each.
  assert.equal(views.impressions, 8);
});

test('an Idempotency-Key is honoured across instances: the same POST sent to three at once creates one listing (5 trials)', { skip, timeout: 120_000 }, async (t) => {
  const { servers } = await instances(t, 3);
  const creator = await servers[0]!.userWithKey('creator', ['read:listings', 'write:listings']);
  await Promise.all(servers.map((server) => eventually(async () => (await server.request('GET', '/v1/listings', { key: creator.key })).status === 200, 30_000, 'key known')));
  for (let trial = 0; trial < 5; trial += 1) {
    const body = { title: `Once ${trial}`, type: 'TOOL', price: 1 };
    const answers = await Promise.all(
      servers.map((server) => server.request('POST', '/v1/listings', { key: creator.key, body, headers: { 'idempotency-key': `trial-${trial}` } })),
    );
    assert.deepEqual(answers.map((answer) => answer.status), [201, 201, 201], answers.map((answer) => answer.text).join('\n'));
    assert.equal(new Set(answers.map((answer) => answer.body.data.id)).size, 1, 'one listing, the same answer everywhere');
    const other = await servers[trial % 3]!.request('POST', '/v1/listings', { key: creator.key, body: { ...body, price: 2 }, headers: { 'idempotency-key': `trial-${trial}` } });
    assert.equal(other.status, 422);
  }
  await eventually(async () => (await servers[1]!.request('GET', `/v1/listings?owner_id=${creator.userId}&limit=100`, { key: creator.key })).body.pagination.total === 5, 30_000, 'five listings');
});

async function listingIds(server: TestServer, key: string): Promise<string[]> {
  const answer = await server.request('GET', '/v1/listings?limit=100', { key });
  assert.equal(answer.status, 200);
  return (answer.body.data as { id: string }[]).map((listing) => listing.id).sort();
}

test('90 creates at once, 30 on each of three instances: every one 201, and every instance then holds exactly those 90 (3 trials)', { skip, timeout: 120_000 }, async (t) => {
  const { servers } = await instances(t, 3);
  const creator = await servers[0]!.userWithKey('creator', ['read:listings', 'write:listings'], 100_000);
  await eventually(async () => (await Promise.all(servers.map((server) => server.request('GET', '/v1/listings', { key: creator.key })))).every((answer) => answer.status === 200), 30_000, 'the key on every instance');
  const made: string[] = [];
  for (let trial = 0; trial < 3; trial += 1) {
    const answers = await Promise.all(
      Array.from({ length: 90 }, (_unused, index) =>
        servers[index % 3]!.request('POST', '/v1/listings', { key: creator.key, body: { title: `T${trial} L${index}`, type: 'TOOL', price: index } }),
      ),
    );
    assert.deepEqual([...new Set(answers.map((answer) => answer.status))], [201], `trial ${trial}`);
    made.push(...answers.map((answer) => answer.body.data.id as string));
    // Each trial's listings are archived after it, so every trial lists exactly its own 90.
    const expected = answers.map((answer) => answer.body.data.id as string).sort();
    for (const server of servers) {
      await eventually(async () => JSON.stringify(await listingIds(server, creator.key)) === JSON.stringify(expected), 30_000, `trial ${trial}: every listing on each instance`);
    }
    const archived = await Promise.all(expected.map((id, index) => servers[(index + 1) % 3]!.request('DELETE', `/v1/listings/${id}`, { key: creator.key })));
    assert.deepEqual([...new Set(archived.map((answer) => answer.status))], [200]);
    for (const server of servers) await eventually(async () => (await listingIds(server, creator.key)).length === 0, 30_000, `trial ${trial}: the archives on each instance`);
  }
  assert.equal(new Set(made).size, 270, 'no listing was created twice');
  // Creates read only the key and its user, which nobody changed: none was refused and decided
  // again because another instance had written meanwhile.
  const conflicts = await Promise.all(servers.map(async (server) => (await server.admin('GET', '/admin/v1/stats')).body.data.store.conflicts as number));
  t.diagnostic(`writes decided again, per instance: ${conflicts.join(', ')}`);
  assert.deepEqual(conflicts, [0, 0, 0]);
});

const HOOKED = ['read:listings', 'write:listings', 'read:webhooks', 'write:webhooks'];

test('a listing committed after a webhook registered on another instance queues an event for it (4 trials of 20 writes at once over two instances)', { skip, timeout: 120_000 }, async (t) => {
  // Deliveries fail (500) and wait a minute to be retried, so each stays in the database
  // beside its webhook, whose record (and version) the failure leaves untouched.
  const { servers, url } = await instances(t, 2, undefined, { webhookAllowPrivate: true, webhookRetryDelaysMs: [60_000] });
  const [registrar, writer] = servers as [TestServer, TestServer];
  const receiver = await startReceiver(t, answer(500));
  const creator = await registrar.userWithKey('creator', HOOKED, 100_000);
  await eventually(async () => (await writer.request('GET', '/v1/webhooks', { key: creator.key })).status === 200, 30_000, 'the key on the writer');
  for (let trial = 0; trial < 4; trial += 1) {
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_unused, index) =>
        index % 4 === 1
          ? registrar.request('POST', '/v1/webhooks', { key: creator.key, body: { url: `${receiver.url}/${trial}-${index}`, events: ['listing.created'] } })
          : writer.request('POST', '/v1/listings', { key: creator.key, body: { title: `T${trial} ${index}`, type: 'TOOL', price: 1 } }),
      ),
    );
    assert.deepEqual([...new Set(answers.map((answer) => answer.status))], [201]);
  }
  await eventually(async () => receiver.received.length > 0, 30_000, 'a first attempt');

  // Each instance writes its own slot of the log, one write after the other: the listings are in
  // the writer's slot, in the order it committed them. A listing committed after a webhook must
  // have an event for it, so what one listing has events for, every later listing has too.
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  t.after(() => client.end());
  const rows = (await client.query<{ collection: string; id: string; seq: string; data: { webhook_id?: string; event_id?: string; payload?: string } }>(
    "SELECT collection, id, seq, data FROM marketplace_records WHERE collection IN ('webhooks', 'listings', 'deliveries', 'events') AND data IS NOT NULL",
  )).rows;
  // Each delivery's body is its event record's, stored once.
  const payloads = new Map(rows.filter((row) => row.collection === 'events').map((row) => [row.id, row.data.payload!]));
  const webhooks = rows.filter((row) => row.collection === 'webhooks');
  const listings = rows.filter((row) => row.collection === 'listings').sort((a, b) => Number(a.seq) - Number(b.seq));
  const events = new Set(rows.filter((row) => row.collection === 'deliveries').map((row) => `${row.data.webhook_id} ${JSON.parse(row.data.payload ?? payloads.get(row.data.event_id!)!).data.id}`));
  assert.equal(webhooks.length, 20);
  assert.equal(listings.length, 60);
  let expected = 0;
  let before = new Set<string>();
  for (const listing of listings) {
    const known = new Set(webhooks.filter((webhook) => events.has(`${webhook.id} ${listing.id}`)).map((webhook) => webhook.id));
    const forgotten = [...before].filter((id) => !known.has(id));
    assert.deepEqual(forgotten, [], `${listing.id} has no event for webhooks an earlier listing of the same instance had events for`);
    before = known;
    expected += known.size;
  }
  assert.ok(before.size > 0, 'the last listings have events');
  t.diagnostic(`${expected} events owed by the order of the writes, all queued`);
});

test('listing writes on one instance are never decided again because webhook deliveries finish on another (200 writes)', { skip, timeout: 120_000 }, async (t) => {
  const { servers } = await instances(t, 2, undefined, { webhookAllowPrivate: true });
  const [writer, other] = servers as [TestServer, TestServer];
  const receiver = await startReceiver(t, answer(200));
  const creator = await other.userWithKey('creator', HOOKED, 100_000);
  assert.equal((await other.request('POST', '/v1/webhooks', { key: creator.key, body: { url: receiver.url, events: ['listing.created'] } })).status, 201);
  await eventually(async () => (await writer.request('GET', '/v1/webhooks', { key: creator.key })).body?.data?.length === 1, 30_000, 'the webhook on the writer');
  await Promise.all(
    Array.from({ length: 4 }, async (_unused, client) => {
      for (let index = 0; index < 50; index += 1) {
        const made = await writer.request('POST', '/v1/listings', { key: creator.key, body: { title: `W${client}-${index}`, type: 'TOOL', price: 1 } });
        assert.equal(made.status, 201, made.text);
      }
    }),
  );
  await eventually(async () => receiver.received.length >= 200, 20_000, 'every event delivered');
  const stats = await Promise.all(servers.map(async (server) => (await server.admin('GET', '/admin/v1/stats')).body.data.store));
  t.diagnostic(`writes decided again, by collection: ${stats.map((store) => JSON.stringify(store.conflictsByCollection)).join(' and ')}`);
  // The other instance sent deliveries too, writing their outcomes on the webhook meanwhile
  // (the two may refuse each other's claims on one delivery); not one listing write was refused.
  const delivered = /marketplace_webhook_deliveries_total\{outcome="delivered"\} (\d+)/.exec((await other.admin('GET', '/metrics')).text);
  assert.ok(Number(delivered?.[1]) > 0, 'the other instance delivered some');
  assert.equal(stats[0].conflictsByCollection.listings ?? 0, 0);
});

test('one email taken on three instances at the same moment: exactly one succeeds, the others get 409 (10 trials)', { skip, timeout: 120_000 }, async (t) => {
  const { servers } = await instances(t, 3);
  const people = await Promise.all(servers.map((server) => server.userWithKey('creator', ['read:users', 'write:users'])));
  for (let trial = 0; trial < 10; trial += 1) {
    const email = `shared${trial}@example.com`;
    // Every instance knows every key before the race (they were made on different ones).
    for (const server of servers) {
      await eventually(async () => (await Promise.all(people.map((person) => server.request('GET', '/v1/users/me', { key: person.key })))).every((answer) => answer.status === 200), 30_000, 'the keys on every instance');
    }
    const answers = await Promise.all(people.map((person, index) => servers[index]!.request('PUT', '/v1/users/me', { key: person.key, body: { email } })));
    const statuses = answers.map((answer) => answer.status);
    assert.equal(statuses.filter((status) => status === 200).length, 1, `trial ${trial}: ${statuses.join(',')}`);
    assert.equal(statuses.filter((status) => status === 409).length, 2, `trial ${trial}: ${statuses.join(',')}`);
    const holders = (await servers[0]!.admin('GET', '/admin/v1/users?limit=100')).body.data.filter((user: { email: string }) => user.email === email);
    assert.equal(holders.length, 1, `trial ${trial}: one user holds ${email}`);
  }
});

test('a database made by the first schema is migrated in place at start, keeping its records; writes then commit', { skip, timeout: 120_000 }, async (t) => {
  databases += 1;
  const databaseUrl = services.postgres.createDatabase(`store_test_${process.pid}_${databases}`);
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  t.after(() => client.end());
  // The first schema, as its release left it, with one user already written.
  await client.query(
    'CREATE TABLE marketplace_meta (id int PRIMARY KEY CHECK (id = 1), schema_version int NOT NULL, last_version bigint NOT NULL, tombstones_dropped_through bigint NOT NULL)',
  );
  await client.query(SCHEMA_MIGRATIONS[0]!);
  await client.query('UPDATE marketplace_meta SET schema_version = 1 WHERE id = 1');
  const user = { id: 'usr_from_v1', name: 'From the first schema', email: 'v1@example.com', role: 'creator', bio: '', website: '', avatar_url: '', created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z' };
  const committed = await client.query<{ version: string }>('SELECT marketplace_append(1, $1) AS version', [JSON.stringify([[{ op: 'put', c: 'users', id: user.id, d: user }]])]);
  assert.equal(committed.rows[0]!.version, '2');

  const { servers: [server] } = await instances(t, 1, databaseUrl);
  const schema = await client.query<{ schema_version: number }>('SELECT schema_version FROM marketplace_meta');
  assert.equal(schema.rows[0]!.schema_version, SCHEMA_VERSION);
  assert.equal((await server!.admin('GET', `/admin/v1/users/${user.id}`)).body.data.name, user.name);
  const key = await server!.admin('POST', '/admin/v1/keys', { user_id: user.id, name: 'after', permissions: ['read:listings', 'write:listings'] });
  assert.equal(key.status, 201);
  const made = await server!.request('POST', '/v1/listings', { key: key.body.data.key, body: { title: 'After the upgrade', type: 'TOOL', price: 1 } });
  assert.equal(made.status, 201);
});
