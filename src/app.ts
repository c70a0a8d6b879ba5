// Builds one running instance from a Config: the core (src/composition/core.ts: back-ends,
// store, counters, webhooks, the listing index), its routes, the optional modules that
// MARKETPLACE_MODULES names (src/module.ts), each installed with one call, and the HTTP server
// around the request pipeline; owns the server's start and graceful stop. main.ts adds the
// process around it (signals, printing); tests build apps directly.

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { BackendDescription } from './backends/open-backends.ts';
import type { Config } from './config.ts';
import { loadModules } from './composition/load-modules.ts';
import { ModuleAdditions, type ModuleTimer } from './composition/module-host.ts';
import { openCore, type CoreOptions } from './composition/core.ts';
import { addModuleApiRoutes, coreApiRoutes, adminRoutes as makeAdminRoutes, publicRoutes as makePublicRoutes } from './composition/routes.ts';
import { AccessLog } from './http/access-log.ts';
import { answerClientError } from './http/client-errors.ts';
import type { ApiRoute, AdminRoute, PortalRoute, PublicRoute } from './http/route.ts';
import { limitSockets, serverOptionsFor } from './http/socket-limits.ts';
import type { DocumentedRoutes } from './openapi/document.ts';
import { RequestObserver } from './pipeline/request-observer.ts';
import { Router } from './router.ts';
import { createRequestListener } from './server.ts';
import type { Store } from './store/store.ts';

export type AppOptions = CoreOptions;

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
  readonly adminRoutes: readonly AdminRoute[];
  readonly publicRoutes: readonly PublicRoute[];
  readonly portalRoutes: readonly PortalRoute[];
  /** What /openapi.json is made from: every route and the modules' parts. */
  readonly documentedRoutes: DocumentedRoutes;
  /** Starts listening; resolves with the base URL, e.g. http://127.0.0.1:3000. */
  listen(): Promise<string>;
  /** Stops accepting, lets in-flight requests finish (up to `graceMs`), flushes, closes the store. */
  close(graceMs?: number): Promise<void>;
  /** Drops at once what is past its retention (timers do it every minute or hour; tests call it after moving their clock). */
  sweepRecords(): Promise<void>;
}

const FAILED_AUTH_LIMIT = 100;
/** Audit entries and ended keys, kept for days, are swept hourly (a scan of every audit entry). */
const RETENTION_SWEEP_MS = 60 * 60 * 1000;

