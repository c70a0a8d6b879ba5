// The record store: collections in memory (collections.ts) in front of a log that keeps them
// (log.ts: the file, nothing for the memory-only mode, or a database shared by many servers,
// which alone comes with an InstanceSync, instance-sync.ts, for following the others; what the
// store does only then is following.ts, loaded only then). Every write is decided in the
// store's write queue, on the current state, just before its batch goes to the log: a write
// names what it read (a Transaction) and what it changes, so no write decided on an older copy
// ever reaches the log, and the outcome is that of running the writes one at a time. A batch is
// made durable first and only then applied to memory and acknowledged; writes arriving while
// one batch is written go out together in the next (group commit). Backups run between batches, so they see a durable, unchanging state; a compaction
// of the file log runs beside the batches and holds them only to mark its snapshot point and
// to switch files.

import { setImmediate as nextTurn } from 'node:timers/promises';
import { Collections, type ChangeEvent, type CollectionName, type RecordChange, type RecordReader } from './collections.ts';
import type { FileSystem } from './files.ts';
import { encodeWrite, headerLine, type StoredRecord, type WriteOp } from './format.ts';
import type { InstanceSync, Watermark } from './instance-sync.ts';
import type { AppendOutcome, CompactionHooks, Log, LogEntry } from './log.ts';
import { openLocalLog } from './local-log.ts';
import { PendingWrites, StaleRead, Transaction, type Decide } from './transaction.ts';
import type { Following } from './following.ts';
import { StoreClosedError, StoreUnavailableError } from './store-errors.ts';

export type { StoredRecord, WriteOp } from './format.ts';
export type { ChangeEvent, CollectionName, RecordChange, RecordReader } from './collections.ts';
export type { CompactionHooks } from './log.ts';
export { collectionName } from './collections.ts';
export type { Decide, Decision, DecisionReader, Transaction } from './transaction.ts';
export { LogVersionError } from './format.ts';
export { InstanceBehindError, StoreClosedError, StoreUnavailableError } from './store-errors.ts';
export { DataDirLockedError } from './lock.ts';
export { LogDamagedError } from './replay.ts';

export interface StoreOptions {
  /** null: memory only, nothing kept. */
  dataDir: string | null;
  /**
   * Where the records are kept (src/backends/open-backends.ts chooses it for a server); without
   * it, the file in `dataDir` or memory only (for tests and embedding).
   */
  log?: Log;
  /**
   * Only where many servers share `log` (it is the same PostgreSQL back-end): following the
   * others' writes and read-your-writes. Absent, the store is the log's one writer.
   */
  instanceSync?: InstanceSync | null;
  fileSystem?: FileSystem;
  warn?: (message: string) => void;
  /** Compact once the log holds at least this many operations and over half are superseded. */
  compactAtOps?: number;
  /** With instanceSync: how long a request may wait for its server to catch up before it is answered 503 (CATCH_UP_WAIT_MS). */
  catchUpWaitMs?: number;
  now?: () => number;
  /** Tests only: where a compaction may be held (see CompactionHooks in log.ts). */
  compactionHooks?: CompactionHooks;
}

export interface StoreStats {
  /** Operations acknowledged since start. */
  writes: number;
  batches: number;
  /** Writes decided again because another server changed what they read (a shared database only). */
  conflicts: number;
  /** The same writes by the collections they were to change (a write counts once under each). */
  conflictsByCollection: Record<string, number>;
  /** The log file's fsyncs (the file only: a database commits instead). */
  fsyncs?: number;
  /** Commits of batches to the shared database (PostgreSQL only). */
  commits?: number;
  opsInLog: number;
  liveRecords: number;
  /** Size of the log file (the file only). */
  logBytes?: number;
  compactions: number;
  /** False after a failed write until the next one succeeds. */
  writable: boolean;
  lastWriteError: string | null;
}

interface QueuedWrite {
  kind: 'write';
  decide: Decide<unknown>;
  /** A watermark the request learned and did not wait for: an answer that writes nothing must cover it (commit's `options`). */
  freshAs?: Watermark;
  resolve: (result: unknown) => void;
  reject: (error: Error) => void;
}
type QueueItem = QueuedWrite | { kind: 'task'; run: () => Promise<void> };

interface DecidedWrite {
  write: QueuedWrite;
  entry: LogEntry;
  result: unknown;
  /** The decision's afterCommit actions. */
  committedActions: Array<() => void>;
}

