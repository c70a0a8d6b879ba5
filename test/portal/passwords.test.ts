// Password hashing on its own: scrypt with a salt per password (the same password hashes twice
// to different values), verification, a malformed stored value never matching, and at most two
// scrypts at a time, so a burst of sign-ins leaves libuv's threads to the store's writes.
// Not in test:unit (slow: bursts of password hashes at the product's full scrypt cost, queued two
// at a time); npm test runs it.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { HttpError } from '../../src/domain/errors.ts';
import { hashPassword, MAX_WAITING, scryptLoad, scryptsRunningFor, verifyPassword } from '../../src/modules/portal/passwords.ts';

test('scrypt with a salt per password; verify; malformed stored values never match', async () => {
  const first = await hashPassword('correct horse battery staple');
  const second = await hashPassword('correct horse battery staple');
  assert.match(first, /^scrypt\$32768\$8\$1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
  assert.notEqual(first, second, 'a salt of its own');
  assert.equal(await verifyPassword('correct horse battery staple', first), true);
  assert.equal(await verifyPassword('correct horse battery staplE', first), false);
  for (const stored of ['', 'scrypt$1$2', 'bcrypt$x$y$z$a$b', first.replace(/\$[^$]+$/, '$')]) assert.equal(await verifyPassword('anything', stored), false, stored);
});

test('a burst of 6 checks runs at most 2 scrypts at once; the others wait their turn and all finish', async () => {
  const stored = await hashPassword('burst password here');
  const seen: Array<{ running: number; waiting: number }> = [];
  let done = false;
  // Sampled on every turn of the event loop while the burst runs.
  const sampling = (async () => {
    while (!done) {
      seen.push(scryptLoad());
      await new Promise((resolve) => setImmediate(resolve));
    }
  })();
  const results = await Promise.all(Array.from({ length: 6 }, () => verifyPassword('burst password here', stored)));
  done = true;
  await sampling;
  assert.deepEqual(results, Array(6).fill(true));
  assert.equal(Math.max(...seen.map((load) => load.running)), 2, 'two at a time');
  assert.equal(Math.max(...seen.map((load) => load.waiting)), 4, 'the other four waited');
  const { running, waiting } = scryptLoad();
  assert.deepEqual({ running, waiting }, { running: 0, waiting: 0 }, 'every slot given back');
});

test(`past ${MAX_WAITING} waiting, one more check is refused at once (503, Retry-After: 1) and runs no scrypt`, async () => {
  const stored = await hashPassword('queue password here');
  const before = scryptLoad();
  const checks = Array.from({ length: 2 + MAX_WAITING + 3 }, () => verifyPassword('queue password here', stored).then(() => 'checked', (error: HttpError) => `${error.status} ${error.extras.headers?.['Retry-After']}`));
  const outcomes = await Promise.all(checks);
  assert.deepEqual(outcomes.slice(0, 2 + MAX_WAITING), Array(2 + MAX_WAITING).fill('checked'));
  assert.deepEqual(outcomes.slice(2 + MAX_WAITING), ['503 1', '503 1', '503 1']);
  const after = scryptLoad();
  assert.equal(after.started - before.started, 2 + MAX_WAITING);
  assert.equal(after.queueFull - before.queueFull, 3);
});

test('one scrypt at a time per client: a second check of the same address waits even with a slot free, and another address starts at once', async () => {
  const stored = await hashPassword('client password here');
  const seen: Array<{ flooder: number }> = [];
  let done = false;
  const sampling = (async () => {
    while (!done) {
      seen.push({ flooder: scryptsRunningFor('203.0.113.66') });
      await new Promise((resolve) => setImmediate(resolve));
    }
  })();
  const flooder = [verifyPassword('client password here', stored, '203.0.113.66'), verifyPassword('client password here', stored, '203.0.113.66')];
  // Issued after both of the flooder's: it still gets the second slot at once.
  const other = verifyPassword('client password here', stored, '198.51.100.7');
  assert.equal(scryptsRunningFor('198.51.100.7'), 1, 'started at once, beside the flooder’s first');
  assert.deepEqual(await Promise.all([...flooder, other]), [true, true, true]);
  done = true;
  await sampling;
  assert.equal(Math.max(...seen.map((sample) => sample.flooder)), 1, 'never two at once for one client');
  assert.equal(scryptLoad().running, 0);
});
