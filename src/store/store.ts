// The record store: every collection lives in memory, every change goes to the JSON-lines log
// first. A write is appended, fsynced, and only then applied to memory and acknowledged.
// Writes that arrive while an fsync runs wait and go out together in the next one (group
// commit). Compaction and snapshots run between batches, so they always see a durable state.

import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { encodeWrite, headerLine, LOG_FILE_NAME, TEMP_SUFFIX, type StoredRecord, type WriteOp } from './format.ts';
import { nodeFileSystem, type FileSystem, type LogHandle } from './files.ts';
import { acquireDataDirLock } from './lock.ts';
import { replayLog, type Collections } from './replay.ts';

export type { StoredRecord, WriteOp } from './format.ts';
export { LogVersionError } from './format.ts';
export { DataDirLockedError } from './lock.ts';
export { LogDamagedError } from './replay.ts';

export interface StoreOptions {
  /** null: memory only, nothing on disk. */
  dataDir: string | null;
  fileSystem?: FileSystem;
  warn?: (message: string) => void;
  /** Compact once the log holds at least this many operations and over half are superseded. */
  compactAtOps?: number;
  now?: () => number;
}

export interface StoreStats {
  /** Operations acknowledged since start. */
  writes: number;
  batches: number;
  fsyncs: number;
  opsInLog: number;
  liveRecords: number;
  logBytes: number;
  compactions: number;
  /** False after a failed write until the next one succeeds. */
  writable: boolean;
  lastWriteError: string | null;
}

export interface ChangeEvent {
  collection: string;
  id: string;
  before: StoredRecord | undefined;
  after: StoredRecord | undefined;
}

/** A write that could not be made durable; nothing of it was applied. */
export class StoreUnavailableError extends Error {
  constructor(cause: unknown) {
    super(`storage write failed: ${(cause as Error)?.message ?? String(cause)}`, { cause });
    this.name = 'StoreUnavailableError';
  }
}

export class StoreClosedError extends Error {
  constructor(message = 'the store is closed') {
    super(message);
    this.name = 'StoreClosedError';
  }
}

type QueueItem =
  | { kind: 'write'; ops: readonly WriteOp[]; bytes: Buffer; resolve: () => void; reject: (error: Error) => void }
  | { kind: 'task'; run: () => Promise<void> };

const COMPACT_TEMP_NAME = `${LOG_FILE_NAME}.compact${TEMP_SUFFIX}`;
/** Records encoded per slice of a compaction or backup (about a millisecond of work). */
const RECORDS_PER_SLICE = 1024;
const CREATE_TEMP_NAME = `${LOG_FILE_NAME}.create${TEMP_SUFFIX}`;

export class Store {
  private readonly collections: Collections;
  private readonly listeners: Array<(change: ChangeEvent) => void> = [];
  private readonly fileSystem: FileSystem;
  private readonly logPath: string | null;
  private readonly dataDir: string | null;
  private readonly compactAtOps: number;
  private readonly now: () => number;
  private readonly warn: (message: string) => void;
  private readonly releaseLock: () => void;
  private handle: LogHandle | null;
  /** Bytes of the log known to be valid and durable; the next batch is written here. */
  private logBytes: number;
  /** The file may hold bytes past logBytes (a torn tail or a failed write) to cut before writing. */
  private mustTruncate: boolean;
  /** A compaction renamed a new log into place: the handle still points at the old file. */
  private mustReopen = false;
  /** A compaction's rename is not yet known durable: fsync the directory before acknowledging. */
  private mustSyncDirectory = false;
  private queue: QueueItem[] = [];
  private pumping = false;
  private compactionQueued = false;
  /** close() was called: new writes are refused, queued ones still go out. */
  private closing = false;
  private closed: Promise<void> | null = null;
  private counters = { writes: 0, batches: 0, fsyncs: 0, opsInLog: 0, compactions: 0 };
  private lastWriteError: string | null = null;

  private constructor(init: {
    collections: Collections;
    fileSystem: FileSystem;
    dataDir: string | null;
    handle: LogHandle | null;
    logBytes: number;
    mustTruncate: boolean;
    opsInLog: number;
    compactAtOps: number;
    now: () => number;
    warn: (message: string) => void;
    releaseLock: () => void;
  }) {
    this.collections = init.collections;
    this.fileSystem = init.fileSystem;
    this.dataDir = init.dataDir;
    this.logPath = init.dataDir === null ? null : join(init.dataDir, LOG_FILE_NAME);
    this.handle = init.handle;
    this.logBytes = init.logBytes;
    this.mustTruncate = init.mustTruncate;
    this.counters.opsInLog = init.opsInLog;
    this.compactAtOps = init.compactAtOps;
    this.now = init.now;
    this.warn = init.warn;
    this.releaseLock = init.releaseLock;
  }

