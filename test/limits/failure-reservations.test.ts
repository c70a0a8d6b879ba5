// The in-process reservations on their own: a place is taken in every window at once or in
// none; at most IN_FLIGHT_PER_PLACE per account or address at a time; a kept place counts as a
// failure until its window passes, a given-back one leaves no trace; releasing twice does nothing.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { IN_FLIGHT_PER_PLACE, InProcessFailureReservations, type FailurePlace, type HeldPlaces } from '../../src/limits/failure-reservations.ts';
import { SlidingWindowLimiter } from '../../src/limits/sliding-window.ts';

function setUp() {
  let now = 1_000;
  const account = new SlidingWindowLimiter({ monotonicNow: () => now, windowMs: 60_000 });
  const address = new SlidingWindowLimiter({ monotonicNow: () => now, windowMs: 10_000 });
  const reservations = new InProcessFailureReservations({ account, address });
  const places = (accountLimit: number, addressLimit: number): FailurePlace[] => [
    { window: 'address', id: '192.0.2.1', limit: addressLimit },
    { window: 'account', id: 'ada@example.com', limit: accountLimit },
  ];
  const granted = async (asked: FailurePlace[]): Promise<HeldPlaces> => {
    const outcome = await reservations.reserve(asked);
    assert.ok(outcome.granted, JSON.stringify(outcome));
    return outcome.held;
  };
  return { account, address, reservations, places, granted, advance: (ms: number) => (now += ms) };
}

test(`at most ${IN_FLIGHT_PER_PLACE} in flight per place; a released one makes room`, async () => {
  const { reservations, places, granted } = setUp();
  const first = await granted(places(10, 100));
  await granted(places(10, 100));
  const third = await reservations.reserve(places(10, 100));
  assert.deepEqual(third.granted ? null : [third.reason, third.place.window, third.waitMs], ['in-flight', 'address', 1000]);
  await reservations.keep(first);
  await granted(places(10, 100));
});

test('kept places fill the window; given-back ones leave no trace; the window is checked before in-flight', async () => {
  const { account, address, reservations, places, granted, advance } = setUp();
  for (let index = 0; index < 3; index += 1) await reservations.keep(await granted(places(3, 100)));
  assert.equal(account.peek('ada@example.com', 3).remaining, 0);
  const refused = await reservations.reserve(places(3, 100));
  assert.ok(!refused.granted && refused.reason === 'failures' && refused.place.window === 'account' && refused.waitMs === 60_000, JSON.stringify(refused));
  // Nothing recorded for the refusal, in either window.
  assert.equal(address.peek('192.0.2.1', 100).remaining, 97);
  advance(60_000);
  const held = await granted(places(3, 100));
  await reservations.giveBack(held);
  await reservations.giveBack(held);
  await reservations.keep(held);
  assert.equal(account.peek('ada@example.com', 3).remaining, 3);
  assert.equal(address.peek('192.0.2.1', 100).remaining, 100, 'the address window passed too');
});

test('all or nothing: a full address takes no place in the account window', async () => {
  const { account, reservations, places, granted } = setUp();
  await reservations.keep(await granted(places(10, 1)));
  const refused = await reservations.reserve(places(10, 1));
  assert.ok(!refused.granted && refused.place.window === 'address');
  assert.equal(account.peek('ada@example.com', 10).remaining, 9, 'only the first, kept, attempt counts');
});

test('many reservations at once: never more granted than the remainder', async () => {
  const { reservations, granted } = setUp();
  const place = (index: number): FailurePlace[] => [{ window: 'account', id: 'ada@example.com', limit: 5 }, { window: 'address', id: `198.51.100.${index}`, limit: 100 }];
  await reservations.keep(await granted(place(0)));
  // Each attempt from its own address; the account's in-flight cap lets 2 through, so keep each at once.
  let grantedCount = 0;
  await Promise.all(
    Array.from({ length: 20 }, async (_, index) => {
      const outcome = await reservations.reserve(place(index + 1));
      if (!outcome.granted) return;
      grantedCount += 1;
      await reservations.keep(outcome.held);
    }),
  );
  assert.ok(grantedCount <= 4, `at most the 4 places left: ${grantedCount}`);
});
