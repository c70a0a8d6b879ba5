// The records of many instances sharing PostgreSQL (open-backends.ts loads this only when
// DATABASE_URL is set): the log with its following of the others, each webhook attempt claimed,
// each instance's usage counts kept apart and summed, and the commit watermark's key in Redis.

import { randomUUID } from 'node:crypto';
import type { UsageCounters } from '../analytics/usage-counters.ts';
import type { Clock } from '../clock.ts';
import type { Watermark } from '../store/instance-sync.ts';
import type { Store } from '../store/store.ts';
import type { WatermarkBoard } from './postgres/postgres-log.ts';

/** What of BackendOptions (open-backends.ts) the shared records use. */
interface SharedRecordsOptions {
  clock: Clock;
  warn: (message: string) => void;
  webhookSendTimeoutMs: number;
}

export async function openSharedRecords(databaseUrl: string, options: SharedRecordsOptions) {
  const { clock, warn } = options;
  // Nothing in DATA_DIR (the operator token comes from the environment: config insists).
  const [{ PostgresLog }, { SummedUsage }, { AttemptClaims }, { watermarkKey }] = await Promise.all([
    import('./postgres/postgres-log.ts'),
    import('../analytics/summed-usage.ts'),
    import('../webhooks/attempt-claim.ts'),
    import('./redis/redis-watermark.ts'),
  ]);
  const log = await PostgresLog.open({ url: databaseUrl, warn });
  const instanceTag = randomUUID();
  return {
    log,
    // The same back-end: the database both keeps the records and tells of the others' writes.
    instanceSync: log,
    dataDir: null,
    usageInstanceTag: instanceTag,
    usageReader: (counters: UsageCounters, store: Store) => new SummedUsage(counters, instanceTag, store, clock),
    attemptClaims: (store: Store) => new AttemptClaims(store, options.webhookSendTimeoutMs),
    watermarkKey: watermarkKey(log.storeId),
    useWatermark: (make: (truth: () => Promise<Watermark>) => WatermarkBoard) => log.useWatermark(make(() => log.slotTruth())),
    description: { records: `PostgreSQL at ${describePostgres(databaseUrl)}` },
  };
}

/**
 * host:port/database, "(TLS)" when the driver will insist on TLS: pg (without uselibpqcompat)
 * takes any sslmode but disable, or an sslrootcert/sslcert, or ssl=true, as TLS required;
 * with uselibpqcompat=true, allow and prefer may fall back to plain. Never the user or password.
 */
export function describePostgres(url: string): string {
  const parsed = new URL(url);
  const database = decodeURIComponent(parsed.pathname.slice(1)) || '(default database)';
  const parameter = (name: string) => parsed.searchParams.get(name);
  const sslmode = parameter('sslmode');
  const libpqRules = parameter('uselibpqcompat') === 'true';
  const tls =
    sslmode === null
      ? parameter('ssl') === 'true' || parameter('sslrootcert') !== null || parameter('sslcert') !== null
      : sslmode !== 'disable' && !(libpqRules && (sslmode === 'allow' || sslmode === 'prefer'));
  return `${parsed.host}/${database}${tls ? ' (TLS)' : ''}`;
}
