// Writes on several instances at once, on one PostgreSQL: each write is checked against what it
// read, so instances writing different records do not refuse each other, while two writes that
// depend on the same data (one email, one listing) still cannot both win. Also: a database made
// by the first schema is migrated in place at start.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import { SCHEMA_MIGRATIONS, SCHEMA_VERSION } from '../../src/backends/postgres/schema.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { skipUnlessServices, sleep, postgresAndRedisForFile } from '../helpers/services.ts';

const skip = skipUnlessServices('postgresBin', 'redisServer');
const services = postgresAndRedisForFile(skip);
let databases = 0;

async function instances(t: import('node:test').TestContext, count: number, databaseUrl = newDatabase()): Promise<TestServer[]> {
  const servers: TestServer[] = [];
  for (let index = 0; index < count; index += 1) {
    servers.push(await startServer(t, { dataDir: null, config: { databaseUrl, redisUrl: services.redis.url } }));
  }
  return servers;
}

function newDatabase(): string {
  databases += 1;
  return services.postgres.createDatabase(`concurrency_test_${process.pid}_${databases}`);
}

/** Polls until `check` holds, failing after `timeoutMs`. */
async function eventually(what: string, check: () => Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const started = performance.now();
  while (!(await check())) {
    if (performance.now() - started > timeoutMs) throw new Error(`${what}: not true within ${timeoutMs} ms`);
    await sleep(20);
  }
}

async function listingIds(server: TestServer, key: string): Promise<string[]> {
  const answer = await server.request('GET', '/v1/listings?limit=100', { key });
  assert.equal(answer.status, 200);
  return (answer.body.data as { id: string }[]).map((listing) => listing.id).sort();
}

test('90 creates at once, 30 on each of three instances: every one 201, and every instance then holds exactly those 90 (3 trials)', { skip, timeout: 120_000 }, async (t) => {
  const servers = await instances(t, 3);
  const creator = await servers[0]!.userWithKey('creator', ['read:listings', 'write:listings'], 100_000);
  await eventually('the key on every instance', async () => (await Promise.all(servers.map((server) => server.request('GET', '/v1/listings', { key: creator.key })))).every((answer) => answer.status === 200));
  const made: string[] = [];
  for (let trial = 0; trial < 3; trial += 1) {
    const answers = await Promise.all(
      Array.from({ length: 90 }, (_unused, index) =>
        servers[index % 3]!.request('POST', '/v1/listings', { key: creator.key, body: { title: `T${trial} L${index}`, type: 'TOOL', price: index } }),
      ),
    );
    assert.deepEqual([...new Set(answers.map((answer) => answer.status))], [201], `trial ${trial}`);
    made.push(...answers.map((answer) => answer.body.data.id as string));
    // Let the listings' pages cover them all: archive this trial's, so each trial lists 90.
    const expected = answers.map((answer) => answer.body.data.id as string).sort();
    for (const server of servers) {
      await eventually(`trial ${trial}: every listing on each instance`, async () => JSON.stringify(await listingIds(server, creator.key)) === JSON.stringify(expected));
    }
    const archived = await Promise.all(expected.map((id, index) => servers[(index + 1) % 3]!.request('DELETE', `/v1/listings/${id}`, { key: creator.key })));
    assert.deepEqual([...new Set(archived.map((answer) => answer.status))], [200]);
    for (const server of servers) await eventually(`trial ${trial}: the archives on each instance`, async () => (await listingIds(server, creator.key)).length === 0);
  }
  assert.equal(new Set(made).size, 270, 'no listing was created twice');
  // Creates read only the key and its user, which nobody changed: none was refused and decided
  // again because another instance had written meanwhile.
  const conflicts = await Promise.all(servers.map(async (server) => (await server.admin('GET', '/admin/v1/stats')).body.data.store.conflicts as number));
  t.diagnostic(`writes decided again, per instance: ${conflicts.join(', ')}`);
  assert.deepEqual(conflicts, [0, 0, 0]);
});

test('one email taken on three instances at the same moment: exactly one succeeds, the others get 409 (10 trials)', { skip, timeout: 120_000 }, async (t) => {
  const servers = await instances(t, 3);
  const people = await Promise.all(servers.map((server) => server.userWithKey('creator', ['read:users', 'write:users'])));
  for (let trial = 0; trial < 10; trial += 1) {
    const email = `shared${trial}@example.com`;
    // Every instance knows every key before the race (they were made on different ones).
    for (const server of servers) {
      await eventually('the keys on every instance', async () => (await Promise.all(people.map((person) => server.request('GET', '/v1/users/me', { key: person.key })))).every((answer) => answer.status === 200));
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
  const databaseUrl = newDatabase();
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

  const [server] = await instances(t, 1, databaseUrl);
  const schema = await client.query<{ schema_version: number }>('SELECT schema_version FROM marketplace_meta');
  assert.equal(schema.rows[0]!.schema_version, SCHEMA_VERSION);
  assert.equal((await server!.admin('GET', `/admin/v1/users/${user.id}`)).body.data.name, user.name);
  const key = await server!.admin('POST', '/admin/v1/keys', { user_id: user.id, name: 'after', permissions: ['read:listings', 'write:listings'] });
  assert.equal(key.status, 201);
  const made = await server!.request('POST', '/v1/listings', { key: key.body.data.key, body: { title: 'After the upgrade', type: 'TOOL', price: 1 } });
  assert.equal(made.status, 201);
});
