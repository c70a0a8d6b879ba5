// Builds one running instance from a Config: opens the store, makes the gate (authenticator,
// limiters), registers every route, and owns the HTTP server's start and graceful stop.
// main.ts adds the process around it (signals, printing); tests build apps directly.

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { UsageRecorder } from './analytics/recorder.ts';
import type { UsageReader } from './analytics/reader.ts';
import { UsageCounters } from './analytics/usage-counters.ts';
import { resolveOperatorToken } from './auth/operator-token-source.ts';
import { KeyAuthenticator } from './auth/authenticate.ts';
import { systemClock, type Clock } from './clock.ts';
import type { Config } from './config.ts';
import { AUDIT, KEYS, USAGE, WEBHOOKS } from './domain/records.ts';
import { AuditLog } from './audit/audit-log.ts';
import { openBackends, type BackendDescription } from './backends/open-backends.ts';
import { coreOperatorRoutes } from './handlers/admin/operator.ts';
import { auditRoutes } from './handlers/admin/audit.ts';
import { moderationRoutes } from './handlers/admin/moderation.ts';
import { sweepRetention } from './moderation/retention.ts';
import { planRoutes } from './handlers/admin/plans.ts';
import { analyticsRoutes } from './handlers/v1/analytics.ts';
import { operatorUsageRoute } from './handlers/admin/key-usage.ts';
import { serveDashboardAsset } from './handlers/public/dashboard.ts';
import { healthRoutes } from './handlers/public/health.ts';
import { homeRoute } from './handlers/public/home.ts';
import { listingRoutes } from './handlers/v1/listings.ts';
import { userRoutes } from './handlers/v1/users.ts';
import { webhookRoutes } from './handlers/v1/webhooks.ts';
import { operatorWebhookRoutes } from './handlers/admin/webhooks.ts';
import { AccessLog } from './http/access-log.ts';
import { clientAddressFunction } from './http/client-address.ts';
import { answerClientError } from './http/client-errors.ts';
import { limitSockets, serverOptionsFor } from './http/socket-limits.ts';
import { CorsPolicy } from './http/cors.ts';
import { IdempotencyGuard } from './http/idempotency.ts';
import type { ApiRoute, OperatorRoute, PortalRoute, PublicRoute } from './http/route.ts';
import { portalAccountRoutes } from './handlers/portal/account.ts';
import { invitationRoutes } from './handlers/admin/invitations.ts';
import { portalSessionRoutes } from './handlers/portal/session.ts';
import { portalTwoFactorRoutes } from './handlers/portal/two-factor.ts';
import { twoFactorResetRoutes } from './handlers/admin/two-factor-reset.ts';
import { SecretSealer } from './portal/sealed-secrets.ts';
import { sweepExpiredTickets } from './portal/sign-in-tickets.ts';
import { TwoFactorRules } from './portal/two-factor.ts';
import { portalKeyRoutes } from './handlers/portal/keys.ts';
import { portalPlanRoutes } from './handlers/portal/plans.ts';
import { portalWebhookRoutes } from './handlers/portal/webhooks.ts';
import { portalActivityRoutes } from './handlers/portal/activity.ts';
import { portalSettingsRoutes } from './handlers/portal/settings.ts';
import { ActivityLog } from './audit/activity.ts';
import { portalListingRoutes } from './handlers/portal/listings.ts';
import { prepareDummyHash, scryptLoad } from './portal/passwords.ts';
import { PortalSessions } from './portal/sessions.ts';
import { SignInLimits } from './portal/sign-in-limits.ts';
import { CpuBudget } from './limits/cpu-budget.ts';
import { ListingIndex } from './listings/index.ts';
import { ListingPageCache } from './listings/page-cache.ts';
import { buildOpenApiDocument } from './openapi/document.ts';
import { parseAddressRanges } from './net/address-ranges.ts';
import { Router } from './router.ts';
import { createRequestListener } from './server.ts';
import { nodeFileSystem, type FileSystem } from './store/files.ts';
import { limiterAnswers, Readiness } from './health/readiness.ts';
import { metricsRoute } from './handlers/admin/metrics.ts';
import { readinessRoute } from './handlers/public/readiness.ts';
import { ServerMetrics } from './metrics/server-metrics.ts';
import { Store, type CompactionHooks } from './store/store.ts';
import { DeliveryCounts } from './webhooks/delivery-counts.ts';
import { DEFAULT_TIMEOUT_MS as WEBHOOK_SEND_TIMEOUT_MS, WebhookDispatcher } from './webhooks/dispatcher.ts';
import { WebhookOutbox } from './webhooks/outbox.ts';

