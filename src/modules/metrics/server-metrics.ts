// What GET /metrics reports: requests by route pattern, method and status class, their
// durations, 429s, store fsync durations and log size, webhook delivery outcomes and backlog,
// open event streams, resident memory, CPU time, start time and event-loop delay. Counting
// happens where things happen (the pipeline, the store's file system, store changes); sampled values are read at
// scrape time. Nothing resets at a scrape, so any number of scrapers each see every count.

import { DELIVERIES } from '../../domain/records.ts';
import type { RecordChange, Store } from '../../store/store.ts';
import type { WebhookRecord } from '../../domain/webhook-records.ts';
import type { Measures } from '../../module.ts';
import { Registry, type Counter, type Histogram } from './registry.ts';

const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const FSYNC_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
const EVENT_LOOP_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** How often the event loop is sampled: a timer due every this many ms, and how late it fires. */
const EVENT_LOOP_SAMPLE_MS = 20;
/** The route label of requests Node's HTTP parser refused before any request existed. */
const INVALID_REQUEST_ROUTE = 'invalid_request';
/** Methods kept as a label value; anything else is counted as OTHER so labels stay few. */
const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

export interface ServerMetricsOptions {
  residentMemoryBytes: () => number;
  /** What other modules sample, read at each scrape: password work (the portal), open event streams (events). */
  sampled: Pick<Measures, 'passwordWork' | 'openEventStreams'>;
}

export class ServerMetrics {
  private readonly registry = new Registry();
  private readonly requests: Counter;
  private readonly durations: Histogram;
  private readonly rateLimited: Counter;
  private readonly cpuBudgetRefused: Counter;
  private readonly fsyncs: Histogram;
  private readonly deliveries: Counter;
  private readonly eventLoopDelay: Histogram;
  private eventLoopTimer: NodeJS.Timeout | null = null;
  private store: Store | null = null;
  /** The request counter's and duration histogram's series per "METHOD route status". */
  private readonly requestSeries = new Map<string, { count: () => void; observe: (seconds: number) => void }>();

  constructor(options: ServerMetricsOptions) {
    const registry = this.registry;
    this.requests = registry.counter('marketplace_http_requests_total', 'HTTP requests answered, by route pattern, method and status class.', ['route', 'method', 'status_class']);
    this.durations = registry.histogram('marketplace_http_request_duration_seconds', 'Time from request to answer, by route pattern.', DURATION_BUCKETS, ['route']);
    this.rateLimited = registry.counter('marketplace_http_rate_limited_total', 'Requests refused with 429 (key limits and failed-authentication limits).');
    this.cpuBudgetRefused = registry.counter('marketplace_http_cpu_budget_refused_total', 'Requests refused with 429 because their key had used its CPU budget for the last minute (also counted in marketplace_http_rate_limited_total).');
    this.fsyncs = registry.histogram('marketplace_store_fsync_duration_seconds', 'Duration of each fsync of the store (log appends, compactions).', FSYNC_BUCKETS);
    const logBytes = registry.gauge('marketplace_store_log_bytes', 'Size of the store log file in bytes (0 when the records are in a database).');
    this.deliveries = registry.counter('marketplace_webhook_deliveries_total', 'Webhook delivery attempts by outcome (delivered, retrying, failed).', ['outcome']);
    const pending = registry.gauge('marketplace_webhook_deliveries_pending', 'Webhook deliveries waiting to be sent or retried.');
    const eventStreams = registry.gauge('marketplace_event_streams_open', 'GET /v1/events/stream responses open now on this instance.');
    const memory = registry.gauge('process_resident_memory_bytes', 'Resident memory size in bytes.');
    const startTime = registry.gauge('process_start_time_seconds', 'Start time of the process since the Unix epoch, in seconds.');
    const cpuSeconds = registry.counter('process_cpu_seconds_total', 'User and system CPU time spent by the process, in seconds.');
    const passwordHashes = registry.counter('marketplace_password_hashes_total', 'scrypt runs started by this process (password checks, including the one paid for an unknown email, and new passwords).');
    const passwordQueueFull = registry.counter('marketplace_password_queue_full_total', 'Password checks refused with 503 because the scrypt queue was full (no scrypt run).');
    this.eventLoopDelay = registry.histogram(
      'marketplace_event_loop_delay_seconds',
      `How late a timer due every ${EVENT_LOOP_SAMPLE_MS} ms fired: the time the event loop could not answer anything.`,
      EVENT_LOOP_BUCKETS,
    );
    const startedAt = Date.now() / 1000 - process.uptime();
    let cpuReported = 0;
    const passwordsReported = { started: 0, queueFull: 0 };
    registry.beforeRender(() => {
      if (this.store !== null) {
        logBytes.set(this.store.stats().logBytes ?? 0);
        pending.set(this.store.size(DELIVERIES));
      }
      memory.set(options.residentMemoryBytes());
      eventStreams.set(options.sampled.openEventStreams?.() ?? 0);
      startTime.set(startedAt);
      const usage = process.cpuUsage();
      const cpuNow = (usage.user + usage.system) / 1e6;
      cpuSeconds.inc({}, cpuNow - cpuReported);
      cpuReported = cpuNow;
      const passwords = options.sampled.passwordWork?.();
      if (passwords !== undefined) {
        // Counted where the work happens (src/modules/portal/passwords.ts); added here as what grew since the last scrape.
        passwordHashes.inc({}, passwords.started - passwordsReported.started);
        passwordQueueFull.inc({}, passwords.queueFull - passwordsReported.queueFull);
        passwordsReported.started = passwords.started;
        passwordsReported.queueFull = passwords.queueFull;
      }
    });
  }