  /**
   * Opens (or creates) the store in `dataDir`, taking its lock and replaying its log.
   * Throws DataDirLockedError, LogDamagedError or LogVersionError with a message for the operator.
   * @example
   * const store = await Store.open({ dataDir: './data' });
   */
  static async open(options: StoreOptions): Promise<Store> {
    const fileSystem = options.fileSystem ?? nodeFileSystem;
    const warn = options.warn ?? ((message: string) => console.warn(message));
    const now = options.now ?? Date.now;
    const common = { fileSystem, compactAtOps: options.compactAtOps ?? 10_000, now, warn };
    const { dataDir } = options;
    if (dataDir === null) {
      return new Store({ ...common, collections: new Map(), dataDir, handle: null, logBytes: 0, mustTruncate: false, opsInLog: 0, releaseLock: () => {} });
    }
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const releaseLock = acquireDataDirLock(dataDir);
    try {
      const logPath = join(dataDir, LOG_FILE_NAME);
      await discardLeftoverTempFiles(fileSystem, dataDir, warn);
      if (!existsSync(logPath)) await createLogFile(fileSystem, dataDir, logPath, now);
      const replay = replayLog(logPath, dataDir, warn);
      const handle = await fileSystem.open(logPath);
      return new Store({
        ...common,
        collections: replay.collections,
        dataDir,
        handle,
        logBytes: replay.goodLength,
        // The torn tail is cut just before the next append, so loading itself never writes.
        mustTruncate: replay.tornTailBytes > 0,
        opsInLog: replay.opsInLog,
        releaseLock,
      });
    } catch (error) {
      releaseLock();
      throw error;
    }
  }

  get<T extends StoredRecord>(collection: string, id: string): T | undefined {
    return this.collections.get(collection)?.get(id) as T | undefined;
  }

  values<T extends StoredRecord>(collection: string): IterableIterator<T> {
    const records = this.collections.get(collection) ?? new Map<string, StoredRecord>();
    return records.values() as IterableIterator<T>;
  }

  size(collection: string): number {
    return this.collections.get(collection)?.size ?? 0;
  }

  /** Called synchronously after each operation is applied to memory (indexes, caches, events). */
  onChange(listener: (change: ChangeEvent) => void): void {
    this.listeners.push(listener);
  }

  /**
   * Makes `ops` durable as one unit, then applies them. Resolves only after fsync;
   * rejects with StoreUnavailableError (and changes nothing) when the disk fails.
   */
  write(ops: readonly WriteOp[]): Promise<void> {
    if (this.closing) return Promise.reject(new StoreClosedError());
    if (ops.length === 0) return Promise.resolve();
    const invalid = ops.find((op) => op.op === 'put' && (typeof op.data !== 'object' || op.data === null || op.data.id !== op.id));
    // Such a line would be refused as damaged at the next start; refuse it now instead.
    if (invalid) return Promise.reject(new TypeError(`a put's data.id must equal its id (${invalid.collection}/${invalid.id})`));
    if (this.dataDir === null) {
      this.apply(ops);
      this.counters.writes += ops.length;
      return Promise.resolve();
    }
    // Serialised now, so a caller mutating its objects later cannot change what is logged.
    const bytes = Buffer.from(encodeWrite(ops));
    return new Promise((resolve, reject) => {
      this.queue.push({ kind: 'write', ops, bytes, resolve, reject });
      this.pump();
    });
  }

  /**
   * Rewrites the log to hold only live records (crash-safe). Writes arriving meanwhile wait
   * and go out right after. Rejects with StoreUnavailableError when the disk fails; the log
   * is then unchanged (or already the compacted one) and still loadable either way.
   */
  compact(): Promise<{ bytesBefore: number; bytesAfter: number; records: number }> {
    if (this.dataDir === null && !this.closing) {
      const records = this.stats().liveRecords;
      return Promise.resolve({ bytesBefore: 0, bytesAfter: 0, records });
    }
    return this.runExclusive(async () => {
      const bytesBefore = this.logBytes;
      try {
        await this.rewriteLog();
      } catch (error) {
        throw new StoreUnavailableError(error);
      }
      return { bytesBefore, bytesAfter: this.logBytes, records: this.counters.opsInLog };
    });
  }

  /** A consistent copy of every live record, in log format (header first), for backups. */
  snapshot(): Promise<Buffer[]> {
    return this.runExclusive(async () => this.serializeLiveRecords());
  }

