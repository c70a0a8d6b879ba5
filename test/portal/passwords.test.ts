// Password hashing on its own: scrypt with a salt per password (the same password hashes twice
// to different values), verification, a malformed stored value never matching, and at most two
// scrypts at a time, so a burst of sign-ins leaves libuv's threads to the store's writes.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hashPassword, scryptLoad, verifyPassword } from '../../src/portal/passwords.ts';

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
  assert.deepEqual(scryptLoad(), { running: 0, waiting: 0 }, 'every slot given back');
});
