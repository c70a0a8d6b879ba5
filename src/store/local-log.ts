// The log of a single process: the JSON-lines file in DATA_DIR, or nothing kept at all for the
// memory-only mode (DATA_DIR=:memory:). The shared back-end (PostgreSQL) is chosen beside this
// one in src/backends/open-backends.ts.

import type { FileSystem } from './files.ts';
import { FileLog } from './file-log.ts';
import type { Log } from './log.ts';
import { MemoryLog } from './memory-log.ts';

export interface LocalLogOptions {
  /** null: memory only, nothing kept. */
  dataDir: string | null;
  fileSystem?: FileSystem;
  warn: (message: string) => void;
  now: () => number;
}

/** Opens (or creates) the file log in `dataDir`, taking its lock; or the memory-only log. */
export async function openLocalLog(options: LocalLogOptions): Promise<Log> {
  if (options.dataDir === null) return new MemoryLog();
  return FileLog.open({ dataDir: options.dataDir, fileSystem: options.fileSystem, warn: options.warn, now: options.now });
}
