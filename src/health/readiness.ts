// GET /readyz: ready when the store accepts writes and the server is not stopping. Whether the
// disk takes writes is learnt by trying: a small probe file beside the log is created, written,
// fsynced and removed (at most once a second; callers meanwhile share the last answer). A full,
// read-only or failing disk fails the probe, and readiness returns by itself once it recovers.
// With many instances, the shared back-ends are watched too: the store's log (PostgreSQL
// unreachable, this instance not caught up with the others) and the rate limiter (Redis
// unreachable, asked with a look that counts nothing); each recovers by itself as well.

import { join } from 'node:path';
import { LOG_FILE_NAME, TEMP_SUFFIX } from '../store/format.ts';
import type { FileSystem } from '../store/files.ts';
import type { RateLimiter } from '../limits/rate-limiter.ts';

/** Named like the store's temp files, so a leftover one is removed at the next start. */
const PROBE_NAME = `${LOG_FILE_NAME}.probe${TEMP_SUFFIX}`;
const PROBE_INTERVAL_MS = 1_000;

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
  private lastProbe: { at: number; problem: string | null } | null = null;
  private probing: Promise<string | null> | null = null;
  private readonly watched: Array<() => string[] | Promise<string[]>> = [];

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
    const { dataDir, monotonicNow } = this.options;
    if (dataDir === null) return null;
    const last = this.lastProbe;
    if (last !== null && monotonicNow() - last.at < PROBE_INTERVAL_MS) return last.problem;
    this.probing ??= this.probe(dataDir).finally(() => {
      this.probing = null;
    });
    return this.probing;
  }

  private async probe(dataDir: string): Promise<string | null> {
    const { fileSystem, monotonicNow } = this.options;
    const path = join(dataDir, PROBE_NAME);
    let problem: string | null = null;
    try {
      await fileSystem.remove(path);
      const handle = await fileSystem.create(path);
      try {
        await handle.write(Buffer.from('probe\n'), 0);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await fileSystem.remove(path);
    } catch (error) {
      problem = (error as Error)?.message ?? String(error);
      await fileSystem.remove(path).catch(() => {});
    }
    this.lastProbe = { at: monotonicNow(), problem };
    return problem;
  }
}

/** How long the limiter may take to answer readiness's look (a client that queues while disconnected would wait for ever). */
const LIMITER_ANSWER_MS = 1_000;

/** A check for Readiness.watch: the limiter answers a look at a window (nothing is counted) within a second. */
export function limiterAnswers(limiter: RateLimiter): () => Promise<string[]> {
  return async () => {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${LIMITER_ANSWER_MS} ms`)), LIMITER_ANSWER_MS);
    });
    try {
      await Promise.race([limiter.peek('readiness-check', 1), late]);
      return [];
    } catch (error) {
      return [`the rate limiter cannot be reached: ${(error as Error)?.message ?? String(error)}`];
    } finally {
      clearTimeout(timer);
    }
  };
}
