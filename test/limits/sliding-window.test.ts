// The sliding-window limiter on an injected clock: bursts, the exact moment of admission, no
// extension while blocked, wall-clock jumps, limits changed on the fly, and bounded memory.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { SlidingWindowLimiter } from '../../src/limits/sliding-window.ts';

const WINDOW_MS = 60_000;

function limiterOn(clock: ManualClock, maxIds?: number): SlidingWindowLimiter {
  return new SlidingWindowLimiter({ monotonicNow: () => clock.monotonic(), maxIds });
}

test('a burst is admitted up to the limit, with remaining counting down, then refused', () => {
  const clock = new ManualClock();
  const limiter = limiterOn(clock);
  for (let index = 1; index <= 5; index += 1) {
    const decision = limiter.hit('key', 5);
    assert.equal(decision.allowed, true, `request ${index}`);
    assert.equal(decision.limit, 5);
    assert.equal(decision.remaining, 5 - index);
    assert.equal(decision.resetAt, WINDOW_MS, 'room returns when the first request leaves the window');
  }
  const refused = limiter.hit('key', 5);
  assert.deepEqual(refused, { allowed: false, limit: 5, remaining: 0, resetAt: WINDOW_MS, decidedAt: 0 });
});

test('admission comes exactly when the oldest request leaves the window, not a millisecond before', () => {
  const clock = new ManualClock();
  const limiter = limiterOn(clock);
  limiter.hit('key', 3); // t = 0
  clock.advance(10_000);
  limiter.hit('key', 3); // t = 10 s
  clock.advance(10_000);
  limiter.hit('key', 3); // t = 20 s
  assert.equal(limiter.hit('key', 3).resetAt, 60_000);

  clock.advance(60_000 - 20_000 - 1); // t = 59.999 s
  const early = limiter.hit('key', 3);
  assert.equal(early.allowed, false);
  assert.equal(early.resetAt, 60_000);

  clock.advance(1); // t = 60 s: the t = 0 request has left
  const onTime = limiter.hit('key', 3);
  assert.equal(onTime.allowed, true);
  assert.equal(onTime.remaining, 0);
  assert.equal(onTime.resetAt, 70_000, 'the next room appears when the t = 10 s request leaves');
  assert.equal(limiter.hit('key', 3).allowed, false);
  clock.advance(10_000);
  assert.equal(limiter.hit('key', 3).allowed, true);
});

test('hammering while blocked does not extend the block: refused requests are not recorded', () => {
  const clock = new ManualClock();
  const limiter = limiterOn(clock);
  limiter.hit('key', 2);
  limiter.hit('key', 2);
  for (let second = 0; second < 60; second += 1) {
    for (let attempt = 0; attempt < 50; attempt += 1) {
      const decision = limiter.hit('key', 2);
      assert.equal(decision.allowed, false);
      assert.equal(decision.resetAt, WINDOW_MS, 'the reset time never moves');
    }
    if (second < 59) clock.advance(1_000);
  }
  clock.advance(1_000); // t = 60 s
  const decision = limiter.hit('key', 2);
  assert.equal(decision.allowed, true);
  assert.equal(decision.remaining, 1, 'only the admitted request is in the window; the 3000 refusals left no trace');
  assert.equal(limiter.peek('key', 2).remaining, 1);
});

test('a wall-clock jump neither grants a burst nor locks anyone out (the window is monotonic)', () => {
  const clock = new ManualClock();
  const limiter = limiterOn(clock);
  limiter.hit('key', 1);
  clock.jumpWall(24 * 3_600_000); // a day forward
  assert.equal(limiter.hit('key', 1).allowed, false, 'jumping the wall clock forward grants nothing');
  clock.jumpWall(-48 * 3_600_000); // two days back
  const blocked = limiter.hit('key', 1);
  assert.equal(blocked.allowed, false);
  assert.equal(blocked.resetAt, WINDOW_MS, 'the reset time is unchanged by either jump');
  clock.advance(WINDOW_MS);
  assert.equal(limiter.hit('key', 1).allowed, true, 'a minute of real time later the key is admitted, whatever the wall clock says');
});

test('remaining is never negative and resetAt is never more than a window ahead, whatever the limit does', () => {
  const clock = new ManualClock();
  const limiter = limiterOn(clock);
  // Fill to 10, then lower the limit to 3 (an operator PATCH): 10 requests are in a window of 3.
  for (let index = 0; index < 10; index += 1) {
    limiter.hit('key', 10);
    clock.advance(1_000);
  }
  const lowered = limiter.hit('key', 3); // t = 10 s; requests at 0..9 s
  assert.equal(lowered.allowed, false);
  assert.equal(lowered.remaining, 0);
  // Room for one more under a limit of 3 means only 2 left in the window: the 8th (t = 7 s) must leave.
  assert.equal(lowered.resetAt, 7_000 + WINDOW_MS);
  assert.equal(limiter.peek('key', 3).remaining, 0);
  clock.advance(7_000 + WINDOW_MS - clock.monotonic() - 1);
  assert.equal(limiter.hit('key', 3).allowed, false);
  clock.advance(1);
  assert.equal(limiter.hit('key', 3).allowed, true);
  // Raising the limit again lets more in at once.
  assert.equal(limiter.hit('key', 50).remaining, 50 - 4);

  // A long pseudo-random run: every answer stays within bounds.
  let seed = 7;
  const random = () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
    return seed / 2_147_483_648;
  };
  for (let step = 0; step < 5_000; step += 1) {
    clock.advance(Math.floor(random() * 2_000));
    const limit = 1 + Math.floor(random() * 20);
    const decision = random() < 0.9 ? limiter.hit('key', limit) : limiter.peek('key', limit);
    assert.ok(decision.remaining >= 0 && decision.remaining <= limit, `remaining ${decision.remaining} of ${limit}`);
    assert.ok(decision.resetAt - clock.monotonic() <= WINDOW_MS, 'resetAt at most one window ahead');
    if (!decision.allowed) assert.ok(decision.resetAt > clock.monotonic(), 'a refusal points to the future');
  }
});