  stats(): StoreStats {
    let liveRecords = 0;
    for (const records of this.collections.values()) liveRecords += records.size;
    return {
      ...this.counters,
      liveRecords,
      logBytes: this.logBytes,
      writable: this.lastWriteError === null,
      lastWriteError: this.lastWriteError,
    };
  }

  /** Refuses new writes, waits for queued ones, closes the log and releases the lock. */
  close(): Promise<void> {
    this.closed ??= this.closeOnce();
    return this.closed;
  }

  private async closeOnce(): Promise<void> {
    this.closing = true;
    try {
      if (this.dataDir !== null) await this.enqueueTask(async () => {});
      await this.handle?.close();
    } finally {
      this.handle = null;
      this.releaseLock();
    }
  }

  private runExclusive<T>(work: () => Promise<T>): Promise<T> {
    if (this.closing) return Promise.reject(new StoreClosedError());
    if (this.dataDir === null) return work();
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
        // Every write queued so far, up to the next task, shares one write and one fsync.
        let end = 1;
        while (end < this.queue.length && this.queue[end]!.kind === 'write') end += 1;
        const batch = this.queue.splice(0, end) as Array<Extract<QueueItem, { kind: 'write' }>>;
        await this.commitBatch(batch);
      }
    } finally {
      this.pumping = false;
    }
  }

  private async commitBatch(batch: Array<Extract<QueueItem, { kind: 'write' }>>): Promise<void> {
    const bytes = batch.length === 1 ? batch[0]!.bytes : Buffer.concat(batch.map((item) => item.bytes));
    try {
      await this.finishLogSwitch();
      const handle = this.handle!;
      if (this.mustTruncate) {
        await handle.truncate(this.logBytes);
        this.mustTruncate = false;
      }
      await handle.write(bytes, this.logBytes);
      await handle.sync();
    } catch (error) {
      // Nothing of the batch is acknowledged; cut what may have reached the file so no half
      // record stays behind. If even that fails, try again before the next write.
      this.mustTruncate = true;
      if (!this.mustReopen) {
        try {
          await this.handle!.truncate(this.logBytes);
          await this.handle!.sync();
          this.mustTruncate = false;
        } catch {
          // keep mustTruncate
        }
      }
      this.lastWriteError = (error as Error)?.message ?? String(error);
      const failure = new StoreUnavailableError(error);
      for (const item of batch) item.reject(failure);
      return;
    }
    this.lastWriteError = null;
    this.logBytes += bytes.length;
    this.counters.fsyncs += 1;
    this.counters.batches += 1;
    for (const item of batch) {
      this.apply(item.ops);
      this.counters.writes += item.ops.length;
      this.counters.opsInLog += item.ops.length;
    }
    for (const item of batch) item.resolve();
    this.maybeScheduleCompaction();
  }

  /** After a compaction's rename: write to the new file, and only once its name is durable. */
  private async finishLogSwitch(): Promise<void> {
    if (this.mustReopen) {
      const fresh = await this.fileSystem.open(this.logPath!);
      const stale = this.handle;
      this.handle = fresh;
      this.mustReopen = false;
      await stale?.close().catch(() => {});
    }
    if (this.mustSyncDirectory) {
      await this.fileSystem.syncDirectory(this.dataDir!);
      this.mustSyncDirectory = false;
    }
  }

  private apply(ops: readonly WriteOp[]): void {
    for (const op of ops) {
      let records = this.collections.get(op.collection);
      if (!records) {
        records = new Map();
        this.collections.set(op.collection, records);
      }
      const before = records.get(op.id);
      let after: StoredRecord | undefined;
      if (op.op === 'put') {
        after = op.data;
        records.set(op.id, after);
      } else {
        records.delete(op.id);
      }
      for (const listener of this.listeners) {
        // The write is already durable: a failing listener must not undo or stall it.
        try {
          listener({ collection: op.collection, id: op.id, before, after });
        } catch (error) {
          this.warn(`A store change listener failed on ${op.collection}/${op.id}: ${(error as Error)?.message ?? String(error)}`);
        }
      }
    }
  }

  private maybeScheduleCompaction(): void {
    if (this.compactionQueued || this.closing || this.counters.opsInLog < this.compactAtOps) return;
    if (this.stats().liveRecords * 2 >= this.counters.opsInLog) return;
    this.compactionQueued = true;
    this.compact()
      .catch((error: Error) => this.warn(`Log compaction failed (the log is still complete and loadable): ${error.message}`))
      .finally(() => {
        this.compactionQueued = false;
      });
  }

  /**
   * Every live record in log format, header first, encoded in slices with a turn of the event
   * loop between them: a million records take seconds to encode, and requests must not wait
   * for all of them. Nothing changes meanwhile: writes are applied only by the queue, which
   * is held by the task (compaction or backup) calling this. A memory-only store applies
   * writes at once, so it encodes in one go to stay consistent.
   */
  private async serializeLiveRecords(): Promise<Buffer[]> {
    const chunks: Buffer[] = [Buffer.from(headerLine(new Date(this.now()).toISOString()))];
    let pending: string[] = [];
    for (const [collection, records] of this.collections) {
      for (const record of records.values()) {
        pending.push(encodeWrite([{ op: 'put', collection, id: record.id, data: record }]));
        if (pending.length === RECORDS_PER_SLICE) {
          chunks.push(Buffer.from(pending.join('')));
          pending = [];
          if (this.dataDir !== null) await nextTurn();
        }
      }
    }
    if (pending.length > 0) chunks.push(Buffer.from(pending.join('')));
    return chunks;
  }

  /**
   * Temp file in the same directory → fsync → rename over the log → fsync the directory.
   * Before the rename a crash leaves the old log (and a temp file discarded at start); after
   * it, the new one. Either holds every acknowledged record.
   */
  private async rewriteLog(): Promise<void> {
    const dataDir = this.dataDir!;
    const logPath = this.logPath!;
    const tempPath = join(dataDir, COMPACT_TEMP_NAME);
    // A failed earlier switch must be finished first: the live records must be durable
    // in the current log before it can be replaced.
    await this.finishLogSwitch();
    const chunks = await this.serializeLiveRecords();
    await this.fileSystem.remove(tempPath);
    const temp = await this.fileSystem.create(tempPath);
    let size = 0;
    try {
      for (const chunk of chunks) {
        await temp.write(chunk, size);
        size += chunk.length;
      }
      await temp.sync();
    } catch (error) {
      await temp.close().catch(() => {});
      await this.fileSystem.remove(tempPath).catch(() => {});
      throw error;
    }
    try {
      await temp.close();
      await this.fileSystem.rename(tempPath, logPath);
    } catch (error) {
      // A rename can report a failure yet have happened (a network file system): then the
      // new log is in place and the old handle must not be written again.
      if (existsSync(tempPath)) {
        await this.fileSystem.remove(tempPath).catch(() => {});
        throw error;
      }
      if (!existsSync(logPath)) throw error;
      this.warn(`Log compaction: the rename reported "${(error as Error)?.message ?? String(error)}" but took place; carrying on with the new log.`);
    }
    // The new log is in place: from here on every append must go to it, whatever fails next.
    this.mustReopen = true;
    this.mustSyncDirectory = true;
    this.logBytes = size;
    this.mustTruncate = false;
    this.counters.opsInLog = this.stats().liveRecords;
    this.counters.compactions += 1;
    await this.finishLogSwitch();
  }
}

