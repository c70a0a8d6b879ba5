// The sign-in reservations kept in a real Redis, from three connections (as three instances
// would hold): the same rules as in one process — all places or none, at most 2 in progress per
// place, a kept place counts as a failure in the very window the failed-key limiter reads, a
// given-back one leaves no trace — and of many reservations sent at once from every connection,
// never more granted than the places left.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { RedisConnection } from '../../src/backends/redis/redis-connection.ts';
import { RedisSlidingWindowLimiter } from '../../src/backends/redis/redis-limiter.ts';
import { RedisFailureReservations } from '../../src/backends/redis/redis-reservations.ts';
import type { FailurePlace } from '../../src/limits/failure-reservations.ts';
import { skipUnlessServices, startRedis, type RedisService } from '../helpers/services.ts';

const skip = skipUnlessServices('redisServer');
let redis: RedisService;
let counter = 0;

before(async () => {
  if (!skip) redis = await startRedis();
});
after(async () => {
  await redis?.destroy();
});

/** `count` instances' reservations on their own connections, sharing fresh key prefixes; and the address window as the failed-key limiter sees it. */
async function instances(count: number) {
  counter += 1;
  const windows = { account: { prefix: `test:${process.pid}:${counter}:account:`, windowMs: 60_000 }, address: { prefix: `test:${process.pid}:${counter}:address:`, windowMs: 60_000 } };
  const connections = await Promise.all(Array.from({ length: count }, () => RedisConnection.open({ url: redis.url })));
  const reservations = connections.map((connection) => new RedisFailureReservations({ connection, windows }));
  const addressLimiter = new RedisSlidingWindowLimiter({ connection: connections[0]!, prefix: windows.address.prefix, windowMs: 60_000, monotonicNow: () => performance.now() });
  return { reservations, addressLimiter, close: () => connections.forEach((connection) => connection.close()) };
}

const places = (accountLimit: number, address = '192.0.2.1'): FailurePlace[] => [
  { window: 'address', id: address, limit: 100 },
  { window: 'account', id: 'ada@example.com', limit: accountLimit },
];

test('2 in progress per place; kept places count in the window the failed-key limiter reads; given back leaves no trace', { skip, timeout: 30_000 }, async () => {
  const { reservations, addressLimiter, close } = await instances(2);
  const [first, second] = reservations as [RedisFailureReservations, RedisFailureReservations];
  try {
    const one = await first.reserve(places(10));
    const two = await second.reserve(places(10));
    assert.ok(one.granted && two.granted);
    const third = await first.reserve(places(10));
    assert.ok(!third.granted && third.reason === 'in-flight' && third.waitMs === 1000, JSON.stringify(third));
    await first.keep(one.held);
    await second.giveBack(two.held);
    await second.giveBack(two.held);
    assert.equal((await addressLimiter.peek('192.0.2.1', 100)).remaining, 99, 'one kept failure, the given-back one gone');
    const again = await first.reserve(places(10));
    assert.ok(again.granted, 'in-progress places were freed');
    await first.giveBack(again.held);
  } finally {
    close();
  }
});

test('many reservations at once from three connections: never more granted than the places left; a full window is refused with its wait', { skip, timeout: 30_000 }, async () => {
  const { reservations, close } = await instances(3);
  try {
    // Each from its own address, so only the account's window (5 places) and its 2 in progress bind; each granted one is kept at once.
    let granted = 0;
    const attempt = async (index: number) => {
      const instance = reservations[index % 3]!;
      for (let tries = 0; tries < 50; tries += 1) {
        const outcome = await instance.reserve(places(5, `198.51.100.${index}`));
        if (outcome.granted) {
          granted += 1;
          await instance.keep(outcome.held);
          return;
        }
        if (outcome.reason === 'failures') return;
      }
    };
    // The window's oldest place was taken after this moment, so its wait is at least the minute
    // less the time since (however long a busy machine made the attempts take), and at most the minute.
    const before = performance.now();
    await Promise.all(Array.from({ length: 30 }, (_, index) => attempt(index)));
    assert.equal(granted, 5, 'exactly the 5 places, whatever raced');
    const refused = await reservations[0]!.reserve(places(5, '203.0.113.1'));
    const since = Math.ceil(performance.now() - before);
    assert.ok(!refused.granted && refused.reason === 'failures' && refused.place.window === 'account', JSON.stringify(refused));
    assert.ok(refused.waitMs >= 60_000 - since && refused.waitMs <= 60_000, `wait ${refused.waitMs} ms, ${since} ms after the first attempt`);
  } finally {
    close();
  }
});
