// The one place where the deployment is decided: from the configuration, where the records are
// kept (the log), where the rate-limit windows are (the limiters), whether webhook attempts are
// claimed (instances sharing a database each see every delivery) and how usage is read (one
// instance's counts, or every instance's summed). The single-process versions are here, the
// shared ones are opened by shared-records.ts (PostgreSQL) and redis/limiters.ts, each imported
// only when configured with what only many instances need (summed usage, claims on webhook
// attempts); everything else receives what this returns and never asks which it got.

import type { UsageReader } from '../analytics/reader.ts';
import type { UsageCounters } from '../analytics/usage-counters.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { FailureReservations } from '../limits/failure-reservations.ts';
import type { SharedQuotaCounts } from '../analytics/quota-counters.ts';
import type { RateLimiter } from '../limits/rate-limiter.ts';
import { SlidingWindowLimiter } from '../limits/sliding-window.ts';
import { REDELIVERY_WINDOW_MS } from '../webhooks/redelivery.ts';
import type { FileSystem } from '../store/files.ts';
import type { InstanceSync, Watermark } from '../store/instance-sync.ts';
import type { WatermarkBoard } from './postgres/postgres-log.ts';
import type { Log } from '../store/log.ts';
import { openLocalLog } from '../store/local-log.ts';
import type { Store } from '../store/store.ts';
import type { AttemptClaims } from '../webhooks/attempt-claim.ts';

export interface BackendOptions {
  clock: Clock;
  fileSystem: FileSystem;
  warn: (message: string) => void;
  /** How long a webhook send may take; a claim on an attempt lapses some time after it. */
  webhookSendTimeoutMs: number;
}

/** The back-ends named in words true for each, for the start banner and GET /admin/v1/stats. */
export interface BackendDescription {
  /** "file log in ./data", "memory only (nothing kept)", "PostgreSQL at db:5432/marketplace (TLS)" */
  records: string;
  /** "in this process", "Redis at cache:6379 (TLS)" */
  limits: string;
}

export interface Backends {
  log: Log;
  /** Following the other instances that share the log (PostgreSQL); null for one process. */
  instanceSync: InstanceSync | null;
  /** The data directory the instance keeps files in (lock, operator token), or null when none. */
  dataDir: string | null;
  keyLimiter: RateLimiter;
  failedAuthLimiter: RateLimiter;
  /**
   * Places taken before a password or code is checked: in the failed sign-ins per account (10 per
   * 15 minutes) and in failedAuthLimiter's window per address. Shared by every instance (Redis);
   * null in one process, where the portal, which alone signs in, makes its own.
   */
  failureReservations: FailureReservations | null;
  /** Webhook redeliveries per user (60 per hour). */
  redeliveryLimiter: RateLimiter;
  /** Plan quota counts shared by every instance (Redis); null: counted in this process. */
  quotaCounts: SharedQuotaCounts | null;
  /** Suffix each instance gives its usage records when several share a database, else undefined. */
  usageInstanceTag: string | undefined;
  /** How usage is read: this instance's counts, or with every other instance's added. */
  usageReader(counters: UsageCounters, store: Store): UsageReader;
  /** Claims on webhook attempts, when several instances could send the same one; else null. */
  attemptClaims(store: Store): AttemptClaims | null;
  description: BackendDescription;
  /** Closes the limiters' connection (the log is closed by the store). */
  closeLimiters(): void;
}

export const FAILED_AUTH_TRACKED_ADDRESSES = 100_000;

export async function openBackends(config: Config, options: BackendOptions): Promise<Backends> {
  const records = await openRecords(config, options);
  let limits: Limits;
  try {
    limits = await openLimits(config, options, records.watermarkKey);
  } catch (error) {
    await records.log.close();
    throw error;
  }
  // Many instances: the log's commit watermark lives beside the limits in Redis.
  const { useWatermark, watermarkKey: _key, ...recordsParts } = records;
  const { watermark, ...limitsParts } = limits;
  if (useWatermark !== undefined && watermark !== undefined) useWatermark(watermark);
  return { ...recordsParts, ...limitsParts, description: { ...records.description, ...limits.description } };
}

/** Makes the commit watermark's board (Redis) from the database's numbers (its ground truth). */
type WatermarkMaker = (truth: () => Promise<Watermark>) => WatermarkBoard;
/** Many instances: the commit watermark's key in Redis, and how the log is given its board. */
type Records = Omit<Backends, keyof Limits> & { watermarkKey?: string; useWatermark?: (make: WatermarkMaker) => void };
type Limits = Pick<Backends, 'keyLimiter' | 'failedAuthLimiter' | 'failureReservations' | 'redeliveryLimiter' | 'quotaCounts' | 'closeLimiters'> & {
  description: Pick<BackendDescription, 'limits'>;
  watermark?: WatermarkMaker;
};

/** The log and what follows from it, described. */
type OpenedRecords = Omit<Records, 'description'> & { description: Pick<BackendDescription, 'records'> };

/** The log, and what follows from whether other instances share it: claims and summed usage. */
async function openRecords(config: Config, options: BackendOptions): Promise<OpenedRecords> {
  const { clock, warn } = options;
  if (config.databaseUrl === null) {
    // One process: records in DATA_DIR (or memory only); every delivery and count is its own.
    const dataDir = config.dataDir;
    return {
      log: await openLocalLog({ dataDir, fileSystem: options.fileSystem, warn, now: () => clock.now() }),
      instanceSync: null,
      dataDir,
      usageInstanceTag: undefined,
      usageReader: (counters) => counters,
      attemptClaims: () => null,
      description: { records: dataDir === null ? 'memory only (nothing kept)' : `file log in ${dataDir}` },
    };
  }
  // Many instances share PostgreSQL (loaded only then).
  const { openSharedRecords } = await import('./shared-records.ts');
  return openSharedRecords(config.databaseUrl, options);
}

/** The windows of the limits: in this process, or in Redis shared by every instance. */
async function openLimits(config: Config, options: BackendOptions, watermarkKey: string | undefined): Promise<Limits> {
  const monotonicNow = () => options.clock.monotonic();
  if (config.redisUrl === null) {
    return {
      keyLimiter: new SlidingWindowLimiter({ monotonicNow }),
      failedAuthLimiter: new SlidingWindowLimiter({ monotonicNow, maxIds: FAILED_AUTH_TRACKED_ADDRESSES }),
      failureReservations: null,
      redeliveryLimiter: new SlidingWindowLimiter({ monotonicNow, windowMs: REDELIVERY_WINDOW_MS }),
      quotaCounts: null,
      closeLimiters: () => {},
      description: { limits: 'in this process' },
    };
  }
  const { openRedisLimiters } = await import('./redis/limiters.ts');
  const shared = await openRedisLimiters({ url: config.redisUrl, tlsCaFile: config.redisTlsCaFile, monotonicNow, warn: options.warn, watermarkKey });
  return {
    keyLimiter: shared.keyLimiter,
    failedAuthLimiter: shared.failedAuthLimiter,
    failureReservations: shared.failureReservations,
    redeliveryLimiter: shared.redeliveryLimiter,
    quotaCounts: shared.quotaCounts,
    watermark: (truth) => shared.watermark(truth),
    closeLimiters: () => shared.close(),
    description: { limits: shared.description },
  };
}
