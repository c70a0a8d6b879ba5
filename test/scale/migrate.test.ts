// `marketplace migrate` with a real PostgreSQL: a file-backed server seeded through the HTTP API
// is copied into a database, a server on that database answers exactly as the original did
// (users, listings of every status, keys that still work and revoked keys still refused,
// webhooks, the audit log, usage), and the copy comes back into a fresh data dir the same way.
// A migration into a store that is not empty, out of a data dir a server holds, or with wrong
// arguments is refused (exit 2) and changes nothing; the record-by-record check finds a record
// that differs.

import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { compareStores, parseLocation } from '../../src/backends/migrate.ts';
import { runCli } from '../../src/cli.ts';
import { LOG_FILE_NAME } from '../../src/store/format.ts';
import { eventually } from '../helpers/eventually.ts';
import { startServer, temporaryDir, type TestServer } from '../helpers/server.ts';
import { skipUnlessServices, postgresAndRedisForFile } from '../helpers/services.ts';
import { answer, startReceiver, waitFor } from '../webhooks/fixtures.ts';

const skip = skipUnlessServices('postgresBin', 'redisServer');
const services = postgresAndRedisForFile(skip);
let databases = 0;

function freshDatabase(): string {
  databases += 1;
  return services.postgres.createDatabase(`migrate_test_${process.pid}_${databases}`);
}

/** Runs the CLI in-process; stdout parsed as JSON when it is some. */
async function migrate(...args: string[]): Promise<{ code: number; json: any; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(['migrate', ...args], { stdout: { write: (text: string) => (stdout += text) }, stderr: { write: (text: string) => (stderr += text) }, env: {} });
  return { code, json: stdout === '' ? null : JSON.parse(stdout), stderr };
}

const WEBHOOK_ENV = { WEBHOOK_ALLOW_PRIVATE: '1' };
const ALL = ['read:listings', 'write:listings', 'read:users', 'write:users', 'read:webhooks', 'write:webhooks', 'read:analytics'];

interface Seeded {
  creatorKey: string;
  memberKey: string;
  revokedKey: string;
  archivedId: string;
  removedId: string;
}

/** Users, keys (one revoked), listings (active, archived, removed), a webhook, audit entries and usage, all through HTTP. */
async function seed(server: TestServer): Promise<Seeded> {
  const creator = await server.createUser({ name: 'Ada', role: 'creator', email: 'ada@example.com' });
  const member = await server.createUser({ name: 'Max', role: 'member', email: 'max@example.com' });
  const creatorKey = (await server.createKey(creator.id, { permissions: ALL, name: 'main' })).key;
  const memberKey = (await server.createKey(member.id, { permissions: ['read:listings', 'read:users'], prefix: 'mk' })).key;
  const revoked = await server.createKey(member.id, { permissions: ['read:listings'] });
  assert.equal((await server.admin('DELETE', `/admin/v1/keys/${revoked.id}`)).status, 200);
  const ids: string[] = [];
  for (const [index, type] of ['TOOL', 'AGENT', 'PROMPT', 'DATASET'].entries()) {
    const made = await server.request('POST', '/v1/listings', {
      key: creatorKey,
      body: { title: `Listing ${index}`, description: `Number ${index}`, type, price: index * 2.5, tags: [`t${index}`, 'seed'] },
      headers: { 'idempotency-key': `seed-${index}` },
    });
    assert.equal(made.status, 201, made.text);
    ids.push(made.body.data.id);
  }
  assert.equal((await server.request('PUT', `/v1/listings/${ids[0]}`, { key: creatorKey, body: { price: 99 } })).status, 200);
  assert.equal((await server.request('DELETE', `/v1/listings/${ids[1]}`, { key: creatorKey })).status, 200);
  assert.equal((await server.admin('POST', `/admin/v1/listings/${ids[2]}/remove`, { reason: 'spam' })).status, 200);
  assert.equal((await server.request('PUT', '/v1/users/me', { key: creatorKey, body: { bio: 'Makes tools' } })).status, 200);
  for (let index = 0; index < 5; index += 1) assert.equal((await server.request('GET', '/v1/listings', { key: memberKey })).status, 200);
  return { creatorKey, memberKey, revokedKey: revoked.key, archivedId: ids[1]!, removedId: ids[2]! };
}

/** What the operator sees: every list, read with the operator token (so no key's last use moves). */
async function operatorViews(server: TestServer): Promise<Record<string, unknown>> {
  const views: Record<string, unknown> = {};
  for (const name of ['users', 'listings', 'keys', 'webhooks', 'audit']) {
    const response = await server.admin('GET', `/admin/v1/${name}?limit=100`);
    assert.equal(response.status, 200, `${name}: ${response.text}`);
    views[name] = response.body;
  }
  return views;
}

