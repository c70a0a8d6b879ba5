// The core of one running instance, made in order from a Config: the back-ends, the store, the
// counters, the webhook outbox and dispatcher, the listing index and page cache, the key
// authenticator, the audit log, and every reaction to a store change. No routes, no modules:
// src/app.ts adds those around it.

import type { Metering } from '../analytics/quota-counters.ts';
import { UsageCounters } from '../analytics/usage-counters.ts';
import type { UsageRecorder } from '../analytics/recorder.ts';
import type { UsageReader } from '../analytics/reader.ts';
import { AuditLog } from '../audit/audit-log.ts';
import { KeyAuthenticator } from '../auth/authenticate.ts';
import { resolveOperatorToken } from '../auth/operator-token-source.ts';
import { openBackends, type Backends } from '../backends/open-backends.ts';
import { systemClock, type Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import { KEYS, USAGE } from '../domain/records.ts';
import { Readiness } from '../health/readiness.ts';
import { clientAddressFunction, type ClientAddress } from '../http/client-address.ts';
import { ListingIndex } from '../listings/index.ts';
import { ListingPageCache } from '../listings/page-cache.ts';
import { timedFileSystem } from '../metrics/timed-file-system.ts';
import type { Measures } from '../module.ts';
import { parseAddressRanges } from '../net/address-ranges.ts';
import { nodeFileSystem, type FileSystem } from '../store/files.ts';
import { Store, type CompactionHooks } from '../store/store.ts';
import { DEFAULT_TIMEOUT_MS as WEBHOOK_SEND_TIMEOUT_MS, WebhookDispatcher } from '../webhooks/dispatcher.ts';
import { WebhookOutbox } from '../webhooks/outbox.ts';

export interface CoreOptions {
  config: Config;
  clock?: Clock;
  /** The store's file system, replaceable so tests can inject disk faults. */
  fileSystem?: FileSystem;
  /** Tests only: moments where the store's compaction may be held (CompactionHooks, src/store/log.ts). */
  compactionHooks?: CompactionHooks;
  /** Where access-log lines and notices go (stdout by default). */
  writeOut?: (text: string) => void;
  /** Where warnings and errors go (stderr by default). */
  writeErr?: (text: string) => void;
}

export type Core = Awaited<ReturnType<typeof openCore>>;

const NOT_COUNTING: UsageRecorder = { recordRequest() {}, recordListingView() {}, recordListingImpressions() {} };

export async function openCore(options: CoreOptions) {
  const { config } = options;
  const clock = options.clock ?? systemClock;
  const writeOut = options.writeOut ?? ((text: string) => void process.stdout.write(text));
  const writeErr = options.writeErr ?? ((text: string) => void process.stderr.write(text));
  const warn = (message: string) => writeErr(`warning: ${message}\n`);

  // What GET /metrics reports is the metrics module's: it fills these hooks at its install (src/module.ts).
  const measures: Measures = { requests: null, fsync: null, droppedDeliveries: null, passwordWork: null, openEventStreams: null };
  const fileSystem = options.fileSystem ?? nodeFileSystem;
  // The deployment is decided once, here: the log, the limiters, claims and usage reading. With
  // a shared database nothing is kept in DATA_DIR (the token comes from the environment).
  // The store's fsyncs are timed on their way to the disk, for GET /metrics.
  const backends: Backends = await openBackends(config, { clock, fileSystem: timedFileSystem(fileSystem, (seconds) => measures.fsync?.(seconds)), warn, webhookSendTimeoutMs: WEBHOOK_SEND_TIMEOUT_MS });
  let store: Store;
  try {
    store = await Store.open({ dataDir: backends.dataDir, log: backends.log, instanceSync: backends.instanceSync, catchUpWaitMs: config.catchUpWaitMs, warn, now: () => clock.now(), compactionHooks: options.compactionHooks });
  } catch (error) {
    backends.closeLimiters();
    throw error;
  }
  const readiness = new Readiness({ fileSystem, dataDir: backends.dataDir, monotonicNow: () => clock.monotonic() });
  const operatorToken = resolveOperatorToken(config.operatorToken, backends.dataDir);

  // Counting is in memory; snapshots reach the store every few seconds and at close.
  // With a shared database each instance saves its own counts and answers with everyone's.
  const usage = new UsageCounters({ store, clock, warn, instanceTag: backends.usageInstanceTag, flushIntervalMs: config.usageFlushMs });
  const usageReader: UsageReader = backends.usageReader(usage, store);
  // With counting off (MARKETPLACE_ANALYTICS=0) the request path records nothing; reads still work.
  const recorder: UsageRecorder = config.analytics ? usage : NOT_COUNTING;
  // Events are queued in the same write as their change; the dispatcher delivers them later.
  // Each user's event log (GET /v1/events) is the events module's: it gives the outbox its log at install.
  // Drops past a webhook's cap reach GET /metrics (the metrics module) this way; attempts, through the webhook changes they write.
  const outbox = new WebhookOutbox({ store, clock, onDropped: (howMany) => measures.droppedDeliveries?.(howMany), warn });
  const audit = new AuditLog(store, clock);
  // Each key is metered alone, against its own rate_limit, with no quota; the plans module
  // (src/modules/plans/) fills this at its install: shared windows, the plans' quotas, the plans keys are put on.
  const metering: Metering = { meterOf: (key) => key.id, quotas: null, plans: null };
  const dispatcher = new WebhookDispatcher({
    store,
    clock,
    retryDelaysMs: config.webhookRetryDelaysMs,
    allowPrivate: config.webhookAllowPrivate,
    // Instances sharing a database claim each attempt, so one of them sends it.
    claims: backends.attemptClaims(store),
    warn,
  });
  const index = new ListingIndex(store);
  const pageCache = new ListingPageCache(() => clock.monotonic());
  const authenticator = new KeyAuthenticator(store, config.brand, () => clock.monotonic(), () => clock.now());

  // Every reaction of the core to a store change, in one place. The store runs them
  // synchronously, in this order, after each operation reaches memory and before the write's
  // promise resolves, so a handler answers only once all of them have seen its change (a failing
  // one is logged and does not stop the others). None reads another's state while reacting, which
  // leaves one rule for the order: state kept in memory first, the dispatcher last of the core's,
  // because it starts work (a timer per delivery) that will later read the store and the others.
  // Modules add theirs after these (src/module.ts); they too only keep state.
  store.onChangeOf(KEYS, (change) => authenticator.onKeyChange(change)); // key hashes: a new or revoked key counts from the next request
  store.onChange((change) => index.onStoreChange(change)); // sorted listed listings (active, owner not suspended)
  store.onChange((change) => pageCache.onStoreChange(change)); // any listing or user write drops every cached page
  store.onChange((change) => outbox.onStoreChange(change)); // webhook ids by owner, pending deliveries per webhook (the cap)
  store.onChangeOf(USAGE, (change) => usageReader.onUsageChange?.(change)); // other instances' saved counts (a shared database)
  store.onChange((change) => dispatcher.onStoreChange(change)); // schedules new deliveries (once started)

  // Shared back-ends (PostgreSQL, Redis) are part of readiness; the defaults report nothing.
  readiness.watch(() => store.problems());
  if (config.redisUrl !== null) readiness.watch((await import('../health/probes.ts')).limiterAnswers(backends.keyLimiter));
  // The client's address (from X-Forwarded-For only behind a TRUST_PROXY proxy), for every per-address limit.
  const clientAddress: ClientAddress = clientAddressFunction(parseAddressRanges(config.trustProxy));
  return {
    config,
    clock,
    writeOut,
    writeErr,
    warn,
    measures,
    fileSystem,
    backends,
    store,
    readiness,
    operatorToken,
    startedAtMs: clock.now(),
    usage,
    usageReader,
    metering,
    recorder,
    outbox,
    dispatcher,
    index,
    pageCache,
    authenticator,
    audit,
    clientAddress,
  };
}
