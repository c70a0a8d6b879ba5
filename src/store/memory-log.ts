// The memory-only mode's log: it keeps nothing, so every append "commits" at once, a start
// loads nothing, a compaction has nothing to drop and no earlier versions exist. Writes still
// pass through the store's queue like any other, so the memory-only server decides writes
// exactly as the file-backed one does.

import type { StoredRecord } from './format.ts';
import type { AppendOutcome, CompactResult, LiveCompactionSource, LoadSink, Log, LogEntry, LogStats } from './log.ts';

export class MemoryLog implements Log {
  private nextVersion = 2;

  async load(_sink: LoadSink): Promise<{ lastVersion: number }> {
    return { lastVersion: 1 };
  }

  async append(entries: readonly LogEntry[]): Promise<AppendOutcome[]> {
    return entries.map(() => ({ version: this.nextVersion++ }));
  }

  /** Nothing kept, nothing to drop: it takes its turn in the queue (after the writes before it) and ends. */
  compact(source: LiveCompactionSource): Promise<CompactResult> {
    return source.exclusive(async () => ({ bytesBefore: 0, bytesAfter: 0 }));
  }

  async earlierVersions(_collection: string, _id: string): Promise<StoredRecord[]> {
    return [];
  }

  stats(): LogStats {
    return { opsInLog: 0, logBytes: 0, fsyncs: 0, compactions: 0, lastWriteError: null };
  }

  async close(): Promise<void> {}
}
