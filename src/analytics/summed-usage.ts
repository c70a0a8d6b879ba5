// Analytics summed over every instance sharing one database. Each instance counts its own
// requests in memory and saves them under record ids tagged with its own tag (a new one each
// run, so nothing is ever overwritten by another instance); the answers add this instance's
// live counts to everything the others (and this instance's earlier runs) have saved, which
// arrives through the store like any other change. The others' records are re-read into
// counters of their own only when one of them changed since the last question.

import type { RecordChange, Store, StoredRecord } from '../store/store.ts';
import type { Clock } from '../clock.ts';
import type { StatusCounts, UsageCounts } from './buckets.ts';
import type { EndpointUsage, HourSpan, KeyUsageReport, ListingCounts, SeriesRange, UsageReader } from './reader.ts';
import { UsageCounters } from './usage-counters.ts';

export class SummedUsage implements UsageReader {
  private readonly own: UsageCounters;
  private readonly ownSuffix: string;
  private readonly store: Store;
  private readonly clock: Clock;
  private others: UsageCounters | null = null;

  constructor(own: UsageCounters, instanceTag: string, store: Store, clock: Clock) {
    this.own = own;
    this.ownSuffix = `#${instanceTag}`;
    this.store = store;
    this.clock = clock;
  }

  /** Another instance saved counts: read them again at the next question. Wired to the changes of `usage` in app.ts. */
  onUsageChange(change: RecordChange<StoredRecord>): void {
    if (!change.id.endsWith(this.ownSuffix)) this.others = null;
  }

  keyUsage(keyId: string, range: SeriesRange): KeyUsageReport {
    return addReports(this.own.keyUsage(keyId, range), this.othersCounters().keyUsage(keyId, range));
  }

  listingCounts(listingId: string, span: HourSpan): ListingCounts {
    const own = this.own.listingCounts(listingId, span);
    const others = this.othersCounters().listingCounts(listingId, span);
    return { views: own.views + others.views, impressions: own.impressions + others.impressions };
  }

  lastUsedAt(keyId: string): string | null {
    const times = [this.own.lastUsedAt(keyId), this.othersCounters().lastUsedAt(keyId)].filter((time) => time !== null);
    return times.length === 0 ? null : times.sort().at(-1)!;
  }

  private othersCounters(): UsageCounters {
    // Never started: it only reads, and never writes what it read back under another id.
    this.others ??= new UsageCounters({ store: this.store, clock: this.clock, loadOnly: (id) => !id.endsWith(this.ownSuffix), warn: () => {} });
    return this.others;
  }
}

function addReports(left: KeyUsageReport, right: KeyUsageReport): KeyUsageReport {
  const endpoints = new Map<string, EndpointUsage>(left.endpoints.map((usage) => [usage.endpoint, usage]));
  for (const usage of right.endpoints) {
    const known = endpoints.get(usage.endpoint);
    endpoints.set(usage.endpoint, known === undefined ? usage : { ...known, ...addCounts(known, usage) });
  }
  const merged = [...endpoints.values()];
  merged.sort((a, b) => b.requests - a.requests || (a.endpoint < b.endpoint ? -1 : a.endpoint > b.endpoint ? 1 : 0));
  return {
    totals: addCounts(left.totals, right.totals),
    endpoints: merged,
    // Both cover the same range in the same buckets.
    points: left.points.map((point, index) => ({ ...point, ...addCounts(point, right.points[index]!), errors: point.errors + right.points[index]!.errors })),
  };
}

const STATUS_CLASSES = ['2xx', '3xx', '4xx', '5xx'] as const;

function addCounts(left: UsageCounts, right: UsageCounts): UsageCounts {
  const byStatus: StatusCounts = { ...left.by_status };
  for (const name of STATUS_CLASSES) byStatus[name] += right.by_status[name];
  return { requests: left.requests + right.requests, by_status: byStatus, rate_limited: left.rate_limited + right.rate_limited };
}
