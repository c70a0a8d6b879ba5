// What GET /readyz tries (src/health/readiness.ts asks): whether the disk takes writes, learnt by
// creating, writing, fsyncing and removing a small probe file beside the log (at most once a
// second; callers meanwhile share the last answer), so a full, read-only or failing disk fails
// the probe and readiness returns by itself once it recovers; and, with Redis, whether the rate
// limiter answers a look that counts nothing.

import { join } from 'node:path';
import { LOG_FILE_NAME, TEMP_SUFFIX } from '../store/format.ts';
import type { FileSystem } from '../store/files.ts';
import type { RateLimiter } from '../limits/rate-limiter.ts';

/** Named like the store's temp files, so a leftover one is removed at the next start. */
const PROBE_NAME = `${LOG_FILE_NAME}.probe${TEMP_SUFFIX}`;
const PROBE_INTERVAL_MS = 1_000;

export interface DiskProbeOptions {
  fileSystem: FileSystem;
  dataDir: string;
  monotonicNow: () => number;
}

export class DiskProbe {
  private readonly options: DiskProbeOptions;
  private lastProbe: { at: number; problem: string | null } | null = null;
  private probing: Promise<string | null> | null = null;

  constructor(options: DiskProbeOptions) {
    this.options = options;
  }

  /** Why the data dir does not take writes, or null when it does (probed at most once a second). */
  async problem(): Promise<string | null> {
    const last = this.lastProbe;
    if (last !== null && this.options.monotonicNow() - last.at < PROBE_INTERVAL_MS) return last.problem;
    this.probing ??= this.probe().finally(() => {
      this.probing = null;
    });
    return this.probing;
  }

  private async probe(): Promise<string | null> {
    const { fileSystem, dataDir, monotonicNow } = this.options;
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
