// The saving lifecycle the usage and quota counters share (src/analytics/periodic-saver.ts): a
// save every interval once started, never two at once, a last save at stop and none after it.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PeriodicSaver } from '../../src/analytics/periodic-saver.ts';

const turn = () => new Promise((resolve) => setImmediate(resolve));

test('a save every interval once started, a last one at stop, and none after', async (t) => {
  t.mock.timers.enable({ apis: ['setInterval'] });
  let saves = 0;
  const saver = new PeriodicSaver(async () => {
    saves += 1;
  }, 1_000);
  t.mock.timers.tick(5_000);
  await turn();
  assert.equal(saves, 0, 'nothing before start()');
  saver.start();
  saver.start();
  t.mock.timers.tick(999);
  await turn();
  assert.equal(saves, 0);
  t.mock.timers.tick(1);
  await turn();
  assert.equal(saves, 1, 'one timer, however many start() calls');
  t.mock.timers.tick(2_000);
  await turn();
  assert.equal(saves, 3);
  await saver.stop();
  assert.equal(saves, 4, 'stop() saves once more');
  t.mock.timers.tick(10_000);
  await turn();
  assert.equal(saves, 4, 'no timer after stop()');
});

test('a save asked for while one runs starts only when it is done', async () => {
  const events: string[] = [];
  let release: () => void = () => {};
  let calls = 0;
  const saver = new PeriodicSaver(async () => {
    calls += 1;
    const call = calls;
    events.push(`start ${call}`);
    if (call === 1) await new Promise<void>((resolve) => (release = resolve));
    events.push(`end ${call}`);
  }, 60_000);
  const first = saver.save();
  const second = saver.save();
  await turn();
  assert.deepEqual(events, ['start 1'], 'the second waits for the first');
  release();
  await Promise.all([first, second]);
  assert.deepEqual(events, ['start 1', 'end 1', 'start 2', 'end 2']);
});

test('an interval that is not a positive number is refused', () => {
  for (const interval of [0, -1, Number.NaN]) assert.throws(() => new PeriodicSaver(async () => {}, interval), RangeError);
});