/** Records encoded per slice of a compaction or backup (about a millisecond of work)... */
const RECORDS_PER_SLICE = 1024;
/** ...or fewer when they are large: a slice ends at this many characters of encoded lines. */
const SLICE_CHARACTERS = 256 * 1024;
/**
 * The bytes each slice is encoded into, one buffer reused slice after slice (a slice longer
 * than this, from one large record, gets its own). A fresh buffer per slice made a million
 * records' compaction allocate its whole new log, 1.2 GB, outside the heap, and V8 answers that
 * much outside memory with full collections of the heap, each a long pause of the event loop.
 */
const SLICE_BUFFER_BYTES = 3 * SLICE_CHARACTERS + 64 * 1024;

export interface CompactionSummary {
  bytesBefore: number;
  bytesAfter: number;
  /** Live records once the compaction ended. */
  records: number;
}

export class Store implements RecordReader {
  private readonly collections: Collections;
  private readonly log: Log;
  /** Other servers share the log (null: this one is its only writer). */
  private following: Following | null = null;
  /** In the order they were registered; `collection` null hears every collection. */
  private readonly listeners: Array<{ collection: string | null; listener: (change: ChangeEvent) => void }> = [];
  private readonly compactAtOps: number;
  private readonly now: () => number;
  private readonly warn: (message: string) => void;
  private readonly compactionHooks: CompactionHooks;
  private queue: QueueItem[] = [];
  private pumping = false;
  private compactionQueued = false;
  /** The compaction running (or about to), and one asked for while it runs, which starts after it. */
  private runningCompaction: Promise<CompactionSummary> | null = null;
  private waitingCompaction: Promise<CompactionSummary> | null = null;
  /** close() was called: new writes are refused, queued ones still go out. */
  private closing = false;
  private closed: Promise<void> | null = null;
  private counters = { writes: 0, batches: 0, conflicts: 0 };
  /** Writes applied to memory so far (own and pulled): what was read before it changed may be old. */
  private appliedWrites = 0;
  private readonly conflictsByCollection: Record<string, number> = {};

  private constructor(
    collections: Collections,
    log: Log,
    options: { compactAtOps: number; now: () => number; warn: (message: string) => void; compactionHooks: CompactionHooks },
  ) {
    this.collections = collections;
    this.compactionHooks = options.compactionHooks;
    this.log = log;
    this.compactAtOps = options.compactAtOps;
    this.now = options.now;
    this.warn = options.warn;
  }

  /**
   * Opens (or creates) the store in `dataDir`, taking its lock and loading its log.
   * Throws DataDirLockedError, LogDamagedError or LogVersionError with a message for the operator.
   * @example
   * const store = await Store.open({ dataDir: './data' });
   */
  static async open(options: StoreOptions): Promise<Store> {
    const warn = options.warn ?? ((message: string) => console.warn(message));
    const now = options.now ?? Date.now;
    const log = options.log ?? (await openLocalLog({ dataDir: options.dataDir, fileSystem: options.fileSystem, warn, now }));
    const collections = new Collections();
    try {
      await log.load({
        put: (collection, record, version) => collections.loadPut(collection, record, version),
        remove: (collection, id, version) => collections.loadDelete(collection, id, version),
      });
    } catch (error) {
      await log.close().catch(() => {});
      throw error;
    }
    const store = new Store(collections, log, { compactAtOps: options.compactAtOps ?? 10_000, now, warn, compactionHooks: options.compactionHooks ?? {} });
    if (options.instanceSync) {
      // Only where other servers share the log: one server's store never loads this part.
      const { Following } = await import('./following.ts');
      store.following = new Following(
        options.instanceSync,
        { enqueueTask: (work) => store.enqueueTask(work), apply: (ops, version) => store.apply(ops, version), closing: () => store.closing, warn },
        options.catchUpWaitMs ?? 2_000,
      );
    }
    return store;
  }

  get<T extends StoredRecord>(collection: CollectionName<T>, id: string): T | undefined {
    return this.collections.get(collection, id);
  }

  values<T extends StoredRecord>(collection: CollectionName<T>): IterableIterator<T> {
    return this.collections.values(collection);
  }

  size(collection: string): number {
    return this.collections.size(collection);
  }

