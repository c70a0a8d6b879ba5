// One user's strings cannot break other users' writes on PostgreSQL: text PostgreSQL refuses
// (U+0000, an unpaired surrogate) once made a whole group-committed batch fail, so every other
// write in it got 503. Against real PostgreSQL and Redis, with two instances sharing them: an
// attacker sends such bodies (and %00 in a path) as fast as the victim writes, and is told 400
// each time, while every one of the victim's writes succeeds and is stored as sent.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { eventually } from '../helpers/eventually.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { postgresAndRedisForFile, skipUnlessServices } from '../helpers/services.ts';

const skip = skipUnlessServices('postgresBin', 'redisServer');
const services = postgresAndRedisForFile(skip);

test('an attacker sending U+0000 or lone surrogates gets 400 while a victim\'s concurrent writes all succeed (PostgreSQL)', { skip, timeout: 180_000 }, async (t) => {
  const databaseUrl = services.postgres.createDatabase(`hostile_strings_${process.pid}`);
  // No 5xx is expected: the test server fails the test on any.
  const servers: TestServer[] = [];
  for (let index = 0; index < 2; index += 1) {
    servers.push(await startServer(t, { dataDir: null, config: { databaseUrl, redisUrl: services.redis.url } }));
  }
  const [first, second] = servers as [TestServer, TestServer];
  const victim = await first.userWithKey('creator', ['read:users', 'write:users', 'read:listings', 'write:listings'], 100_000);
  const attacker = await first.userWithKey('creator', ['read:users', 'write:users', 'read:listings', 'write:listings'], 100_000);
  const attacks: Array<{ method: string; path: string; body: string }> = [
    { method: 'PUT', path: '/v1/users/me', body: '{"bio":"x\\u0000"}' },
    { method: 'PUT', path: '/v1/users/me', body: '{"bio":"\\ud800"}' },
    { method: 'PUT', path: '/v1/users/me', body: '{"name":"a\\udfffb"}' },
    { method: 'POST', path: '/v1/listings', body: '{"title":"t\\u0000","type":"TOOL","price":1}' },
    { method: 'POST', path: '/v1/listings', body: '{"title":"t","type":"TOOL","price":1,"tags":["\\ud83d"]}' },
    { method: 'PUT', path: '/v1/listings/lst_%00', body: '{"price":2}' },
  ];

  const rounds = 60;
  let attackerDone = false;
  const attackerStatuses: number[] = [];
  const attackerLoop = (async () => {
    for (let index = 0; !attackerDone; index += 1) {
      const attack = attacks[index % attacks.length]!;
      const server = servers[index % 2]!;
      // Several at once, so they share batches with the victim's writes.
      const answers = await Promise.all(
        [0, 1, 2].map(() => server.request(attack.method, attack.path, { key: attacker.key, rawBody: attack.body, headers: { 'content-type': 'application/json' } })),
      );
      for (const answer of answers) attackerStatuses.push(answer.status);
    }
  })();
  const victimStatuses: number[] = [];
  for (let round = 0; round < rounds; round += 1) {
    const server = servers[round % 2]!;
    const answers = await Promise.all([
      server.request('PUT', '/v1/users/me', { key: victim.key, body: { bio: `round ${round}` } }),
      server.request('POST', '/v1/listings', { key: victim.key, body: { title: `Victim ${round}`, type: 'TOOL', price: 1 } }),
    ]);
    for (const answer of answers) victimStatuses.push(answer.status);
  }
  attackerDone = true;
  await attackerLoop;

  const failed = victimStatuses.filter((status) => status >= 300);
  t.diagnostic(`victim: ${victimStatuses.length - failed.length} of ${victimStatuses.length} writes succeeded; attacker: ${attackerStatuses.length} requests, statuses ${[...new Set(attackerStatuses)].join(', ')}`);
  assert.deepEqual(failed, [], 'every write of the victim succeeds');
  assert.ok(attackerStatuses.length >= attacks.length);
  assert.deepEqual([...new Set(attackerStatuses)], [400], 'every hostile request is refused with 400');

  // Nothing of the attacker's was stored, and the victim's writes are all there on both instances.
  const me = await second.request('GET', '/v1/users/me', { key: attacker.key });
  assert.equal(me.body.data.bio, '');
  for (const server of servers) {
    await eventually(async () => (await server.request('GET', '/v1/listings?limit=100', { key: victim.key })).body.pagination.total === rounds, 5_000, `${rounds} listings on ${server.url}`);
    const listings = await server.request('GET', '/v1/listings?limit=100', { key: victim.key });
    assert.ok(listings.body.data.every((listing: { title: string }) => listing.title.startsWith('Victim ')));
  }
});