  /** Starts reading from the store (log size, backlog) and sampling the event loop. */
  start(store: Store): void {
    this.store = store;
    this.sampleEventLoop();
  }

  /** One timer at a time, never keeping the process alive; its lateness is the loop's delay. */
  private sampleEventLoop(): void {
    const due = performance.now() + EVENT_LOOP_SAMPLE_MS;
    this.eventLoopTimer = setTimeout(() => {
      this.eventLoopDelay.observe(Math.max(0, performance.now() - due) / 1000);
      this.sampleEventLoop();
    }, EVENT_LOOP_SAMPLE_MS);
    this.eventLoopTimer.unref();
  }

  /** Counts delivery outcomes as the dispatcher records them on webhooks; wired to the changes of `webhooks` in index.ts. */
  onWebhookChange({ before, after }: RecordChange<WebhookRecord>): void {
    if (after === undefined) return;
    const outcome = after.last_delivery;
    const previous = before?.last_delivery;
    if (outcome === null || (previous && previous.event_id === outcome.event_id && previous.attempts === outcome.attempts && previous.at === outcome.at)) return;
    this.deliveries.inc({ outcome: outcome.status });
  }

  /** Pending deliveries dropped past a webhook's cap: failed without an attempt, so no webhook change shows them. */
  countDroppedDeliveries(howMany: number): void {
    this.deliveries.inc({ outcome: 'failed' }, howMany);
  }

  stop(): void {
    if (this.eventLoopTimer !== null) clearTimeout(this.eventLoopTimer);
    this.eventLoopTimer = null;
  }

  /** A request Node's HTTP parser refused (bad framing, headers too large, too slow), answered with `status`. */
  recordInvalidRequest(status: number): void {
    this.requests.inc({ route: INVALID_REQUEST_ROUTE, method: 'OTHER', status_class: `${Math.floor(status / 100)}xx` });
  }

  /** One answered request; `route` is "METHOD /pattern", or null when no route matched. */
  recordRequest(method: string, route: string | null, status: number, durationMs: number): void {
    const methodLabel = KNOWN_METHODS.has(method) ? method : 'OTHER';
    // Every request counts: the series for its labels are looked up once, then kept (profiled:
    // building the label key per request was a visible share of a cached page's cost). Few
    // distinct label sets exist: route patterns × methods × status classes.
    const key = `${methodLabel} ${route ?? ''} ${status}`;
    let series = this.requestSeries.get(key);
    if (series === undefined) {
      const pattern = route === null ? 'unmatched' : route.slice(route.indexOf(' ') + 1);
      series = {
        count: this.requests.seriesOf({ route: pattern, method: methodLabel, status_class: `${Math.floor(status / 100)}xx` }),
        observe: this.durations.seriesOf({ route: pattern }),
      };
      this.requestSeries.set(key, series);
    }
    series.count();
    series.observe(durationMs / 1000);
    if (status === 429) this.rateLimited.inc();
  }

  /** One request refused because its key had spent its CPU budget (its 429 is counted by recordRequest too). */
  countCpuBudgetRefusal(): void {
    this.cpuBudgetRefused.inc();
  }

  /** One fsync of the store, timed by src/metrics/timed-file-system.ts. */
  observeFsync(seconds: number): void {
    this.fsyncs.observe(seconds);
  }

  render(): string {
    return this.registry.render();
  }
}