  /** Called synchronously after each operation is applied to memory (indexes, caches, events). */
  onChange(listener: (change: ChangeEvent) => void): void {
    this.listeners.push({ collection: null, listener });
  }

  /**
   * Like onChange, for one collection only, with its records' type: called in the same order
   * as every other listener (the order of registration), for that collection's changes alone.
   * @example store.onChangeOf(KEYS, (change) => authenticator.onKeyChange(change));
   */
  onChangeOf<T extends StoredRecord>(collection: CollectionName<T>, listener: (change: RecordChange<T>) => void): void {
    this.listeners.push({ collection, listener: listener as (change: ChangeEvent) => void });
  }

  /**
   * Decides a write on the current state and makes it durable: `decide` runs in the write
   * queue, reading through its transaction, just before the batch is written (again, when
   * something it read was changed by an earlier write of the batch). Resolves with its result
   * once the ops are durable and applied. Rejects with what decide threw (nothing written), or
   * StoreUnavailableError (nothing applied) when the log fails.
   * @example
   * const listing = await store.commit((tx) => {
   *   const current = tx.get(LISTINGS, id);
   *   if (!current) throw notFound('Listing');
   *   const archived = { ...current, status: 'archived' };
   *   return { ops: [{ op: 'put', collection: LISTINGS, id, data: archived }], result: archived };
   * });
   */
  commit<R>(decide: Decide<R>, options: { freshAs?: Watermark } = {}): Promise<R> {
    if (this.closing) return Promise.reject(new StoreClosedError());
    return new Promise<R>((resolve, reject) => {
      const write: QueuedWrite = { kind: 'write', decide, resolve: resolve as (result: unknown) => void, reject };
      if (options.freshAs !== undefined) write.freshAs = options.freshAs;
      this.queue.push(write);
      this.pump();
    });
  }

  /**
   * Writes `ops` as one unit without reading anything: only for records the caller alone
   * writes (its own counters, a sweep of expired records, seed data). A write that depends on
   * what a record holds goes through `commit`.
   */
  write(ops: readonly WriteOp[]): Promise<void> {
    if (ops.length === 0) return Promise.resolve();
    return this.commit(() => ({ ops, result: undefined }));
  }

  /**
   * Rewrites the log to hold only live records (crash-safe). On the file log, writes go on
   * meanwhile: they are held only while the snapshot point is marked and for the switch to the
   * new file (log.ts, point 4); a back-end that holds the queue throughout (PostgreSQL) makes
   * writes arriving meanwhile wait and go out right after. Compactions take turns: one asked
   * for while another runs starts once that one ends, so it also drops whatever was superseded
   * before it was asked for (erasure relies on that), and every call made meanwhile shares it.
   * Rejects with StoreUnavailableError when the log fails; the log is then unchanged (or
   * already the compacted one) and still loadable either way.
   */
  compact(): Promise<CompactionSummary> {
    if (this.closing) return Promise.reject(new StoreClosedError());
    if (this.waitingCompaction !== null) return this.waitingCompaction;
    const ignore = () => {};
    const next = (this.runningCompaction ?? Promise.resolve()).then(ignore, ignore).then(() => {
      this.waitingCompaction = null;
      return this.compactOnce();
    });
    this.waitingCompaction = next;
    this.runningCompaction = next;
    const forget = () => {
      if (this.runningCompaction === next) this.runningCompaction = null;
    };
    next.then(forget, forget);
    return next;
  }

  private async compactOnce(): Promise<CompactionSummary> {
    if (this.closing) throw new StoreClosedError();
    try {
      const result = await this.log.compact({
        exclusive: (work) => this.enqueueTask(work),
        records: (write) =>
          this.writeLiveRecords(async (chunk) => {
            // Closing does not wait for a long compaction: it stops here, the old log whole.
            if (this.closing) throw new StoreClosedError('the store closed during a compaction');
            await write(chunk);
          }),
        hooks: this.compactionHooks,
      });
      return { ...result, records: this.collections.liveRecords() };
    } catch (error) {
      if (error instanceof StoreClosedError) throw error;
      throw new StoreUnavailableError(error);
    }
  }

  /**
   * Every version of one record that the log's older, superseded writes still hold, oldest
   * first (none on a back-end that keeps only the latest state). For erasure, which must find
   * earlier personal values before the compaction drops them.
   */
  async earlierVersions<T extends StoredRecord>(collection: CollectionName<T>, id: string): Promise<T[]> {
    try {
      return (await this.log.earlierVersions(collection, id)) as T[];
    } catch (error) {
      // The log could not be read back: the caller answers 503 and may be asked again.
      throw new StoreUnavailableError(error);
    }
  }