/** A new log is born complete: header written to a temp file, fsynced, renamed into place. */
async function createLogFile(fileSystem: FileSystem, dataDir: string, logPath: string, now: () => number): Promise<void> {
  const tempPath = join(dataDir, CREATE_TEMP_NAME);
  await fileSystem.remove(tempPath);
  const temp = await fileSystem.create(tempPath);
  try {
    await temp.write(Buffer.from(headerLine(new Date(now()).toISOString())), 0);
    await temp.sync();
  } finally {
    await temp.close();
  }
  await fileSystem.rename(tempPath, logPath);
  await fileSystem.syncDirectory(dataDir);
}

/**
 * A temp file beside the log means a compaction, creation or repair stopped before its rename:
 * the log itself is whole, so the temp file is deleted unread.
 */
async function discardLeftoverTempFiles(fileSystem: FileSystem, dataDir: string, warn: (message: string) => void): Promise<void> {
  for (const name of readdirSync(dataDir)) {
    if (!name.startsWith(`${LOG_FILE_NAME}.`) || !name.endsWith(TEMP_SUFFIX)) continue;
    const path = join(dataDir, name);
    let size = 0;
    try {
      size = statSync(path).size;
      await fileSystem.remove(path);
      warn(`Discarded ${path} (${size} bytes), left by an interrupted compaction or repair; the log itself is complete.`);
    } catch (error) {
      warn(`Ignoring ${path} (${size} bytes), left by an interrupted compaction or repair (could not delete it: ${(error as Error).message}); the log itself is complete.`);
    }
  }
}