/** What the users see through their keys. */
async function userViews(server: TestServer, seeded: Seeded): Promise<Record<string, unknown>> {
  const read = async (path: string, key: string) => {
    const response = await server.request('GET', path, { key });
    assert.equal(response.status, 200, `${path}: ${response.text}`);
    return response.body;
  };
  return {
    publicListings: await read('/v1/listings?limit=100', seeded.memberKey),
    me: await read('/v1/users/me', seeded.creatorKey),
    archived: await read(`/v1/listings/${seeded.archivedId}`, seeded.creatorKey),
  };
}

async function checkKeys(server: TestServer, seeded: Seeded): Promise<void> {
  assert.equal((await server.request('GET', '/v1/listings', { key: seeded.creatorKey })).status, 200, 'a key that worked still works');
  assert.equal((await server.request('GET', '/v1/users/me', { key: seeded.memberKey })).status, 200, 'a key that worked still works');
  assert.equal((await server.request('GET', '/v1/listings', { key: seeded.revokedKey })).status, 401, 'a revoked key stays refused');
  assert.equal((await server.request('GET', '/v1/listings', { key: 'mk_live_notakeyatall0000000000000000' })).status, 401);
}

function pgServer(t: TestContext, databaseUrl: string): Promise<TestServer> {
  return startServer(t, { dataDir: null, env: WEBHOOK_ENV, config: { databaseUrl, redisUrl: services.redis.url } });
}

test('a file-backed store migrates to PostgreSQL and back: same records, same answers, keys still work', { skip, timeout: 180_000 }, async (t) => {
  const receiver = await startReceiver(t, answer(200));
  const original = temporaryDir(t);
  let seeded: Seeded;
  let usersSaw: Record<string, unknown>;
  let operatorSaw: Record<string, unknown>;
  {
    const server = await startServer(null, { dataDir: original, env: WEBHOOK_ENV });
    seeded = await seed(server);
    const hook = await server.request('POST', '/v1/webhooks', { key: seeded.creatorKey, body: { url: receiver.url, description: 'hook' } });
    assert.equal(hook.status, 201, hook.text);
    usersSaw = await userViews(server, seeded);
    await waitFor('the ping delivered', () => receiver.received.length === 1);
    await eventually(async () => (await server.admin('GET', '/admin/v1/webhooks')).body.data[0].last_delivery !== null, 30_000, 'the delivery recorded');
    operatorSaw = await operatorViews(server);
    await server.close();
  }

  const databaseUrl = freshDatabase();
  const there = await migrate('--from', original, '--to', databaseUrl);
  assert.equal(there.code, 0, there.stderr);
  assert.equal(there.json.identical, true);
  assert.equal(there.json.mismatch_count, 0);
  assert.equal(there.json.records.source, there.json.records.destination);
  for (const name of ['users', 'keys', 'listings', 'webhooks', 'audit', 'usage', 'idempotency']) {
    assert.ok(there.json.collections[name]?.source > 0, `the seed made ${name} records`);
    assert.equal(there.json.collections[name].destination, there.json.collections[name].source, name);
  }
  assert.equal(there.json.collections.users.source, 2);
  assert.equal(there.json.collections.keys.source, 3);
  assert.equal(there.json.collections.listings.source, 4);

  {
    const server = await pgServer(t, databaseUrl);
    assert.deepEqual(await operatorViews(server), operatorSaw, 'a server on the database answers what the file-backed server answered');
    assert.deepEqual(await userViews(server, seeded), usersSaw);
    await checkKeys(server, seeded);
    // Those requests moved the keys' last use: what the operator sees now is what must come back.
    operatorSaw = await operatorViews(server);
    await server.close();
  }

  const back = temporaryDir(t);
  const returned = await migrate('--from', databaseUrl, '--to', join(back, 'data'));
  assert.equal(returned.code, 0, returned.stderr);
  assert.equal(returned.json.identical, true);
  assert.equal(returned.json.collections.listings.destination, 4);
  {
    const server = await startServer(t, { dataDir: join(back, 'data'), env: WEBHOOK_ENV });
    assert.deepEqual(await operatorViews(server), operatorSaw, 'and so does a file-backed server on the copy brought back');
    assert.deepEqual(await userViews(server, seeded), usersSaw);
    await checkKeys(server, seeded);
  }
});