  /** A consistent copy of every live record, in log format (header first), for backups. */
  snapshot(): Promise<Buffer[]> {
    return this.runExclusive(() => this.serializeLiveRecords());
  }

  stats(): StoreStats {
    const log = this.log.stats();
    return {
      ...this.counters,
      conflictsByCollection: { ...this.conflictsByCollection },
      // Each back-end's own counters, under names that are true for it.
      ...(log.fsyncs === undefined ? {} : { fsyncs: log.fsyncs }),
      ...(log.commits === undefined ? {} : { commits: log.commits }),
      opsInLog: log.removals === undefined ? log.opsInLog : this.collections.liveRecords() + log.removals.kept,
      liveRecords: this.collections.liveRecords(),
      ...(log.logBytes === undefined ? {} : { logBytes: log.logBytes }),
      compactions: log.compactions,
      writable: log.lastWriteError === null,
      lastWriteError: log.lastWriteError,
    };
  }

  /** Refuses new writes, waits for queued ones, then closes the log (releasing its lock). */
  close(): Promise<void> {
    this.closed ??= this.closeOnce();
    return this.closed;
  }

  private async closeOnce(): Promise<void> {
    this.closing = true;
    try {
      await this.enqueueTask(async () => {});
      // A compaction running beside writes stops at its next slice (or finishes its switch).
      await this.runningCompaction?.catch(() => {});
    } finally {
      await this.log.close();
    }
  }

  private runExclusive<T>(work: () => Promise<T>): Promise<T> {
    if (this.closing) return Promise.reject(new StoreClosedError());
    return this.enqueueTask(work);
  }

