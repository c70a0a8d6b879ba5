// What GET /metrics reports: requests by route pattern, method and status class, their
// durations, 429s, store fsync durations and log size, webhook delivery outcomes and backlog,
// resident memory and event-loop delay. Counting happens where things happen (the pipeline,
// the store's file system, store changes); sampled values are read at scrape time.

import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { DELIVERIES, WEBHOOKS } from '../domain/records.ts';
import type { FileSystem, LogHandle } from '../store/files.ts';
import type { ChangeEvent, Store } from '../store/store.ts';
import type { WebhookRecord } from '../webhooks/records.ts';
import { Registry, type Counter, type Histogram } from './registry.ts';

const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const FSYNC_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
/** Methods kept as a label value; anything else is counted as OTHER so labels stay few. */
const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

export interface ServerMetricsOptions {
  residentMemoryBytes: () => number;
}

export class ServerMetrics {
  private readonly registry = new Registry();
  private readonly requests: Counter;
  private readonly durations: Histogram;
  private readonly rateLimited: Counter;
  private readonly cpuBudgetRefused: Counter;
  private readonly fsyncs: Histogram;
  private readonly deliveries: Counter;
  private readonly eventLoop: IntervalHistogram;
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
    const logBytes = registry.gauge('marketplace_store_log_bytes', 'Size of the store log in bytes.');
    this.deliveries = registry.counter('marketplace_webhook_deliveries_total', 'Webhook delivery attempts by outcome (delivered, retrying, failed).', ['outcome']);
    const pending = registry.gauge('marketplace_webhook_deliveries_pending', 'Webhook deliveries waiting to be sent or retried.');
    const memory = registry.gauge('process_resident_memory_bytes', 'Resident memory size in bytes.');
    const delay = registry.gauge('marketplace_event_loop_delay_seconds', 'Event-loop delay since the previous scrape (perf_hooks.monitorEventLoopDelay).', ['stat']);
    this.eventLoop = monitorEventLoopDelay({ resolution: 10 });
    registry.beforeRender(() => {
      if (this.store !== null) {
        logBytes.set(this.store.stats().logBytes);
        pending.set(this.store.size(DELIVERIES));
      }
      memory.set(options.residentMemoryBytes());
      const histogram = this.eventLoop;
      const seconds = (nanoseconds: number): number => (Number.isFinite(nanoseconds) ? nanoseconds / 1e9 : 0);
      delay.set(seconds(histogram.mean), { stat: 'mean' });
      delay.set(seconds(histogram.percentile(50)), { stat: 'p50' });
      delay.set(seconds(histogram.percentile(99)), { stat: 'p99' });
      delay.set(seconds(histogram.max), { stat: 'max' });
      histogram.reset();
    });
  }

  /** Starts reading from the store (log size, backlog) and sampling the event loop. */
  start(store: Store): void {
    this.store = store;
    this.eventLoop.enable();
  }

  /** Counts delivery outcomes as the dispatcher records them on webhooks; wired to the store's changes in app.ts. */
  onStoreChange({ collection, before, after }: ChangeEvent): void {
    if (collection !== WEBHOOKS || after === undefined) return;
    const outcome = (after as WebhookRecord).last_delivery;
    const previous = (before as WebhookRecord | undefined)?.last_delivery;
    if (outcome === null || (previous && previous.event_id === outcome.event_id && previous.attempts === outcome.attempts && previous.at === outcome.at)) return;
    this.deliveries.inc({ outcome: outcome.status });
  }

  /** Pending deliveries dropped past a webhook's cap: failed without an attempt, so no webhook change shows them. */
  countDroppedDeliveries(howMany: number): void {
    this.deliveries.inc({ outcome: 'failed' }, howMany);
  }

  stop(): void {
    this.eventLoop.disable();
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

  /** `inner` with every handle's fsync timed. */
  timedFileSystem(inner: FileSystem): FileSystem {
    const time = (handle: LogHandle): LogHandle => ({
      write: (data, position) => handle.write(data, position),
      truncate: (length) => handle.truncate(length),
      close: () => handle.close(),
      sync: async () => {
        const started = performance.now();
        await handle.sync();
        this.fsyncs.observe((performance.now() - started) / 1000);
      },
    });
    return {
      open: async (path) => time(await inner.open(path)),
      create: async (path) => time(await inner.create(path)),
      rename: (from, to) => inner.rename(from, to),
      syncDirectory: (path) => inner.syncDirectory(path),
      remove: (path) => inner.remove(path),
    };
  }

  render(): string {
    return this.registry.render();
  }
}
