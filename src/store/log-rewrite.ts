// The new log file a compaction writes beside the live one: created fresh under the log's temp
// name, filled in order (the records, then the writes carried over from the live log), made
// durable, and then either renamed over the log by the file log or discarded. It counts its
// bytes and lines so the log knows its size and operations after the switch without reading
// it back.

import type { FileSystem, LogHandle } from './files.ts';

/**
 * Written bytes are fsynced every this many, not all at the end: otherwise hundreds of
 * megabytes wait in the page cache and the log's own fdatasyncs (every acknowledged write)
 * queue behind their writeback.
 */
const SYNC_EVERY_BYTES = 8 * 1024 * 1024;

export class LogRewrite {
  readonly path: string;
  private readonly fileSystem: FileSystem;
  private handle: LogHandle | null;
  /** Bytes written so far (the next chunk goes here). */
  bytes = 0;
  /** Newline-ended lines written so far (the header and one per operation line). */
  lines = 0;
  /** Bytes not yet fsynced. */
  private unsynced = 0;

  private constructor(fileSystem: FileSystem, path: string, handle: LogHandle) {
    this.fileSystem = fileSystem;
    this.path = path;
    this.handle = handle;
  }

  /** Removes a stale file of that name and creates the new one (mode 0600). */
  static async create(fileSystem: FileSystem, path: string): Promise<LogRewrite> {
    await fileSystem.remove(path);
    return new LogRewrite(fileSystem, path, await fileSystem.create(path));
  }

  async write(chunk: Buffer): Promise<void> {
    if (chunk.length === 0) return;
    await this.open().write(chunk, this.bytes);
    this.bytes += chunk.length;
    this.unsynced += chunk.length;
    this.lines += countNewlines(chunk);
    if (this.unsynced >= SYNC_EVERY_BYTES) await this.sync();
  }

  /** fsyncs what was written since the last fsync (nothing to do when nothing was). */
  async sync(): Promise<void> {
    if (this.unsynced === 0) return;
    await this.open().sync();
    this.unsynced = 0;
  }

  /** Durable and closed: ready to be renamed over the log. */
  async finish(): Promise<void> {
    await this.sync();
    const handle = this.open();
    this.handle = null;
    await handle.close();
  }

  /** Closes and deletes the file; never throws (the log itself is whole either way). */
  async discard(): Promise<void> {
    const handle = this.handle;
    this.handle = null;
    await handle?.close().catch(() => {});
    await this.fileSystem.remove(this.path).catch(() => {});
  }

  private open(): LogHandle {
    if (this.handle === null) throw new Error(`the compaction file ${this.path} is closed`);
    return this.handle;
  }
}

function countNewlines(chunk: Buffer): number {
  let count = 0;
  for (let index = chunk.indexOf(0x0a); index !== -1; index = chunk.indexOf(0x0a, index + 1)) count += 1;
  return count;
}