  private enqueueTask<T>(work: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ kind: 'task', run: () => work().then(resolve, reject) });
      this.pump();
    });
  }

  private pump(): void {
    if (this.pumping) return;
    this.pumping = true;
    void this.drain();
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const first = this.queue[0]!;
        if (first.kind === 'task') {
          this.queue.shift();
          await first.run();
          continue;
        }
        // Every write queued so far, up to the next task, shares one append (one fsync).
        let end = 1;
        while (end < this.queue.length && this.queue[end]!.kind === 'write') end += 1;
        const batch = this.queue.splice(0, end) as QueuedWrite[];
        const again = await this.commitBatch(batch);
        // Writes to decide again go first, so each is decided before anything queued later.
        if (again.length > 0) this.queue.unshift(...again);
      }
    } finally {
      this.pumping = false;
    }
  }

  /** Decides, appends and applies one batch; returns the writes to decide again. */
  private async commitBatch(batch: readonly QueuedWrite[]): Promise<QueuedWrite[]> {
    const pending = new PendingWrites();
    const decided: DecidedWrite[] = [];
    const again: QueuedWrite[] = [];
    let behind = false;
    for (const write of batch) {
      const tx = new Transaction(this.collections, pending);
      let decision;
      try {
        decision = write.decide(tx);
      } catch (error) {
        // It read what an earlier write of the batch changes: decide it again after that one.
        if (error instanceof StaleRead) again.push(write);
        else if (this.following?.decidedBehind(write)) {
          behind = true;
          again.push(write);
        } else write.reject(error as Error);
        continue;
      }
      const invalid = decision.ops.find((op) => op.op === 'put' && (typeof op.data !== 'object' || op.data === null || op.data.id !== op.id));
      if (invalid) {
        // Such a line would be refused as damaged at the next start; refuse it now instead.
        write.reject(new TypeError(`a put's data.id must equal its id (${invalid.collection}/${invalid.id})`));
        continue;
      }
      if (decision.ops.length === 0 && this.following?.decidedBehind(write)) {
        // A refusal (or an answer writing nothing) decided before this server had caught up with
        // the watermark its request learned: no commit will check what it read, so catch up and decide it again.
        behind = true;
        again.push(write);
        continue;
      }
      if (decision.ops.length === 0) {
        // Nothing to write: what it read is already durable.
        this.runCommittedActions(tx.committedActions);
        write.resolve(decision.result);
        continue;
      }
      pending.add(decision.ops);
      decided.push({ write, entry: { ops: decision.ops, reads: tx.reads }, result: decision.result, committedActions: tx.committedActions });
    }
    // `behind` is only ever set with another server sharing the log.
    if (decided.length === 0) return behind ? this.following!.catchUpBeforeDeciding(again) : again;

    let outcomes;
    try {
      outcomes = await this.log.append(decided.map((item) => item.entry));
    } catch (error) {
      const failure = new StoreUnavailableError(error);
      for (const item of decided) item.write.reject(failure);
      return again;
    }
    this.counters.batches += 1;
    const conflicts: QueuedWrite[] = [];
    const committed: DecidedWrite[] = [];
    decided.forEach((item, index) => {
      const outcome = outcomes[index]!;
      if (outcome === 'conflict') {
        this.counters.conflicts += 1;
        for (const collection of new Set(item.entry.ops.map((op) => op.collection))) {
          this.conflictsByCollection[collection] = (this.conflictsByCollection[collection] ?? 0) + 1;
        }
        conflicts.push(item.write);
        return;
      }
      this.apply(item.entry.ops, outcome.version);
      this.counters.writes += item.entry.ops.length;
      committed.push(item);
    });
    for (const item of committed) this.runCommittedActions(item.committedActions);
    this.acknowledge(committed, outcomes);
    this.maybeScheduleCompaction();
    if (conflicts.length === 0 && !behind) return again;
    // Another server changed what these read: catch up with it before deciding them again, on the
    // new state. Only a shared log answers conflict.
    const following = this.following;
    if (following === null) {
      // Never expected: with nobody to catch up with, a refused write is refused for good.
      const failure = new StoreUnavailableError(new Error('the log refused a write as a conflict, but no other server shares it'));
      for (const write of conflicts) write.reject(failure);
      return again;
    }
    try {
      await following.pullOthers();
    } catch (error) {
      // Cannot catch up (the shared log is unreachable): refuse them rather than leave them waiting.
      const failure = new StoreUnavailableError(error);
      for (const write of conflicts) write.reject(failure);
      return following.refuseBehind(again, error);
    }
    return following.caughtUp([...conflicts, ...again]);
  }

  /** A decision's afterCommit actions; the write is durable, so a failing one is only reported. */
  private runCommittedActions(actions: ReadonlyArray<() => void>): void {
    for (const action of actions) {
      try {
        action();
      } catch (error) {
        this.warn(`An after-commit action failed: ${(error as Error)?.message ?? String(error)}`);
      }
    }
  }

  /**
   * Resolves the committed writes: at once with one writer; with others sharing the log, once
   * they are in the commit watermark (`published`: every server's next request catches up with
   * them), without holding the queue meanwhile: later batches go on.
   */
  private acknowledge(committed: readonly DecidedWrite[], outcomes: readonly AppendOutcome[]): void {
    if (committed.length === 0) return;
    if (this.following === null) {
      for (const item of committed) item.write.resolve(item.result);
      return;
    }
    const last = Math.max(...outcomes.map((outcome) => (outcome === 'conflict' ? 0 : outcome.version)));
    this.following.published(last).then(
      () => {
        for (const item of committed) item.write.resolve(item.result);
      },
      (error: unknown) => {
        // Committed, but whether other servers will answer with it cannot be told: answered as a failed write.
        const failure = new StoreUnavailableError(error);
        for (const item of committed) item.write.reject(failure);
      },
    );
  }

  /** Changes whenever memory does: a request compares it to tell whether what it read may have changed since. */
  memoryGeneration(): number {
    return this.appliedWrites;
  }

  /** A watermark a request learned may be used as is (read from a source that cannot have gone back in time). */
  trustsWatermark(watermark: Watermark): boolean {
    return this.following !== null && this.following.trusts(watermark);
  }

  /**
   * Before a request is answered from memory: null when memory holds every write acknowledged
   * anywhere (one writer, or `known`, a watermark the request holds already, says so); else a
   * promise that resolves once it does, after one catch-up, or rejects with InstanceBehindError
   * when that cannot be done within catchUpWaitMs (the request is answered 503).
   */
  ensureFresh(known?: Watermark): Promise<void> | null {
    return this.following === null ? null : this.following.ensureFresh(known);
  }

  /** What keeps the log from being ready (a shared log: database unreachable, behind), empty when nothing. */
  problems(): string[] {
    return this.following === null ? [] : this.following.problems();
  }

  /**
   * Ordered records (log.ts, point 8) below this `seq` are all in memory and none will commit
   * below it later: readers serve them in `seq` order up to here. Everything, with one writer.
   */
  orderedBelow(): number {
    return this.following === null ? Number.POSITIVE_INFINITY : this.following.orderedBelow();
  }

  /**
   * Many servers: resolves once one catch-up has run since the call, which settles the order of
   * every ordered record acknowledged before it (a reader of them sees its own writes). Null
   * with one writer, whose order is always settled.
   */
  settleOrder(): Promise<void> | null {
    return this.following === null ? null : this.following.settleOrder();
  }

  /** Called after each catch-up of others' writes (orderedBelow may have moved on); never with one writer. */
  onCaughtUp(listener: () => void): void {
    this.following?.onCaughtUp(listener);
  }

  private apply(ops: readonly WriteOp[], version: number): void {
    this.appliedWrites += 1;
    for (const op of ops) {
      const before = this.collections.apply(op, version);
      const after = op.op === 'put' ? op.data : undefined;
      const change = { collection: op.collection, id: op.id, before, after };
      for (const { collection, listener } of this.listeners) {
        if (collection !== null && collection !== op.collection) continue;
        // The write is already durable: a failing listener must not undo or stall it.
        try {
          listener(change);
        } catch (error) {
          this.warn(`A store change listener failed on ${op.collection}/${op.id}: ${(error as Error)?.message ?? String(error)}`);
        }
      }
    }
  }

  /** Compacts once the log holds compactAtOps operations or more and most of them could be dropped. */
  private maybeScheduleCompaction(): void {
    if (this.compactionQueued || this.closing) return;
    const { opsInLog, removals } = this.log.stats();
    const live = this.collections.liveRecords();
    // The file holds every operation written (superseded = all but the live records); a
    // back-end that keeps each record once says which of its removals could be dropped.
    const droppable = removals === undefined ? opsInLog - live : removals.droppable;
    if (live + droppable < this.compactAtOps || droppable <= live) return;
    this.compactionQueued = true;
    this.compact()
      .catch((error: Error) => {
        if (!(error instanceof StoreClosedError)) this.warn(`Log compaction failed (the log is still complete and loadable): ${error.message}`);
      })
      .finally(() => {
        this.compactionQueued = false;
      });
  }

  /**
   * Every live record in log format, header first, encoded in slices with a turn of the event
   * loop between them: a million records take seconds to encode, and requests must not wait
   * for all of them. For a backup, which holds the write queue, nothing changes meanwhile.
   */
  private async serializeLiveRecords(): Promise<Buffer[]> {
    const chunks: Buffer[] = [];
    await this.writeLiveRecords(async (chunk) => {
      // The chunk's bytes are reused for the next slice.
      chunks.push(Buffer.from(chunk));
    });
    return chunks;
  }

  /**
   * Hands every live record to `write` in log format, header first, one slice at a time with a
   * turn of the event loop after each. Run beside writes (a compaction), each record is taken
   * as it is when its slice is made: a Map's iterator visits every entry present from start to
   * end, entries deleted meanwhile it skips, and one deleted and put again it may visit twice
   * — never a state older than at the call. A chunk's bytes are reused once `write` resolves.
   */
  private async writeLiveRecords(write: (chunk: Buffer) => Promise<void>): Promise<void> {
    await write(Buffer.from(headerLine(new Date(this.now()).toISOString())));
    const sliceBuffer = Buffer.allocUnsafe(SLICE_BUFFER_BYTES);
    const encoded = (text: string): Buffer => {
      if (text.length * 3 > sliceBuffer.length && Buffer.byteLength(text) > sliceBuffer.length) return Buffer.from(text);
      return sliceBuffer.subarray(0, sliceBuffer.write(text));
    };
    let pending: string[] = [];
    let pendingLength = 0;
    for (const [collection, records] of this.collections.entries()) {
      for (const record of records.values()) {
        const line = encodeWrite([{ op: 'put', collection, id: record.id, data: record }]);
        pending.push(line);
        pendingLength += line.length;
        if (pending.length === RECORDS_PER_SLICE || pendingLength >= SLICE_CHARACTERS) {
          await write(encoded(pending.join('')));
          pending = [];
          pendingLength = 0;
          await nextTurn();
        }
      }
    }
    if (pending.length > 0) await write(encoded(pending.join('')));
  }
}
