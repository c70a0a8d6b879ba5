// What the rules' table tests share: a memory store (no data directory, no server) with the
// webhook outbox kept current from its changes as the app keeps it, a clock that moves only when
// told, records to start from, and two ways to run a rule on a real write's Transaction —
// deciding only (nothing written, to compare what would be written) or committing the decision.

import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { HttpError } from '../../src/domain/errors.ts';
import { KEYS, LISTINGS, USERS, type KeyRecord, type ListingRecord, type Role, type UserRecord } from '../../src/domain/records.ts';
import { Store, type WriteOp } from '../../src/store/store.ts';
import type { Transaction } from '../../src/store/transaction.ts';
import { WebhookOutbox } from '../../src/webhooks/outbox.ts';

export const START = '2026-01-01T00:00:00.000Z';

export interface RulesStore {
  store: Store;
  clock: ManualClock;
  outbox: WebhookOutbox;
}

/** A memory store with its outbox, closed after the test. */
export async function openRulesStore(t: TestContext): Promise<RulesStore> {
  const store = await Store.open({ dataDir: null, warn: () => {} });
  t.after(() => store.close().catch(() => {}));
  const clock = new ManualClock(Date.parse(START));
  const outbox = new WebhookOutbox({ store, clock, warn: () => {} });
  store.onChange((change) => outbox.onStoreChange(change));
  return { store, clock, outbox };
}

/** Runs `rule` on a write's Transaction and writes nothing: what the rule decided, or the error it refused with. */
export function decideOnly<R>(store: Store, rule: (tx: Transaction) => R): Promise<R> {
  return store.commit((tx) => ({ ops: [], result: rule(tx) }));
}

/** Runs `rule` on a write's Transaction and commits the ops it decided. */
export function commitDecision<R extends { ops: readonly WriteOp[] }>(store: Store, rule: (tx: Transaction) => R): Promise<R> {
  return store.commit((tx) => {
    const decided = rule(tx);
    return { ops: decided.ops, result: decided };
  });
}

/** A refusal as a client would see it: status, message and the fields named; null when nothing was refused. */
export interface Refusal {
  status: number;
  message: string;
  fields: string[];
}

/** The refusal `run` throws (synchronously or not), or null; anything but an HttpError fails the test. */
export async function refusalOf(run: () => unknown): Promise<Refusal | null> {
  try {
    await run();
    return null;
  } catch (error) {
    if (!(error instanceof HttpError)) throw error;
    return { status: error.status, message: error.message, fields: Object.keys(error.extras.details ?? {}).sort() };
  }
}

export function aUser(id: string, role: Role = 'member', extra: Partial<UserRecord> = {}): UserRecord {
  return { id, name: `User ${id}`, email: `${id}@example.test`, bio: '', website: '', avatar_url: '', role, created_at: START, updated_at: START, ...extra };
}

export function aListing(id: string, ownerId: string, extra: Partial<ListingRecord> = {}): ListingRecord {
  return { id, title: `Listing ${id}`, description: '', type: 'TOOL', price: 10, tags: [], status: 'active', owner_id: ownerId, created_at: START, updated_at: START, ...extra };
}

export function aKey(id: string, userId: string, extra: Partial<KeyRecord> = {}): KeyRecord {
  return { id, user_id: userId, name: '', prefix: 'market_live_', last_four: 'abcd', hash: id.padEnd(64, '0'), permissions: ['read:listings'], rate_limit: 100, plan: 'free', expires_at: null, created_at: START, updated_at: START, revoked_at: null, ...extra };
}

/** The ops putting these users, listings and keys. */
export function seedOps(records: { users?: UserRecord[]; listings?: ListingRecord[]; keys?: KeyRecord[] }): WriteOp[] {
  return [
    ...(records.users ?? []).map((data): WriteOp => ({ op: 'put', collection: USERS, id: data.id, data })),
    ...(records.listings ?? []).map((data): WriteOp => ({ op: 'put', collection: LISTINGS, id: data.id, data })),
    ...(records.keys ?? []).map((data): WriteOp => ({ op: 'put', collection: KEYS, id: data.id, data })),
  ];
}

/** Each op as `put collection` or `del collection`, to compare what a decision writes at a glance (ids are new each run). */
export function opSummary(ops: readonly WriteOp[]): string[] {
  return ops.map((op) => `${op.op} ${op.collection}`);
}

/** One row of a body-reading table: the fields read (compared as JSON, so absent and undefined are one), or the fields a 400 names. */
export interface ReadingCase {
  body: Record<string, unknown>;
  read?: object;
  refused?: string[];
}

/** Checks every row: a refused body gets a 400 naming exactly those fields; any other reads as given. */
export async function assertReadings(cases: readonly ReadingCase[], read: (body: Record<string, unknown>) => unknown): Promise<void> {
  for (const { body, read: expected, refused } of cases) {
    const refusal = await refusalOf(() => read(body));
    if (refused) {
      assert.equal(refusal?.status, 400, JSON.stringify(body));
      assert.deepEqual(refusal.fields, refused, JSON.stringify(body));
    } else {
      assert.equal(refusal, null, JSON.stringify(body));
      assert.deepEqual(JSON.parse(JSON.stringify(read(body))), expected, JSON.stringify(body));
    }
  }
}
