// What one write is decided on. A write's decide function reads records through a Transaction,
// which notes each read with the version seen; the store runs decide in its write queue just
// before the batch goes to the log, on the state every earlier write has left. A read of a
// record that an earlier write of the same batch is about to change stops the decision at once
// (StaleRead, before it does anything else): that write is decided again in the next batch,
// once the change is applied.
//
// A decision has no side effects: it may be stopped and run again, or its write may fail or be
// refused by another server, so anything that must follow the write (a count, a mark) is handed
// to afterCommit and runs only once the write is durable and applied.

import { type CollectionName, type Collections, type RecordReader } from './collections.ts';
import type { StoredRecord, WriteOp } from './format.ts';
import type { ReadVersion } from './log.ts';

/** What a decide function reads through: the records, and a way to act once its write commits. */
export interface DecisionReader extends RecordReader {
  /** Runs `action` after this write is durable and applied (before its promise resolves); never when it fails. */
  afterCommit(action: () => void): void;
}

/** What a decide function returns: the ops to write as one unit, and the caller's answer. */
export interface Decision<R> {
  ops: readonly WriteOp[];
  result: R;
}

/**
 * Reads the current records and decides what to write; runs in the store's write queue, so it
 * must be synchronous and quick. It may be stopped at a read and run again later, and its
 * write may still fail: it changes nothing outside its ops, and hands what must follow the
 * write to `tx.afterCommit`. Throwing refuses the write (nothing is written).
 * @example store.commit((tx) => { const user = tx.get(USERS, id); ...; return { ops, result: user }; })
 */
export type Decide<R> = (tx: Transaction) => Decision<R>;

/** Records and collections the writes already decided in the current batch will change. */
export class PendingWrites {
  private readonly records = new Set<string>();
  private readonly collections = new Set<string>();

  add(ops: readonly WriteOp[]): void {
    for (const op of ops) {
      this.collections.add(op.collection);
      this.records.add(recordKey(op.collection, op.id));
    }
  }

  touchesRecord(collection: string, id: string): boolean {
    return this.collections.has(collection) && this.records.has(recordKey(collection, id));
  }

  touchesCollection(collection: string): boolean {
    return this.collections.has(collection);
  }
}

/** Thrown by a read of what an earlier write of the batch changes; the store decides again later. */
export class StaleRead extends Error {
  constructor() {
    // Control flow, not a fault: no stack is captured.
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      super('read a record an earlier write of this batch changes');
    } finally {
      Error.stackTraceLimit = stackTraceLimit;
    }
    this.name = 'StaleRead';
  }
}

export class Transaction implements DecisionReader {
  /** Every read, with the version seen (a shared log checks them again when it appends). */
  readonly reads: ReadVersion[] = [];
  /** What afterCommit was given, in order. */
  readonly committedActions: Array<() => void> = [];
  private readonly collections: Collections;
  private readonly pending: PendingWrites;

  constructor(collections: Collections, pending: PendingWrites) {
    this.collections = collections;
    this.pending = pending;
  }

  get<T extends StoredRecord>(collection: CollectionName<T>, id: string): T | undefined {
    if (this.pending.touchesRecord(collection, id)) throw new StaleRead();
    this.reads.push({ collection, id, version: this.collections.versionOf(collection, id) });
    return this.collections.get(collection, id);
  }

  values<T extends StoredRecord>(collection: CollectionName<T>): IterableIterator<T> {
    this.readWhole(collection);
    return this.collections.values(collection);
  }

  size(collection: string): number {
    this.readWhole(collection);
    return this.collections.size(collection);
  }

  afterCommit(action: () => void): void {
    this.committedActions.push(action);
  }

  private readWhole(collection: string): void {
    if (this.pending.touchesCollection(collection)) throw new StaleRead();
    this.reads.push({ collection, id: null, version: this.collections.collectionVersion(collection) });
  }
}

function recordKey(collection: string, id: string): string {
  return `${collection}\u0000${id}`;
}
