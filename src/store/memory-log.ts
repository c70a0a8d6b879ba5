// The memory-only mode's log: it keeps nothing, so every append "commits" at once and a start
// loads nothing. Writes still pass through the store's queue like any other, so the memory-only
// server decides writes exactly as the file-backed one does.

import type { AppendOutcome, CompactResult, LoadSink, Log, LogEntry, LogStats, PulledWrite } from './log.ts';

export class MemoryLog implements Log {
  private nextVersion = 2;

  async load(_sink: LoadSink): Promise<{ lastVersion: number }> {
    return { lastVersion: 1 };
  }

  async append(entries: readonly LogEntry[]): Promise<AppendOutcome[]> {
    return entries.map(() => ({ version: this.nextVersion++ }));
  }

  async pull(_apply: (write: PulledWrite) => void): Promise<void> {}

  onOthersWrote(_callback: () => void): void {}

  async compact(_snapshot: () => Promise<Buffer[]>): Promise<CompactResult> {
    return { bytesBefore: 0, bytesAfter: 0 };
  }

  stats(): LogStats {
    return { opsInLog: 0, logBytes: 0, fsyncs: 0, compactions: 0, lastWriteError: null };
  }

  async close(): Promise<void> {}
}
