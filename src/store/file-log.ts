// The log as one JSON-lines file in the data directory (the default back-end; see log.ts for
// the contract). One server writes it, holding the directory's LOCK: every entry it is given
// was decided on the state it already holds, so it assigns versions and needs no read check,
// and there are no other servers to follow (no InstanceSync).
// A batch is appended and fsynced as one write (group commit); a failed write is cut off again
// so no half record stays. Compaction rewrites the file beside live writes, crash-safely (temp,
// fsync, rename, fsync the directory; the temp file is log-rewrite.ts).

import { chmodSync, createReadStream, existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { crashSafeWriteFile } from './crash-safe-write.ts';
import { nodeFileSystem, type FileSystem, type LogHandle } from './files.ts';
import { decodeLine, encodeWrite, headerLine, LOG_FILE_NAME, TEMP_SUFFIX, type StoredRecord } from './format.ts';
import { MAX_LINE_BYTES } from './lines.ts';
import { acquireDataDirLock } from './lock.ts';
import type { AppendOutcome, CompactionHooks, CompactResult, LiveCompactionSource, LoadSink, Log, LogEntry, LogStats } from './log.ts';
import { LogRewrite } from './log-rewrite.ts';
import { LOADED_VERSION, replayLog } from './replay.ts';

export interface FileLogOptions {
  dataDir: string;
  fileSystem?: FileSystem;
  warn: (message: string) => void;
  now: () => number;
}

const COMPACT_TEMP_NAME = `${LOG_FILE_NAME}.compact${TEMP_SUFFIX}`;
const CREATE_TEMP_NAME = `${LOG_FILE_NAME}.create${TEMP_SUFFIX}`;
/** A compaction switches once at most this much is left to carry (written with writes held). */
const CARRIED_AT_SWITCH_BYTES = 256 * 1024;
/** Rounds of carrying before the switch, so writes faster than the copy cannot hold it off forever. */
const MAX_CARRY_ROUNDS = 8;

export class FileLog implements Log {
  private readonly dataDir: string;
  private readonly logPath: string;
  private readonly fileSystem: FileSystem;
  private readonly warn: (message: string) => void;
  private readonly releaseLock: () => void;
  private handle: LogHandle | null;
  /** Bytes of the log known to be valid and durable; the next batch is written here. */
  private logBytes = 0;
  /** The file may hold bytes past logBytes (a torn tail or a failed write) to cut before writing. */
  private mustTruncate = false;
  /** A compaction renamed a new log into place: the handle still points at the old file. */
  private mustReopen = false;
  /** A compaction's rename is not yet known durable: fsync the directory before acknowledging. */
  private mustSyncDirectory = false;
  /**
   * While a compaction runs, from its snapshot point: the batches acknowledged since, still to
   * be carried into the new log (as Redis keeps a rewrite buffer). Null when none runs.
   */
  private carried: { chunks: Buffer[]; bytes: number } | null = null;
  /**
   * The old logs' handles, closing after their switches. Closing the last handle of a file
   * renamed over frees all its blocks, hundreds of milliseconds for a log of gigabytes, so the
   * write that finishes the switch does not wait for it (close() waits for every one).
   */
  private closingStale: Promise<void> = Promise.resolve();
  private nextVersion = LOADED_VERSION + 1;
  private counters = { opsInLog: 0, fsyncs: 0, compactions: 0 };
  private lastWriteError: string | null = null;

  private constructor(options: FileLogOptions, fileSystem: FileSystem, handle: LogHandle, releaseLock: () => void) {
    this.dataDir = options.dataDir;
    this.logPath = join(options.dataDir, LOG_FILE_NAME);
    this.fileSystem = fileSystem;
    this.warn = options.warn;
    this.handle = handle;
    this.releaseLock = releaseLock;
  }

  /**
   * Takes the directory's lock and opens (or creates) its log; `load` then reads it.
   * Throws DataDirLockedError with a message for the operator.
   */
  static async open(options: FileLogOptions): Promise<FileLog> {
    const fileSystem = options.fileSystem ?? nodeFileSystem;
    const { dataDir } = options;
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    closeCheckoutPlaceholder(dataDir);
    warnIfOthersCanList(dataDir, options.warn);
    const releaseLock = await acquireDataDirLock(dataDir);
    try {
      const logPath = join(dataDir, LOG_FILE_NAME);
      await discardLeftoverTempFiles(fileSystem, dataDir, options.warn);
      if (!existsSync(logPath)) await createLogFile(fileSystem, dataDir, logPath, options.now);
      const handle = await fileSystem.open(logPath);
      return new FileLog(options, fileSystem, handle, releaseLock);
    } catch (error) {
      releaseLock();
      throw error;
    }
  }

  /** Throws LogDamagedError or LogVersionError; never writes (a torn tail is cut before the next append). */
  async load(sink: LoadSink): Promise<{ lastVersion: number }> {
    const replay = replayLog(this.logPath, this.dataDir, this.warn, sink);
    this.logBytes = replay.goodLength;
    this.mustTruncate = replay.tornTailBytes > 0;
    this.counters.opsInLog = replay.opsInLog;
    return { lastVersion: LOADED_VERSION };
  }

  async append(entries: readonly LogEntry[]): Promise<AppendOutcome[]> {
    const lines = entries.map((entry) => encodeWrite(entry.ops));
    // A longer line would read back as damage (lines.ts): refuse the write rather than lose it.
    const tooLong = lines.find((line) => line.length * 3 > MAX_LINE_BYTES && Buffer.byteLength(line) > MAX_LINE_BYTES);
    if (tooLong !== undefined) throw new Error(`a write of ${Buffer.byteLength(tooLong)} bytes is longer than the largest the log takes (${MAX_LINE_BYTES} bytes)`);
    const bytes = Buffer.from(lines.join(''));
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
      throw error;
    }
    this.lastWriteError = null;
    this.logBytes += bytes.length;
    if (this.carried !== null) {
      this.carried.chunks.push(bytes);
      this.carried.bytes += bytes.length;
    }
    this.counters.fsyncs += 1;
    return entries.map((entry) => {
      this.counters.opsInLog += entry.ops.length;
      return { version: this.nextVersion++ };
    });
  }

  /**
   * The one-shot rewrite (migrate.ts fills a new data dir this way): the log becomes exactly
   * `chunks` (log lines, header first), by the same crash-safe steps as a compaction, with
   * nothing to carry since nobody writes meanwhile.
   */
  async rewriteFrom(chunks: readonly Buffer[]): Promise<CompactResult> {
    return this.compact({
      exclusive: (work) => work(),
      records: async (write) => {
        for (const chunk of chunks) await write(chunk);
      },
      hooks: {},
    });
  }

  /**
   * Rewrites the log to its live records while writes go on (as Redis rewrites its append-only
   * file): with writes held only for a moment, the snapshot point is marked and from then on
   * every acknowledged batch is also kept aside; the records are written to a temp file beside
   * the log with writes going on, then the batches kept aside are carried after them; last, with
   * writes held again, the few batches since, an fsync, the rename over the log and an fsync of
   * the directory. Until the rename a crash leaves the old log, which every acknowledged write
   * went to (and a temp file discarded at start); after it, the new one, which holds the
   * records and, after them, every write acknowledged since the snapshot point (a record the
   * records show newer than the snapshot point is also among those writes, later in the file,
   * and wins at replay).
   */
  async compact(source: LiveCompactionSource): Promise<CompactResult> {
    const { hooks } = source;
    const tempPath = join(this.dataDir, COMPACT_TEMP_NAME);
    // 1. The snapshot point. A failed earlier switch is finished first: the live records must
    // be durable in the current log before it can be replaced.
    await source.exclusive(async () => {
      if (this.carried !== null) throw new Error('a compaction of this log is already running');
      await this.finishLogSwitch();
      this.carried = { chunks: [], bytes: 0 };
    });
    let rewrite: LogRewrite | null = null;
    try {
      await hooks.afterSnapshot?.();
      // 2. The records, writes going on.
      rewrite = await LogRewrite.create(this.fileSystem, tempPath);
      const target = rewrite;
      let slices = 0;
      await source.records(async (chunk) => {
        await target.write(chunk);
        slices += 1;
        // The header and one slice of records are written: the file is half made.
        if (slices === 2) await hooks.writingRecords?.();
      });
      // 3. The writes acknowledged meanwhile, writes going on, until little is left for the switch.
      await this.carryInto(rewrite);
      await hooks.carryingWrites?.();
      for (let round = 0; round < MAX_CARRY_ROUNDS && this.carried!.bytes > CARRIED_AT_SWITCH_BYTES; round += 1) await this.carryInto(rewrite);
      await rewrite.sync();
      // 4. The switch, writes held: the last carried writes, then the new file replaces the log.
      return await source.exclusive(() => this.switchTo(target, hooks));
    } catch (error) {
      this.carried = null;
      await rewrite?.discard();
      throw error;
    }
  }

  /** Moves the writes kept aside so far into the new file (in the order they were acknowledged). */
  private async carryInto(rewrite: LogRewrite): Promise<void> {
    const carried = this.carried!;
    while (carried.chunks.length > 0) {
      const chunks = carried.chunks.splice(0, carried.chunks.length);
      carried.bytes = 0;
      await rewrite.write(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
    }
  }

  /** Run with writes held: nothing is appended to the old log from here on. */
  private async switchTo(rewrite: LogRewrite, hooks: CompactionHooks): Promise<CompactResult> {
    const bytesBefore = this.logBytes;
    await this.carryInto(rewrite);
    this.carried = null;
    await rewrite.finish();
    await hooks.beforeRename?.();
    try {
      await this.fileSystem.rename(rewrite.path, this.logPath);
    } catch (error) {
      // A rename can report a failure yet have happened (a network file system): then the
      // new log is in place and the old handle must not be written again.
      if (existsSync(rewrite.path)) throw error;
      if (!existsSync(this.logPath)) throw error;
      this.warn(`Log compaction: the rename reported "${(error as Error)?.message ?? String(error)}" but took place; carrying on with the new log.`);
    }
    // The new log is in place: from here on every append must go to it, whatever fails next.
    this.mustReopen = true;
    this.mustSyncDirectory = true;
    this.logBytes = rewrite.bytes;
    this.mustTruncate = false;
    // Every line but the header is one operation line.
    this.counters.opsInLog = Math.max(0, rewrite.lines - 1);
    this.counters.compactions += 1;
    await hooks.afterRename?.();
    await this.finishLogSwitch();
    return { bytesBefore, bytesAfter: rewrite.bytes };
  }

  /**
   * Reads the file as it is now, without holding up writes: an open file keeps reading the log
   * it opened even if a compaction renames a new one into place meanwhile. Only lines naming the
   * id are decoded; a torn or damaged line is skipped (this is a search, not a load).
   */
  async earlierVersions(collection: string, id: string): Promise<StoredRecord[]> {
    const needle = `"id":${JSON.stringify(id)}`;
    const found: StoredRecord[] = [];
    const lines = createInterface({ input: createReadStream(this.logPath), crlfDelay: Infinity });
    for await (const line of lines) {
      if (!line.includes(needle)) continue;
      let ops;
      try {
        ops = decodeLine(line);
      } catch {
        continue;
      }
      for (const op of ops) if (op.op === 'put' && op.collection === collection && op.id === id) found.push(op.data);
    }
    return found;
  }

  stats(): LogStats {
    return { ...this.counters, logBytes: this.logBytes, lastWriteError: this.lastWriteError };
  }

  async close(): Promise<void> {
    try {
      await this.closingStale;
      await this.handle?.close();
    } finally {
      this.handle = null;
      this.releaseLock();
    }
  }

  /** After a compaction's rename: write to the new file, and only once its name is durable. */
  private async finishLogSwitch(): Promise<void> {
    if (this.mustReopen) {
      const fresh = await this.fileSystem.open(this.logPath);
      const stale = this.handle;
      this.handle = fresh;
      this.mustReopen = false;
      if (stale !== null) {
        const closing = stale.close().catch(() => {});
        this.closingStale = this.closingStale.then(() => closing);
      }
    }
    if (this.mustSyncDirectory) {
      await this.fileSystem.syncDirectory(this.dataDir);
      this.mustSyncDirectory = false;
    }
  }
}

/** A new log is born complete: its header line, written crash-safely. */
async function createLogFile(fileSystem: FileSystem, dataDir: string, logPath: string, now: () => number): Promise<void> {
  await crashSafeWriteFile(fileSystem, logPath, [headerLine(new Date(now()).toISOString())], { tempPath: join(dataDir, CREATE_TEMP_NAME) });
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

/**
 * A checkout ships `data/` holding only its `.gitignore`, and git makes that folder with the
 * umask (usually 0755). Nobody chose that mode, so the first start closes it as it would a
 * folder it created itself; a folder holding anything else keeps its mode.
 */
function closeCheckoutPlaceholder(dataDir: string): void {
  if (process.platform === 'win32') return;
  const entries = readdirSync(dataDir);
  if (entries.length === 1 && entries[0] === '.gitignore') chmodSync(dataDir, 0o700);
}

/**
 * The server creates its data dir 0700, but leaves the mode of one it is given alone (the
 * operator may share it on purpose); its files are 0600 either way. Others listing it would
 * see file names and sizes, so say how to close it.
 */
function warnIfOthersCanList(dataDir: string, warn: (message: string) => void): void {
  if (process.platform === 'win32') return;
  const mode = statSync(dataDir).mode & 0o777;
  if ((mode & 0o077) === 0) return;
  warn(`the data directory ${dataDir} is mode 0${mode.toString(8)}: other users of this machine can list it (its files are 0600). "chmod 700 ${dataDir}" closes it.`);
}
