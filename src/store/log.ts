// What the store needs from where its records are kept: the contract every log back-end keeps
// whole. The store holds every record in memory and decides each write there; the log makes
// decided writes durable, gives them back at start, drops what is superseded, and finds the
// earlier versions of a record for erasure. Back-ends: FileLog (the JSON-lines file, one server
// per data dir), MemoryLog (keeps nothing: the memory-only mode) and PostgresLog
// (src/backends/postgres/, shared by many servers). What only many servers sharing one log need
// (others' writes, read-your-writes) is not here: it is InstanceSync (instance-sync.ts), given
// to the store beside the log only in that setup.
//
// The contract:
//
// 1. Versions. Every write that commits gets a version from one increasing sequence per store
//    (a number > 1; 1 is what a back-end may give every record it loads when it has no better
//    one, 0 means "absent"). A record's version is that of the last write that put it. The back-
//    end assigns versions: it returns them from `append` and gives them to `load` (and, shared,
//    to InstanceSync's `pull`).
//
// 2. append(entries) makes a batch durable. Each entry is one write: its ops must land all or
//    none, and `reads` lists what the write was decided on — (collection, id, version) for a
//    record, (collection, null, version) for a whole collection (a scan, e.g. a uniqueness check).
//    A back-end shared by several servers must check, in the same transaction that stores the
//    entry, that every read is still current (the record's version, or for a collection the
//    version of the last write to any of its records, is still the one read) and answer
//    `conflict` for an entry whose reads are stale, storing nothing of it. Entries of one batch
//    are independent: one refused entry does not refuse the others, and their reads never
//    depend on each other's ops (the store sees to that). A back-end with one writer (the file,
//    memory) skips the check and never answers `conflict`: the store decided every entry on the
//    state the log already holds. `append` resolves once every accepted entry is durable (it
//    survives a crash or power loss); it rejects when it cannot tell, and then nothing of the
//    batch may become visible later (truncate it, or roll back). Appends are never concurrent:
//    the store waits for each.
//
// 3. load(sink) gives back every live record with its version, in any order, before anything
//    else is called; it returns the highest version it knows. It must not write (a damaged log
//    stops the start with a message, it is not "fixed").
//
// 4. compact(source) drops what is superseded so the log holds about the live records. The store
//    calls it outside its write queue, with writes going on; the back-end holds the queue
//    (source.exclusive) for what must not run beside an append. The file rewrites itself from
//    source.records, holding the queue only to mark its snapshot point and to switch files, and
//    carries every write acknowledged after the snapshot point into the new content, after the
//    records (source.records may show a record in a state newer than the snapshot point; such a
//    record is also in the carried writes, which come later and win at replay, where the last
//    line for an id wins); either the old or the new content survives a crash, never a mix.
//    PostgreSQL drops old removals and reclaims space holding the queue throughout, so the
//    removals it counts again do not change under it; memory has nothing to drop.
//
// 5. earlierVersions(collection, id): the versions of one record that older, superseded writes
//    the log still holds put, oldest first (erasure looks for earlier personal values in them).
//    A back-end that keeps only each record's latest state (PostgreSQL, memory) answers none.
//
// 6. stats() says what the log holds and did, under names true for the back-end (LogStats).
//
// 7. close() releases what the back-end holds (file handles, the data-dir lock, connections).
//
// 8. Ordered records. A put marked `ordered` holds a `seq` (its place in an order its readers
//    share, such as a user's event log). A log with one writer keeps the `seq` the writer gave:
//    writes are decided and applied one after the other, so that order is the order of the
//    writes. A log shared by many servers sets it at commit instead, in the op's data itself
//    before `append` resolves, so this server's memory and every other server hold the same
//    number: above that of every ordered record acknowledged before the write was decided, the
//    same order on every server; InstanceSync says below which `seq` the order is settled.

import type { StoredRecord, WriteOp } from './format.ts';

/** One record (id) or a whole collection (id null) a write was decided on, at the version seen. */
export interface ReadVersion {
  collection: string;
  id: string | null;
  version: number;
}

export interface LogEntry {
  ops: readonly WriteOp[];
  reads: readonly ReadVersion[];
}

/** Per entry of an append: committed as `version`, or refused because its reads were stale. */
export type AppendOutcome = { version: number } | 'conflict';

export interface LoadSink {
  put(collection: string, record: StoredRecord, version: number): void;
  remove(collection: string, id: string, version: number): void;
}

export interface LogStats {
  /** Operations the log holds, live and superseded (the compaction trigger compares it with the live records). */
  opsInLog: number;
  /** Size of the log file in bytes (0 when nothing is kept; absent for a back-end without one). */
  logBytes?: number;
  /** fsyncs of the log file (absent for a back-end without one). */
  fsyncs?: number;
  /** Batches committed to a database (a back-end that commits rather than fsyncs a file). */
  commits?: number;
  compactions: number;
  /** The last append's failure, null once one succeeds. */
  lastWriteError: string | null;
  /**
   * For a back-end that keeps each record once and remembers removals (PostgreSQL): the removals
   * it keeps, and those a compaction would drop now. The store then counts the log as its live
   * records plus the removals kept, and compacts on the removals that can be dropped.
   */
  removals?: { kept: number; droppable: number };
}

export interface CompactResult {
  bytesBefore: number;
  bytesAfter: number;
}

/**
 * Moments of a compaction beside live writes where a test may hold it (a hook's promise is
 * awaited there) or a crash test kill the process. `afterSnapshot`: the snapshot point is marked
 * and writes go on; `writingRecords`: the records are half written to the new file;
 * `carryingWrites`: the records are written and the writes made meanwhile are being carried;
 * `beforeRename` and `afterRename`: the switch, with writes held (keep a hold there short).
 */
export interface CompactionHooks {
  afterSnapshot?: () => Promise<void>;
  writingRecords?: () => Promise<void>;
  carryingWrites?: () => Promise<void>;
  beforeRename?: () => Promise<void>;
  afterRename?: () => Promise<void>;
}

/** What a back-end gets from the store to compact beside live writes (point 4). */
export interface LiveCompactionSource {
  /** Runs `work` in the store's write queue: no append runs and memory does not change meanwhile. */
  exclusive<T>(work: () => Promise<T>): Promise<T>;
  /**
   * Hands every live record to `write` in the line format (header first), in slices with a turn
   * of the event loop between them, while writes go on; each record as of the moment its slice
   * is made, never older than at the call. Rejects (StoreClosedError) when the store closes.
   * A chunk's bytes are reused for the next slice once `write` resolves: copy them to keep them.
   */
  records(write: (chunk: Buffer) => Promise<void>): Promise<void>;
  hooks: CompactionHooks;
}

/** Where the store's records are kept; every back-end implements all of it (points 1–7 above). */
export interface Log {
  /** Point 3: every live record to `sink`; the highest version known. */
  load(sink: LoadSink): Promise<{ lastVersion: number }>;
  /** Point 2: the batch durable, each entry committed with its version or refused as a conflict. */
  append(entries: readonly LogEntry[]): Promise<AppendOutcome[]>;
  /** Point 4: drops what is superseded, holding the store's queue only where it must. */
  compact(source: LiveCompactionSource): Promise<CompactResult>;
  /** Point 5: every version of the record the log's older writes put, oldest first (none kept: []). */
  earlierVersions(collection: string, id: string): Promise<StoredRecord[]>;
  stats(): LogStats;
  close(): Promise<void>;
}
