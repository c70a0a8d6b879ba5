// The TTL cache on an injected clock: entries live exactly ttlMs, writes refresh them, and the
// size cap drops the oldest insertion first.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { TtlCache } from '../../src/limits/ttl-cache.ts';

function cacheOn(clock: ManualClock, maxEntries = 100): TtlCache<string, number | null> {
  return new TtlCache({ ttlMs: 60_000, maxEntries, monotonicNow: () => clock.monotonic() });
}

test('an entry lives exactly ttlMs, then reads as missing and is removed', () => {
  const clock = new ManualClock();
  const cache = cacheOn(clock);
  cache.set('a', 1);
  clock.advance(59_999);
  assert.equal(cache.get('a'), 1);
  clock.advance(1);
  assert.equal(cache.get('a'), undefined);
  assert.equal(cache.size, 0);
});

test('null is a value (a cached miss), distinct from absent', () => {
  const clock = new ManualClock();
  const cache = cacheOn(clock);
  cache.set('unknown', null);
  assert.equal(cache.get('unknown'), null);
  assert.equal(cache.get('never-set'), undefined);
});

test('setting again refreshes the expiry', () => {
  const clock = new ManualClock();
  const cache = cacheOn(clock);
  cache.set('a', 1);
  clock.advance(50_000);
  cache.set('a', 2);
  clock.advance(50_000);
  assert.equal(cache.get('a'), 2);
});

test('expiry follows the monotonic clock, not the wall clock', () => {
  const clock = new ManualClock();
  const cache = cacheOn(clock);
  cache.set('a', 1);
  clock.jumpWall(3_600_000);
  assert.equal(cache.get('a'), 1);
});

test('the size cap drops the oldest insertion first and never grows past the cap', () => {
  const clock = new ManualClock();
  const cache = cacheOn(clock, 3);
  cache.set('a', 1);
  cache.set('b', 2);
  cache.set('c', 3);
  cache.set('a', 10); // re-set: now the newest
  cache.set('d', 4); // evicts b, the oldest insertion
  assert.equal(cache.size, 3);
  assert.equal(cache.get('b'), undefined);
  assert.equal(cache.get('a'), 10);
  assert.equal(cache.get('c'), 3);
  assert.equal(cache.get('d'), 4);
  for (let index = 0; index < 10_000; index += 1) cache.set(`flood-${index}`, index);
  assert.equal(cache.size, 3);
});

test('delete and clear remove entries at once', () => {
  const clock = new ManualClock();
  const cache = cacheOn(clock);
  cache.set('a', 1);
  cache.set('b', 2);
  cache.delete('a');
  assert.equal(cache.get('a'), undefined);
  assert.equal(cache.get('b'), 2);
  cache.clear();
  assert.equal(cache.size, 0);
});

test('with a weight cap, the oldest entries leave until the total fits; one too heavy is not kept', () => {
  const cache = new TtlCache<string, Buffer>({ ttlMs: 1_000, maxEntries: 100, monotonicNow: () => 0, weigh: (value) => value.length, maxWeight: 10 });
  cache.set('a', Buffer.alloc(4));
  cache.set('b', Buffer.alloc(4));
  cache.set('c', Buffer.alloc(4)); // 12 > 10: 'a' goes
  assert.equal(cache.get('a'), undefined);
  assert.equal(cache.get('b')?.length, 4);
  cache.set('b', Buffer.alloc(6)); // replacing 'b' frees its 4 first: 4 + 6 fits
  assert.equal(cache.size, 2);
  cache.set('huge', Buffer.alloc(11));
  assert.equal(cache.get('huge'), undefined);
  assert.equal(cache.size, 2, 'nothing was evicted for an entry that could never fit');
});