test('the ring buffer agrees with a naive list of timestamps over a long random run', () => {
  const clock = new ManualClock();
  const limiter = limiterOn(clock);
  const admitted: number[] = [];
  let seed = 42;
  const random = () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
    return seed / 2_147_483_648;
  };
  for (let step = 0; step < 20_000; step += 1) {
    clock.advance(Math.floor(random() * 400));
    const limit = step < 10_000 ? 40 : 25; // exercises growth, wrap-around and a lowered limit
    const now = clock.monotonic();
    while (admitted.length > 0 && admitted[0]! <= now - WINDOW_MS) admitted.shift();
    const expectedAllowed = admitted.length < limit;
    const decision = limiter.hit('key', limit);
    assert.equal(decision.allowed, expectedAllowed, `step ${step}`);
    if (expectedAllowed) admitted.push(now);
    assert.equal(decision.remaining, Math.max(0, limit - admitted.length), `step ${step}`);
    const expectedReset = expectedAllowed ? admitted[0]! + WINDOW_MS : admitted[admitted.length - limit]! + WINDOW_MS;
    assert.equal(decision.resetAt, expectedReset, `step ${step}`);
  }
});

test('ids are independent', () => {
  const clock = new ManualClock();
  const limiter = limiterOn(clock);
  assert.equal(limiter.hit('first', 1).allowed, true);
  assert.equal(limiter.hit('first', 1).allowed, false);
  assert.equal(limiter.hit('second', 1).allowed, true);
});

test('idle ids are forgotten: after many one-off ids and a quiet minute, memory drops back', () => {
  const clock = new ManualClock();
  const limiter = limiterOn(clock);
  for (let index = 0; index < 20_000; index += 1) limiter.hit(`idle-${index}`, 100);
  assert.equal(limiter.trackedIds(), 20_000);
  clock.advance(WINDOW_MS);
  limiter.hit('active', 100); // the next request after a window sweeps
  assert.equal(limiter.trackedIds(), 1);
  // A forgotten id starts afresh with its full quota.
  assert.equal(limiter.hit('idle-0', 100).remaining, 99);
});

test('an id still inside its window survives the sweep', () => {
  const clock = new ManualClock();
  const limiter = limiterOn(clock);
  limiter.hit('old', 2);
  clock.advance(30_000);
  limiter.hit('recent', 2);
  limiter.hit('recent', 2);
  clock.advance(30_000);
  limiter.hit('other', 2); // sweep at t = 60 s: "old" is idle, "recent" is not
  assert.equal(limiter.trackedIds(), 2);
  assert.equal(limiter.hit('recent', 2).allowed, false, 'the sweep did not forget a blocked id');
});

test('maxIds caps memory even when a flood of distinct ids is active at once', () => {
  const clock = new ManualClock();
  const limiter = limiterOn(clock, 1_000);
  for (let index = 0; index < 10_000; index += 1) {
    limiter.hit(`flood-${index}`, 100);
    assert.ok(limiter.trackedIds() <= 1_000);
  }
  assert.ok(limiter.trackedIds() > 900, 'only a small batch of the oldest ids is dropped at a time');
  // The newest ids are still tracked; the oldest were dropped first.
  assert.equal(limiter.peek('flood-9999', 100).remaining, 99);
  assert.equal(limiter.peek('flood-0', 100).remaining, 100);
});

test('a flood of new ids against a full limiter costs one sweep per batch, not one per request', () => {
  const clock = new ManualClock();
  const limiter = limiterOn(clock, 6_400);
  // Private, but the point of the test: count the O(ids) sweeps.
  const internals = limiter as unknown as { sweep(now: number): void };
  const sweep = internals.sweep.bind(limiter);
  let sweeps = 0;
  internals.sweep = (now: number) => {
    sweeps += 1;
    sweep(now);
  };
  for (let index = 0; index < 6_400; index += 1) limiter.hit(`address-${index}`, 100);
  assert.equal(sweeps, 0);
  for (let index = 0; index < 10_000; index += 1) limiter.hit(`flood-${index}`, 100);
  // Batches of 6400 / 64 = 100 ids: about 100 sweeps for 10000 new ids.
  assert.ok(sweeps <= 101, `${sweeps} sweeps`);
  assert.ok(limiter.trackedIds() <= 6_400);
});

test('per-id memory grows only as far as the limit', () => {
  const clock = new ManualClock();
  const limiter = limiterOn(clock);
  for (let index = 0; index < 1_000; index += 1) assert.equal(limiter.hit('key', 1_000).allowed, true);
  assert.equal(limiter.hit('key', 1_000).allowed, false);
  // Private, but the point of the test: the buffer holds at most `limit` times.
  const windows = (limiter as unknown as { windows: Map<string, { times: Float64Array }> }).windows;
  assert.ok(windows.get('key')!.times.length <= 1_000);
  limiter.hit('small', 3);
  assert.ok(windows.get('small')!.times.length <= 3);
});
