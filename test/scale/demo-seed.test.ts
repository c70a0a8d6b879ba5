// The demo seed on instances sharing one PostgreSQL: several instances starting at the same
// moment on an empty database, each with MARKETPLACE_DEMO=1, seed it once between them — the
// seed is decided when it commits, so an instance that finds another's seed there writes nothing.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { systemClock } from '../../src/clock.ts';
import { seedDemo } from '../../src/demo.ts';
import { KEYS, LISTINGS, USERS } from '../../src/domain/records.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { postgresAndRedisForFile, skipUnlessServices, sleep } from '../helpers/services.ts';

const skip = skipUnlessServices('postgresBin', 'redisServer');
const services = postgresAndRedisForFile(skip);

test('three instances starting at once on an empty database seed the demo once (5 trials)', { skip, timeout: 180_000 }, async (t) => {
  for (let trial = 0; trial < 5; trial += 1) {
    const databaseUrl = services.postgres.createDatabase(`demo_seed_${process.pid}_${trial}`);
    const servers: TestServer[] = await Promise.all(
      [0, 1, 2].map(() => startServer(t, { dataDir: null, config: { databaseUrl, redisUrl: services.redis.url } })),
    );
    // What main does after opening the store, on every instance at the same moment.
    const printed = await Promise.all(servers.map((server) => seedDemo(server.app.store, systemClock, server.app.config.brand)));
    assert.equal(printed.filter((keys) => keys.length > 0).length, 1, `trial ${trial}: exactly one instance seeded (and prints the keys)`);
    const seededKeys = printed.find((keys) => keys.length > 0)!;
    for (const server of servers) {
      const deadline = Date.now() + 5_000;
      while (server.app.store.size(LISTINGS) < 12 && Date.now() < deadline) await sleep(10);
      assert.equal(server.app.store.size(USERS), 3, `trial ${trial}: three demo users, not three per instance`);
      assert.equal(server.app.store.size(KEYS), 3);
      assert.equal(server.app.store.size(LISTINGS), 12);
      // The keys the seeding instance printed work on every instance.
      const response = await server.request('GET', '/v1/listings', { key: seededKeys[0]!.key });
      assert.equal(response.status, 200);
      assert.equal(response.body.pagination.total, 12);
    }
    await Promise.all(servers.map((server) => server.close()));
  }
});