export interface AppOptions {
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

export interface App {
  readonly config: Config;
  readonly store: Store;
  /** Where records and rate-limit windows are kept, in words (the banner shows them). */
  readonly backends: BackendDescription;
  readonly server: Server;
  readonly operatorToken: string;
  readonly operatorTokenFile: string | null;
  readonly operatorTokenCreated: boolean;
  readonly apiRoutes: readonly ApiRoute[];
  readonly operatorRoutes: readonly OperatorRoute[];
  readonly publicRoutes: readonly PublicRoute[];
  readonly portalRoutes: readonly PortalRoute[];
  /** Webhook delivery outcomes since start (dropped pending deliveries count as failed). */
  readonly deliveryCounts: DeliveryCounts;
  /** Starts listening; resolves with the base URL, e.g. http://127.0.0.1:3000. */
  listen(): Promise<string>;
  /** Stops accepting, lets in-flight requests finish (up to `graceMs`), flushes, closes the store. */
  close(graceMs?: number): Promise<void>;
  /** Drops at once what is past its retention (timers do it every minute or hour; tests call it after moving their clock). */
  sweepRecords(): Promise<void>;
}

const FAILED_AUTH_LIMIT = 100;
const NOT_COUNTING: UsageRecorder = { recordRequest() {}, recordListingView() {}, recordListingImpressions() {} };
/** Idempotency records are swept this often: the count bound holds to within a minute's creates. */
const IDEMPOTENCY_SWEEP_MS = 60 * 1000;
/** Audit entries and ended keys, kept for days, are swept hourly (a scan of every audit entry). */
const RETENTION_SWEEP_MS = 60 * 60 * 1000;
const SESSION_SWEEP_MS = 60 * 60 * 1000;

export async function createApp(options: AppOptions): Promise<App> {
  const { config } = options;
  const clock = options.clock ?? systemClock;
  const writeOut = options.writeOut ?? ((text: string) => void process.stdout.write(text));
  const writeErr = options.writeErr ?? ((text: string) => void process.stderr.write(text));
  const warn = (message: string) => writeErr(`warning: ${message}\n`);

  const accessLog = config.accessLog ? new AccessLog(writeOut, () => clock.now()) : null;
  const metrics = new ServerMetrics({ residentMemoryBytes: () => process.memoryUsage.rss(), passwordWork: scryptLoad });
  const fileSystem = options.fileSystem ?? nodeFileSystem;
  // The deployment is decided once, here: the log, the limiters, claims and usage reading. With
  // a shared database nothing is kept in DATA_DIR (the token comes from the environment).
  // The store's fsyncs are timed on their way to the disk, for GET /metrics.
  const backends = await openBackends(config, { clock, fileSystem: metrics.timedFileSystem(fileSystem), warn, webhookSendTimeoutMs: WEBHOOK_SEND_TIMEOUT_MS });
  const { dataDir, keyLimiter, failedAuthLimiter } = backends;
  let store: Store;
  try {
    store = await Store.open({ dataDir, log: backends.log, instanceSync: backends.instanceSync, warn, now: () => clock.now(), compactionHooks: options.compactionHooks });
  } catch (error) {
    backends.closeLimiters();
    throw error;
  }
  metrics.start(store);
  const readiness = new Readiness({ fileSystem, dataDir, monotonicNow: () => clock.monotonic() });
  const operatorToken = resolveOperatorToken(config.operatorToken, dataDir);
  const startedAtMs = clock.now();

  // Counting is in memory; snapshots reach the store every few seconds and at close.
  // With a shared database each instance saves its own counts and answers with everyone's.
  const usage = new UsageCounters({ store, clock, warn, instanceTag: backends.usageInstanceTag, flushIntervalMs: config.usageFlushMs });
  const usageReader: UsageReader = backends.usageReader(usage, store);
  // With counting off (MARKETPLACE_ANALYTICS=0) the request path records nothing; reads still work.
  const recorder: UsageRecorder = config.analytics ? usage : NOT_COUNTING;
  // Events are queued in the same write as their change; the dispatcher delivers them later.
  const deliveryCounts = new DeliveryCounts((_outcome, howMany, source) => {
    // Attempts reach /metrics through the webhook changes they write; drops write none.
    if (source === 'dropped') metrics.countDroppedDeliveries(howMany);
  });
  const outbox = new WebhookOutbox({ store, clock, counts: deliveryCounts, warn });
  const dispatcher = new WebhookDispatcher({
    store,
    clock,
    counts: deliveryCounts,
    retryDelaysMs: config.webhookRetryDelaysMs,
    allowPrivate: config.webhookAllowPrivate,
    // Instances sharing a database claim each attempt, so one of them sends it.
    claims: backends.attemptClaims(store),
    warn,
  });

  const index = new ListingIndex(store);
  const pageCache = new ListingPageCache(() => clock.monotonic());
  const authenticator = new KeyAuthenticator(store, config.brand, () => clock.monotonic(), () => clock.now());
  const activity = new ActivityLog(store);

  // Every reaction to a store change, in one place. The store runs them synchronously, in this
  // order, after each operation reaches memory and before the write's promise resolves, so a
  // handler answers only once all of them have seen its change (a failing one is logged and
  // does not stop the others). None reads another's state while reacting, which leaves one rule
  // for the order: state kept in memory first, the dispatcher last, because it is the one that
  // starts work (a timer per delivery) that will later read the store and the others.
  store.onChangeOf(KEYS, (change) => authenticator.onKeyChange(change)); // key hashes: a new or revoked key counts from the next request
  store.onChange((change) => index.onStoreChange(change)); // sorted listed listings (active, owner not suspended)
  store.onChange((change) => pageCache.onStoreChange(change)); // any listing or user write drops every cached page
  store.onChange((change) => outbox.onStoreChange(change)); // webhook ids by owner, pending deliveries per webhook (the cap)
  store.onChangeOf(AUDIT, (change) => activity.onAuditChange(change)); // audit entries by the ids they name, for each user's activity log
  store.onChangeOf(WEBHOOKS, (change) => metrics.onWebhookChange(change)); // webhook delivery outcomes, for GET /metrics
  store.onChangeOf(USAGE, (change) => usageReader.onUsageChange?.(change)); // other instances' saved counts (a shared database)
  store.onChange((change) => dispatcher.onStoreChange(change)); // schedules new deliveries (once started)

  // Shared back-ends (PostgreSQL, Redis) are part of readiness; the defaults report nothing.
  readiness.watch(() => store.problems());
  if (config.redisUrl !== null) readiness.watch(limiterAnswers(keyLimiter));
  const audit = new AuditLog(store, clock);
  // The client's address (from X-Forwarded-For only behind a TRUST_PROXY proxy), for every per-address limit.
  const clientAddress = clientAddressFunction(parseAddressRanges(config.trustProxy));
  const sessions = new PortalSessions({ store, clock, origin: { publicOrigin: config.publicOrigin }, warn });
  void prepareDummyHash(config.passwordCost);
  const apiRoutes: ApiRoute[] = [
    ...listingRoutes({ store, clock, index, pageCache, usage: recorder, outbox }),
    ...userRoutes({ store, clock, outbox }),
    ...analyticsRoutes({ store, clock, usage: usageReader, keyLimiter }),
    ...webhookRoutes({ store, clock, outbox, allowPrivate: config.webhookAllowPrivate, redeliveryLimiter: backends.redeliveryLimiter }),
  ];
  const operatorRoutes: OperatorRoute[] = [
    ...coreOperatorRoutes({ store, clock, brand: config.brand, apiRoutes, outbox, lastUsedAt: (keyId) => usageReader.lastUsedAt(keyId), startedAtMs, audit, backends: backends.description }),
    ...moderationRoutes({ store, clock, audit, outbox }),
    ...planRoutes({ store, clock, audit }),
    ...auditRoutes(audit),
    metricsRoute(metrics),
    operatorUsageRoute({ store, clock, usage: usageReader, keyLimiter }),
    ...operatorWebhookRoutes({ store, outbox }),
    ...invitationRoutes({ store, clock, audit, origin: sessions.origin }),
    ...twoFactorResetRoutes({ store, audit }),
  ];
  // The developer portal's routes (/portal/v1), one module each.
  const signInLimits = new SignInLimits({ reservations: backends.failureReservations, addressLimit: FAILED_AUTH_LIMIT });
  // Two-factor secrets are sealed under a key derived from the operator token (sealed-secrets.ts).
  const twoFactorRules = new TwoFactorRules(new SecretSealer(operatorToken.token, 'two-factor secrets'), clock);
  const portalRoutes: PortalRoute[] = [
    ...portalSessionRoutes({ store, clock, sessions, audit, limits: signInLimits, clientAddress, passwordCost: config.passwordCost }),
    ...portalTwoFactorRoutes({ store, clock, sessions, audit, limits: signInLimits, rules: twoFactorRules, clientAddress }),
    ...portalAccountRoutes({ store, clock, sessions, audit, limits: signInLimits, rules: twoFactorRules, clientAddress, outbox, signup: config.portalSignup, passwordCost: config.passwordCost }),
    ...portalKeyRoutes({ store, clock, brand: config.brand, apiRoutes, audit, usage: usageReader, keyLimiter }),
    ...portalPlanRoutes({ store, clock, audit }),
    ...portalWebhookRoutes({ store, clock, outbox, audit, allowPrivate: config.webhookAllowPrivate, redeliveryLimiter: backends.redeliveryLimiter }),
    ...portalListingRoutes({ store, clock, outbox, audit, usage: usageReader }),
    ...portalActivityRoutes({ activity, clock }),
    ...portalSettingsRoutes({ signup: config.portalSignup, origin: sessions.origin }),
  ];
  let openApiBytes: Buffer | null = null;
  // The document is made from these very route lists, on first request.
  const publicRoutes: PublicRoute[] = [
    homeRoute(),
    ...healthRoutes(() => (openApiBytes ??= Buffer.from(JSON.stringify(buildOpenApiDocument({ api: apiRoutes, operator: operatorRoutes, public: publicRoutes, portal: portalRoutes }))))),
    readinessRoute(readiness),
  ];

  const idempotency = new IdempotencyGuard(store, () => clock.now(), config.idempotencyMaxRecords);
  const listener = createRequestListener({
    clock,
    store,
    authenticator,
    keyLimiter,
    failedAuthLimiter,
    failedAuthLimit: FAILED_AUTH_LIMIT,
    apiRoutes: buildRouter(apiRoutes),
    operatorRoutes: buildRouter(operatorRoutes),
    publicRoutes: buildRouter(publicRoutes),
    portalRoutes: buildRouter(portalRoutes),
    sessions,
    operatorToken: operatorToken.token,
    usage: recorder,
    idempotency,
    cors: new CorsPolicy(config.corsOrigins),
    accessLog,
    clientAddress,
    metrics,
    // Per instance: each process holds keys to the share of its own event loop.
    cpuBudget: config.keyCpuBudgetMs === 0 ? null : new CpuBudget({ budgetMs: config.keyCpuBudgetMs, monotonicNow: () => clock.monotonic() }),
    staticAsset: serveDashboardAsset,
    logError: (requestId, error) => writeErr(`error: request ${requestId} failed: ${(error as Error)?.stack ?? String(error)}\n`),
  });

  const server = createServer(serverOptionsFor(config.socketTimeouts), listener);
  // Slow, stalled or silent clients must not hold sockets or memory for ever.
  const stopSocketLimits = limitSockets(server, config.maxConnections, config.socketTimeouts);
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    const status = answerClientError(error, socket);
    if (status !== null) metrics.recordInvalidRequest(status);
  });

  // What is kept only for a while: idempotency answers (24 h, and at most so many), audit
  // entries and ended keys (src/moderation/retention.ts).
  const sweepIdempotency = () => idempotency.sweepExpired().catch((error: unknown) => warn(`could not sweep idempotency records: ${(error as Error).message}`));
  const retention = { auditRetentionDays: config.auditRetentionDays, endedKeyRetentionDays: config.endedKeyRetentionDays };
  const sweepRetained = () => sweepRetention(store, clock, retention).catch((error: unknown) => warn(`could not sweep audit entries and ended keys: ${(error as Error).message}`));
  const sweepRecords = async (): Promise<void> => {
    await sweepIdempotency();
    await sweepRetained();
  };
  const sweepTimer = setInterval(() => void sweepIdempotency(), IDEMPOTENCY_SWEEP_MS);
  sweepTimer.unref();
  const retentionTimer = setInterval(() => void sweepRetained(), RETENTION_SWEEP_MS);
  retentionTimer.unref();
  // Ended sessions (idle, past their absolute end, or of a user no longer active) and expired sign-in tickets are deleted.
  const sessionSweepTimer = setInterval(() => {
    sessions.sweepExpired().catch((error: unknown) => warn(`could not sweep portal sessions: ${(error as Error).message}`));
    sweepExpiredTickets(store, clock).catch((error: unknown) => warn(`could not sweep sign-in tickets: ${(error as Error).message}`));
  }, SESSION_SWEEP_MS);
  sessionSweepTimer.unref();

  let closing: Promise<void> | null = null;

  return {
    config,
    store,
    backends: backends.description,
    server,
    operatorToken: operatorToken.token,
    operatorTokenFile: operatorToken.file,
    operatorTokenCreated: operatorToken.created,
    apiRoutes,
    operatorRoutes,
    publicRoutes,
    portalRoutes,
    deliveryCounts,
    sweepRecords,
    listen() {
      return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(config.port, config.host, () => {
          server.off('error', reject);
          usage.start();
          dispatcher.start();
          const { address, port } = server.address() as AddressInfo;
          resolve(`http://${address.includes(':') ? `[${address}]` : address}:${port}`);
        });
      });
    },
    close(graceMs = 10_000) {
      closing ??= (async () => {
        clearInterval(sweepTimer);
        clearInterval(retentionTimer);
        clearInterval(sessionSweepTimer);
        readiness.markStopping();
        stopSocketLimits();
        await stopServer(server, graceMs);
        accessLog?.flush(); // the last requests' lines, before the process may exit
        await dispatcher.stop();
        await usage.stop();
        await store.close();
        backends.closeLimiters();
        metrics.stop();
      })();
      return closing;
    },
  };
}

/** A router holding these routes. */
function buildRouter<R extends { method: string; pattern: string }>(routes: readonly R[]): Router<R> {
  const router = new Router<R>();
  for (const route of routes) router.add(route);
  return router;
}

/** Stops accepting; idle keep-alive sockets close now, busy ones when done or after `graceMs`. */
function stopServer(server: Server, graceMs: number): Promise<void> {
  if (!server.listening) return Promise.resolve();
  return new Promise((resolve) => {
    const force = setTimeout(() => server.closeAllConnections(), graceMs);
    force.unref();
    server.close(() => {
      clearTimeout(force);
      resolve();
    });
    server.closeIdleConnections();
  });
}