export async function createApp(options: AppOptions): Promise<App> {
  const { config } = options;
  const modules = await loadModules(config.modules);
  const core = await openCore(options);
  const { clock, store, measures } = core;

  // The core's /v1 routes first: a module may read them (the portal's key forms check permissions against them).
  const apiRoutes = coreApiRoutes(core);
  const added = new ModuleAdditions();
  for (const module of modules) await module.install(added.hostFor(module.name, core, new Set(config.modules), apiRoutes));
  addModuleApiRoutes(apiRoutes, added.apiRoutes);
  const adminRoutes = makeAdminRoutes(core, apiRoutes, added);
  let openApiBytes: Buffer | null = null;
  // The document is made from these very route lists, on first request (its code loaded only then).
  const openApiDocument = async () => (openApiBytes ??= Buffer.from(JSON.stringify((await import('./openapi/document.ts')).buildOpenApiDocument(documentedRoutes))));
  const publicRoutes = makePublicRoutes(core, () => openApiBytes ?? openApiDocument(), added);
  const documentedRoutes: DocumentedRoutes = { api: apiRoutes, operator: adminRoutes, public: publicRoutes, portal: added.portalRoutes, parts: added.openApiParts, modules: config.modules };

  const accessLog = config.accessLog ? new AccessLog(core.writeOut, () => clock.now()) : null;
  const listener = createRequestListener({
    clock,
    store,
    authenticator: core.authenticator,
    keyLimiter: core.backends.keyLimiter,
    metering: core.metering,
    failedAuthLimiter: core.backends.failedAuthLimiter,
    failedAuthLimit: FAILED_AUTH_LIMIT,
    apiRoutes: buildRouter(apiRoutes),
    adminRoutes: buildRouter(adminRoutes),
    publicRoutes: buildRouter(publicRoutes),
    moduleAreas: added.areas,
    operatorToken: core.operatorToken.token,
    idempotency: added.idempotency,
    // Most servers name no CORS_ORIGINS: the policy's code is loaded only for those that do.
    cors: config.corsOrigins === null ? null : new (await import('./http/cors.ts')).CorsPolicy(config.corsOrigins),
    clientAddress: core.clientAddress,
    observer: new RequestObserver({
      clock,
      usage: core.recorder,
      accessLog,
      clientAddress: core.clientAddress,
      metrics: measures.requests,
      metering: core.metering,
      cpuBudget: added.cpuBudget,
    }),
    compression: added.compression,
    staticAsset: added.staticAsset(),
    logError: (requestId, error) => core.writeErr(`error: request ${requestId} failed: ${(error as Error)?.stack ?? String(error)}\n`),
  });
  const server = createServer(serverOptionsFor(config.socketTimeouts), listener);
  // Slow, stalled or silent clients must not hold sockets or memory for ever.
  const stopSocketLimits = limitSockets(server, config.maxConnections, config.socketTimeouts);
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    const status = answerClientError(error, socket);
    if (status !== null) measures.requests?.recordInvalidRequest(status);
  });

  // What is kept only for a while: audit entries and ended keys (src/audit/retention.ts), and
  // whatever the modules sweep (the idempotency module's answers: 24 h, and at most so many).
  const retention = { auditRetentionDays: config.auditRetentionDays, endedKeyRetentionDays: config.endedKeyRetentionDays };
  const sweeps: ModuleTimer[] = [
    // Its code is loaded at the first sweep, an hour in: a shorter run never needs it.
    { everyMs: RETENTION_SWEEP_MS, what: 'could not sweep audit entries and ended keys', task: async () => (await import('./audit/retention.ts')).sweepRetention(store, clock, retention) },
  ];
  const runTimer = ({ what, task }: ModuleTimer) => task().catch((error: unknown) => core.warn(`${what}: ${(error as Error).message}`));
  const timers = [...sweeps, ...added.timers].map((timer) => setInterval(() => void runTimer(timer), timer.everyMs).unref());
  let closing: Promise<void> | null = null;
  const { operatorToken } = core;
  return {
    ...{ config, store, backends: core.backends.description, server },
    ...{ operatorToken: operatorToken.token, operatorTokenFile: operatorToken.file, operatorTokenCreated: operatorToken.created },
    ...{ apiRoutes, adminRoutes, publicRoutes, portalRoutes: added.portalRoutes, documentedRoutes },
    async sweepRecords() {
      for (const sweep of [...sweeps, ...added.timers]) await runTimer(sweep);
    },
    listen: () => listen(server, config, () => (core.usage.start(), core.dispatcher.start())),
    close(graceMs = 10_000) {
      closing ??= (async () => {
        for (const timer of timers) clearInterval(timer);
        core.readiness.markStopping();
        stopSocketLimits();
        // Long-lived answers (the events module's streams) end now: the server would otherwise wait out graceMs for them.
        for (const task of added.stoppingTasks) task();
        await stopServer(server, graceMs);
        accessLog?.flush(); // the last requests' lines, before the process may exit
        for (const task of added.closeTasks) await task();
        await core.dispatcher.stop();
        await core.usage.stop();
        await store.close();
        core.backends.closeLimiters();
      })();
      return closing;
    },
  };
}

/** Listens on the configured port; `started` runs once listening. Resolves with the base URL. */
function listen(server: Server, config: Config, started: () => void): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => {
      server.off('error', reject);
      started();
      const { address, port } = server.address() as AddressInfo;
      resolve(`http://${address.includes(':') ? `[${address}]` : address}:${port}`);
    });
  });
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
