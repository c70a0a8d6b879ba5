// Password storage: scrypt (memory-hard) with a random 16-byte salt per password, compared in
// constant time. The stored form names its parameters, so they can be raised later and older
// hashes still verify. scrypt runs on libuv's thread pool, never on the event loop.
// An account without a password (or an unknown email) is checked against a dummy hash, so a
// failed sign-in costs the same time whatever was wrong.

import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/** N = 2^15, r = 8, p = 1: 32 MiB and tens of milliseconds per hash (OWASP's scrypt minimum is N = 2^17 with r = 8 at p = 1 for 128 MiB; 2^15 keeps a 2-core server responsive). */
const COST = 2 ** 15;
const BLOCK_SIZE = 8;
const PARALLELISM = 1;
const KEY_LENGTH = 32;
const SALT_BYTES = 16;

function derive(password: string, salt: Buffer, options: ScryptOptions, keyLength: number): Promise<Buffer> {
  // maxmem above 128 * N * r, which Node's 32 MiB default would refuse for N = 2^15.
  const maxmem = 256 * (options.N ?? COST) * (options.r ?? BLOCK_SIZE) + 1024 * 1024;
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFC'), salt, keyLength, { ...options, maxmem }, (error, key) => (error ? reject(error) : resolve(key)));
  });
}

/** The stored form: `scrypt$N$r$p$<salt base64>$<hash base64>`. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, { N: COST, r: BLOCK_SIZE, p: PARALLELISM }, KEY_LENGTH);
  return ['scrypt', COST, BLOCK_SIZE, PARALLELISM, salt.toString('base64'), key.toString('base64')].join('$');
}

/** True when `password` matches `stored`; a malformed stored value never matches. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [, cost, blockSize, parallelism, saltText, hashText] = parts as [string, string, string, string, string, string];
  const expected = Buffer.from(hashText, 'base64');
  if (expected.length === 0) return false;
  const key = await derive(password, Buffer.from(saltText, 'base64'), { N: Number(cost), r: Number(blockSize), p: Number(parallelism) }, expected.length);
  return timingSafeEqual(key, expected);
}

let dummyHash: Promise<string> | null = null;

/** Makes the dummy hash ahead of the first failed sign-in (which would otherwise pay for two scrypts). */
export function prepareDummyHash(): Promise<string> {
  dummyHash ??= hashPassword('a password nobody has; only its cost matters');
  return dummyHash;
}

/**
 * Pays one scrypt of the same cost as a real check and answers false: for an unknown email or
 * an account without a password, so that the answer takes as long as a wrong password's.
 */
export async function verifyAgainstDummy(password: string): Promise<false> {
  await verifyPassword(password, await prepareDummyHash());
  return false;
}
