// The one crash-safe way to write a whole file, shared by the log (creation, compaction), its
// offline repair and the CLI's backup download: write a temporary file in the same directory,
// fsync it, rename it over the target, fsync the directory. A crash at any point leaves either
// the old file or the new one, never a mix; a temporary file left behind is only ever garbage.

import { randomBytes } from 'node:crypto';
import { basename, dirname, join } from 'node:path';
import type { FileSystem } from './files.ts';

/** Bytes to write: Buffers, strings or a byte stream (a fetch body), in order. */
export type Chunks = Iterable<Uint8Array | string> | AsyncIterable<Uint8Array | string>;

export interface CrashSafeWriteOptions {
  /**
   * The temporary file's path (a stale one is removed first). Default: a fresh hidden name
   * beside the target. The log names its own so its start-up can recognise leftovers.
   */
  tempPath?: string;
  /** Runs after the temporary file is durable and before it replaces the target; throwing keeps the target as it was. */
  beforeReplace?: (tempPath: string) => void | Promise<void>;
}

/**
 * Replaces `target` with `chunks`, crash-safely; returns the bytes written. The file is made
 * with mode 0600 (logs and backups hold emails and key hashes).
 * @example await crashSafeWriteFile(nodeFileSystem, './backup.log', response.body);
 */
export async function crashSafeWriteFile(fileSystem: FileSystem, target: string, chunks: Chunks, options: CrashSafeWriteOptions = {}): Promise<number> {
  const tempPath = options.tempPath ?? join(dirname(target), `.${basename(target)}.${randomBytes(6).toString('hex')}.tmp`);
  if (options.tempPath !== undefined) await fileSystem.remove(tempPath);
  const bytes = await writeFileDurably(fileSystem, tempPath, chunks);
  try {
    await options.beforeReplace?.(tempPath);
    await fileSystem.rename(tempPath, target);
  } catch (error) {
    await fileSystem.remove(tempPath).catch(() => {});
    throw error;
  }
  await fileSystem.syncDirectory(dirname(target));
  return bytes;
}

/**
 * Creates `path` (which must not exist), writes `chunks` and fsyncs it; on failure the partial
 * file is removed. Returns the bytes written. The first half of `crashSafeWriteFile`, for
 * callers that rename by themselves (compaction) or write a new file that replaces nothing.
 */
export async function writeFileDurably(fileSystem: FileSystem, path: string, chunks: Chunks): Promise<number> {
  const handle = await fileSystem.create(path);
  let position = 0;
  let closing = false;
  try {
    for await (const chunk of chunks) {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      await handle.write(bytes, position);
      position += bytes.length;
    }
    await handle.sync();
    closing = true;
    await handle.close();
  } catch (error) {
    if (!closing) await handle.close().catch(() => {});
    await fileSystem.remove(path).catch(() => {});
    throw error;
  }
  return position;
}
