// What an optional module is, and what the core hands it. A module (src/modules/<name>/index.ts)
// exports one MarketplaceModule; src/app.ts installs the ones MARKETPLACE_MODULES names, each
// with one call to `install(host)`. Through the host a module adds its routes on any surface,
// its part of the OpenAPI document, its own request area (the portal's /portal/v1), its static
// pages, its store reactions, its timers, and the listings' search. The core never imports a module: it only calls
// what a module gave the host.

import type { UsageReader } from './analytics/reader.ts';
import type { AuditLog } from './audit/audit-log.ts';
import type { Backends } from './backends/open-backends.ts';
import type { Clock } from './clock.ts';
import type { Config, ModuleName } from './config.ts';
import type { ClientAddress } from './http/client-address.ts';
import type { ListingSearch } from './listings/listing-search.ts';
import type { PostIdempotency } from './http/key-context.ts';
import type { AnswerCompression } from './http/respond.ts';
import type { ApiRoute, AdminRoute, PortalRoute, PublicRoute } from './http/route.ts';
import type { StaticAsset } from './http/static-pages.ts';
import type { OpenApiPart } from './openapi/schema.ts';
import type { RateLimiter } from './limits/rate-limiter.ts';
import type { Gate, Run } from './pipeline/gate.ts';
import type { ChangeEvent, Store } from './store/store.ts';
import type { WebhookOutbox } from './webhooks/outbox.ts';
import type { FailingSwitchOff } from './webhooks/dispatcher.ts';
import type { Metering } from './analytics/quota-counters.ts';
import type { KeyCpuBudget, RequestMetrics } from './pipeline/request-observer.ts';

export type { ListingSearch, ModuleName, OpenApiPart, StaticAsset };

/**
 * What is measured for GET /metrics, which the metrics module reports: it sets the hooks at its
 * install (the core calls them where things happen; null, without it, counts nothing), and reads
 * at each scrape the values other modules sample (measurePasswordWork, measureOpenEventStreams).
 */
export interface Measures {
  /** Told each answered request, and each that Node's HTTP parser refused before it was one. */
  requests: (RequestMetrics & { recordInvalidRequest(status: number): void }) | null;
  /** Told the seconds of each fsync of the store. */
  fsync: ((seconds: number) => void) | null;
  /** Told the pending deliveries dropped past a webhook's cap: failed, with no attempt to see. */
  droppedDeliveries: ((howMany: number) => void) | null;
  /** Password hashing in this process: scrypts started, and checks refused because its queue was full. */
  passwordWork: (() => { started: number; queueFull: number }) | null;
  /** GET /v1/events/stream responses open now in this process. */
  openEventStreams: (() => number) | null;
}

/** The parts of the running core a module may use. */
export interface ModuleHost {
  readonly config: Config;
  readonly clock: Clock;
  readonly store: Store;
  readonly backends: Backends;
  readonly outbox: WebhookOutbox;
  readonly audit: AuditLog;
  readonly usage: UsageReader;
  readonly keyLimiter: RateLimiter;
  /** What each key is metered as and the plans' quotas: the core's (each key alone, no quota) until the plans module fills it. */
  readonly metering: Metering;
  /** The operator token (modules derive their sealing keys from it). */
  readonly operatorToken: string;
  readonly clientAddress: ClientAddress;
  /** Every /v1 route, the core's and the modules' (complete once every module is installed). */
  readonly apiRoutes: readonly ApiRoute[];
  /** What GET /metrics reports, for the metrics module. */
  readonly measures: Measures;
  /** The names of the modules this server loads. */
  readonly modules: ReadonlySet<ModuleName>;
  warn(message: string): void;

  addApiRoutes(routes: readonly ApiRoute[]): void;
  addAdminRoutes(routes: readonly AdminRoute[]): void;
  addPublicRoutes(routes: readonly PublicRoute[]): void;
  /** The routes of the portal's area, for the OpenAPI document (the module serves them through its own area). */
  addPortalRoutes(routes: readonly PortalRoute[]): void;
  /** The module's operations, tags and security schemes in /openapi.json. */
  addOpenApi(part: OpenApiPart): void;
  /** Password hashing done by the module, reported on GET /metrics. */
  measurePasswordWork(work: () => { started: number; queueFull: number }): void;
  /** The module's open event streams, reported on GET /metrics. */
  measureOpenEventStreams(count: () => number): void;
  /** A request area of the module's own: every request under `prefix` goes to the gate `makeGate` builds. */
  addArea(prefix: string, makeGate: (run: Run) => Gate): void;
  /** Static pages: `serve(path)` answers a GET or HEAD of a path it knows, or null. */
  addStaticFiles(serve: (path: string) => StaticAsset | null): void;
  /** Reacts to every store change, after the core's own reactions (see src/app.ts). */
  onStoreChange(react: (change: ChangeEvent) => void): void;
  /** Runs `task` every `everyMs` while the server runs; a failure is logged as `what`. */
  every(everyMs: number, what: string, task: () => Promise<unknown>): void;
  /**
   * Answers GET /v1/listings' searches (text, prices, both type and owner, the sorts by price and
   * title) with the search `make` returns, in place of the core's scan: it is given the listings
   * listed now and told every listing change from then on (src/listings/listing-search.ts).
   */
  useListingSearch(make: () => ListingSearch): void;
  /** Holds each key to a share of the event loop: the request observer charges it, the /v1 gate's step 2 asks it. */
  useCpuBudget(budget: KeyCpuBudget): void;
  /** Compresses the answers the client accepts compressed (src/http/respond.ts `sendReply` asks it). */
  useCompression(compression: AnswerCompression): void;
  /** Reads Idempotency-Key on /v1 POSTs: the gate claims each key through it (and documents the header). */
  useIdempotency(idempotency: PostIdempotency): void;
  /** Switches off a webhook whose every delivery failed for a while (the webhook-tools module, which can resume one). */
  switchOffFailingWebhooks(switchOff: FailingSwitchOff): void;
  /** Runs as the server's graceful stop begins, before it waits for requests to finish: ends long-lived answers. */
  onStopping(task: () => void): void;
  /** Runs at the server's graceful stop, after requests have finished. */
  onClose(task: () => Promise<void> | void): void;
}

export interface MarketplaceModule {
  readonly name: ModuleName;
  install(host: ModuleHost): void | Promise<void>;
}