test('migrate refuses (exit 2, nothing changed) a destination that is not empty, a source a server holds, and wrong arguments', { skip, timeout: 120_000 }, async (t) => {
  const dir = temporaryDir(t);
  const server = await startServer(t, { dataDir: dir });
  await server.createUser({ name: 'Someone' });

  const databaseUrl = freshDatabase();
  const held = await migrate('--from', dir, '--to', databaseUrl);
  assert.equal(held.code, 2);
  assert.match(held.stderr, /already open|already using/);
  assert.match(held.stderr, /nothing was changed/);
  await server.close();

  assert.equal((await migrate('--from', dir, '--to', databaseUrl)).code, 0);
  const logBefore = readFileSync(join(dir, LOG_FILE_NAME));
  const again = await migrate('--from', dir, '--to', databaseUrl);
  assert.equal(again.code, 2);
  assert.match(again.stderr, /not empty \(\d+ records/);
  const compared = await compareStores(parseLocation(dir, '/'), parseLocation(databaseUrl, '/'), () => {});
  assert.equal(compared.identical, true, 'the database still holds exactly one copy');
  assert.deepEqual(readFileSync(join(dir, LOG_FILE_NAME)), logBefore, 'the source is unchanged');

  // A data dir holding records, or files of its own, is not a destination either.
  const intoFull = await migrate('--from', databaseUrl, '--to', dir);
  assert.equal(intoFull.code, 2);
  assert.match(intoFull.stderr, /not empty: it holds a store with \d+ records/);
  assert.deepEqual(readFileSync(join(dir, LOG_FILE_NAME)), logBefore);
  const someoneElses = join(temporaryDir(t), 'photos');
  mkdirSync(someoneElses);
  writeFileSync(join(someoneElses, 'cat.jpg'), 'meow');
  const intoOther = await migrate('--from', databaseUrl, '--to', someoneElses);
  assert.equal(intoOther.code, 2);
  assert.match(intoOther.stderr, /not empty \(it holds cat\.jpg\)/);

  // An instance running on the database: copying out of it would race its writes.
  const running = await pgServer(t, databaseUrl);
  const busy = await migrate('--from', databaseUrl, '--to', join(temporaryDir(t), 'copy'));
  assert.equal(busy.code, 2);
  assert.match(busy.stderr, /1 server instance\(s\) are running/);
  await running.close();

  for (const [args, message] of [
    [['--from', dir], /--to is required/],
    [['--to', databaseUrl], /--from is required/],
    [['--from', dir, '--to', temporaryDir(t)], /both sides are data dirs/],
    [['--from', databaseUrl, '--to', databaseUrl], /both sides are databases/],
    [['--from', 'mysql://db/x', '--to', databaseUrl], /neither a data dir nor a postgres:\/\/ URL/],
    [['--from', join(temporaryDir(t), 'nothing'), '--to', databaseUrl], /holds no store/],
    [['--from', dir, '--to', databaseUrl, '--url', 'http://x'], /--url does not apply/],
  ] as const) {
    await t.test(`refused: ${message.source}`, async () => {
      const refused = await migrate(...args);
      assert.equal(refused.code, 2, `${args.join(' ')}: ${refused.stderr}`);
      assert.match(refused.stderr, message);
      assert.equal(refused.json, null, 'nothing on stdout');
    });
  }
});

test('the record-by-record check finds a record changed after the copy (and a password never shows)', { skip, timeout: 120_000 }, async (t) => {
  const dir = temporaryDir(t);
  let listingId: string;
  let key: string;
  {
    const server = await startServer(null, { dataDir: dir });
    ({ key } = await server.userWithKey('creator', ['read:listings', 'write:listings']));
    listingId = (await server.request('POST', '/v1/listings', { key, body: { title: 'Original', type: 'TOOL', price: 1 } })).body.data.id;
    await server.close();
  }
  const databaseUrl = freshDatabase();
  assert.equal((await migrate('--from', dir, '--to', databaseUrl)).code, 0);
  // A real change on the database side: a server on it updates the listing.
  const server = await pgServer(t, databaseUrl);
  assert.equal((await server.request('PUT', `/v1/listings/${listingId}`, { key, body: { title: 'Changed' } })).status, 200);
  await server.close();
  const compared = await compareStores(parseLocation(dir, '/'), parseLocation(databaseUrl, '/'), () => {});
  assert.equal(compared.identical, false);
  assert.deepEqual(
    compared.mismatches.filter((mismatch) => mismatch.collection === 'listings'),
    [{ collection: 'listings', id: listingId, problem: 'different' }],
  );
  assert.equal(compared.collections.listings!.mismatches, 1);

  const withPassword = databaseUrl.replace('marketplace@', 'marketplace:s3cret-pass@');
  const refused = await migrate('--from', dir, '--to', withPassword);
  assert.equal(refused.code, 2);
  assert.match(refused.stderr, /marketplace:\*\*\*@127\.0\.0\.1.* is not empty/);
  assert.doesNotMatch(refused.stderr, /s3cret-pass/);
});
