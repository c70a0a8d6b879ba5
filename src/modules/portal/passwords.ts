// Password storage: scrypt (memory-hard) with a random 16-byte salt per password, compared in
// constant time. The stored form names its parameters, so they can be raised later and older
// hashes still verify. scrypt runs on libuv's thread pool, never on the event loop, two at a
// time at most and one at a time per client address, with at most MAX_WAITING waiting (more:
// 503 at once). The bounds are per process, as the thread pool is.
// An account without a password (or an unknown email) is checked against a dummy hash, so a
// failed sign-in costs the same time whatever was wrong.

import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { DEFAULT_PASSWORD_COST } from '../../config.ts';
import { HttpError } from '../../domain/errors.ts';

const BLOCK_SIZE = 8;
const PARALLELISM = 1;
const KEY_LENGTH = 32;
const SALT_BYTES = 16;

/**
 * At most this many scrypts run at once. libuv's pool has four threads and the store's fsyncs
 * run there too: a burst of sign-ins must leave threads for the writes of everyone else.
 */
const MAX_CONCURRENT = 2;
let running = 0;

/**
 * Whom a scrypt is for: the client's address. One client runs one scrypt at a time (its other
 * one waits even with a slot free), so a client flooding sign-ins never holds both slots and
 * anyone else's check starts at once. null: no client to share with (the first dummy hash).
 */
export type ScryptClient = string | null;
const runningFor = new Map<string, number>();
const waiting: Array<{ client: ScryptClient; start: () => void }> = [];

/**
 * At most this many scrypts wait for a slot; one more is refused at once (503, Retry-After: 1)
 * rather than queued: a queue without bound lets a flood of sign-ins from many addresses make
 * everyone's wait as long as the flood (each scrypt takes tens of ms, two at a time, so a full
 * queue is well under a second of work).
 */
export const MAX_WAITING = 16;

/** scrypts started and attempts refused for a full queue, since the process began (for GET /metrics). */
let started = 0;
let queueFull = 0;

/** How many scrypts run right now (at most MAX_CONCURRENT) and wait their turn; how many started in all, and how many were refused. */
export function scryptLoad(): { running: number; waiting: number; started: number; queueFull: number } {
  return { running, waiting: waiting.length, started, queueFull };
}

/** How many scrypts run right now for `client` (at most one). */
export function scryptsRunningFor(client: string): number {
  return runningFor.get(client) ?? 0;
}

function mayStart(client: ScryptClient): boolean {
  return running < MAX_CONCURRENT && (client === null || !runningFor.has(client));
}

function take(client: ScryptClient): void {
  running += 1;
  if (client !== null) runningFor.set(client, (runningFor.get(client) ?? 0) + 1);
}

function give(client: ScryptClient): void {
  running -= 1;
  if (client === null) return;
  const left = (runningFor.get(client) ?? 1) - 1;
  if (left <= 0) runningFor.delete(client);
  else runningFor.set(client, left);
}

/** Starts the waiting scrypts that may run now, oldest first, skipping clients that already run one. */
function startWaiting(): void {
  while (running < MAX_CONCURRENT) {
    const index = waiting.findIndex((waiter) => mayStart(waiter.client));
    if (index === -1) return;
    const [next] = waiting.splice(index, 1);
    take(next!.client);
    next!.start();
  }
}

async function derive(password: string, salt: Buffer, options: ScryptOptions, keyLength: number, client: ScryptClient): Promise<Buffer> {
  if (mayStart(client)) take(client);
  else {
    if (waiting.length >= MAX_WAITING) {
      queueFull += 1;
      throw new HttpError(503, 'The server is busy checking passwords. Wait 1 s before trying again.', { headers: { 'Retry-After': '1' } });
    }
    // startWaiting takes the slot for this one before resolving.
    await new Promise<void>((resolve) => waiting.push({ client, start: resolve }));
  }
  started += 1;
  try {
    // maxmem above 128 * N * r, which Node's 32 MiB default would refuse for N = 2^15.
    const maxmem = 256 * (options.N ?? DEFAULT_PASSWORD_COST) * (options.r ?? BLOCK_SIZE) + 1024 * 1024;
    return await new Promise((resolve, reject) => {
      scrypt(password.normalize('NFC'), salt, keyLength, { ...options, maxmem }, (error, key) => (error ? reject(error) : resolve(key)));
    });
  } finally {
    give(client);
    startWaiting();
  }
}

/** The stored form: `scrypt$N$r$p$<salt base64>$<hash base64>`, N being `cost` (Config.passwordCost). */
export async function hashPassword(password: string, client: ScryptClient = null, cost = DEFAULT_PASSWORD_COST): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, { N: cost, r: BLOCK_SIZE, p: PARALLELISM }, KEY_LENGTH, client);
  return ['scrypt', cost, BLOCK_SIZE, PARALLELISM, salt.toString('base64'), key.toString('base64')].join('$');
}

/** True when `password` matches `stored`; a malformed stored value never matches. */
export async function verifyPassword(password: string, stored: string, client: ScryptClient = null): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [, cost, blockSize, parallelism, saltText, hashText] = parts as [string, string, string, string, string, string];
  const expected = Buffer.from(hashText, 'base64');
  if (expected.length === 0) return false;
  const key = await derive(password, Buffer.from(saltText, 'base64'), { N: Number(cost), r: Number(blockSize), p: Number(parallelism) }, expected.length, client);
  return timingSafeEqual(key, expected);
}

/** One dummy hash per cost in use (a process holds one server, or a test's several). */
const dummyHashes = new Map<number, Promise<string>>();

/** Makes the dummy hash ahead of the first failed sign-in (which would otherwise pay for two scrypts). */
export function prepareDummyHash(cost = DEFAULT_PASSWORD_COST): Promise<string> {
  let dummy = dummyHashes.get(cost);
  if (dummy === undefined) {
    dummy = hashPassword('a password nobody has; only its cost matters', null, cost);
    dummyHashes.set(cost, dummy);
  }
  return dummy;
}

/**
 * Pays one scrypt of the same cost as a real check and answers false: for an unknown email or
 * an account without a password, so that the answer takes as long as a wrong password's.
 */
export async function verifyAgainstDummy(password: string, client: ScryptClient = null, cost = DEFAULT_PASSWORD_COST): Promise<false> {
  await verifyPassword(password, await prepareDummyHash(cost), client);
  return false;
}
