// GET /readyz: ready when the store accepts writes and the server is not stopping. Whether the
// disk takes writes is learnt by trying (src/health/probes.ts `DiskProbe`), whose code is loaded
// at the first readiness check: most servers are never asked. With many instances, the shared
// back-ends are watched too: the store's log (PostgreSQL unreachable, this instance not caught
// up with the others) and the rate limiter (Redis unreachable, `limiterAnswers`); each recovers
// by itself.

import type { FileSystem } from '../store/files.ts';
import type { DiskProbe } from './probes.ts';

export interface ReadinessOptions {
  fileSystem: FileSystem;
  /** null: a memory-only store, always writable. */
  dataDir: string | null;
  monotonicNow: () => number;
}

export interface ReadinessReport {
  ready: boolean;
  reasons: string[];
}

export class Readiness {
  private readonly options: ReadinessOptions;
  private stopping = false;
  private readonly watched: Array<() => string[] | Promise<string[]>> = [];
  /** The data dir's probe, made at the first check (none for a memory-only store). */
  private diskProbe: Promise<DiskProbe> | null = null;

  constructor(options: ReadinessOptions) {
    this.options = options;
  }

  /** From now on the server reports not ready (it is stopping). */
  markStopping(): void {
    this.stopping = true;
  }

  /** Adds a check whose answer (the problems, empty when none) joins the reasons. */
  watch(check: () => string[] | Promise<string[]>): void {
    this.watched.push(check);
  }

  async check(): Promise<ReadinessReport> {
    const reasons: string[] = [];
    if (this.stopping) reasons.push('the server is stopping');
    const [problem, ...watched] = await Promise.all([this.diskProblem(), ...this.watched.map((check) => check())]);
    if (problem !== null) reasons.push(`the store does not accept writes: ${problem}`);
    for (const problems of watched) reasons.push(...problems);
    return { ready: reasons.length === 0, reasons };
  }

  private async diskProblem(): Promise<string | null> {
    const { dataDir } = this.options;
    if (dataDir === null) return null;
    this.diskProbe ??= import('./probes.ts').then(({ DiskProbe }) => new DiskProbe({ ...this.options, dataDir }));
    return (await this.diskProbe).problem();
  }
}
