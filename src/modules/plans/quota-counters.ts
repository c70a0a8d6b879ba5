// Counts each user's requests on a plan with a quota, per UTC day or month (contract section 23),
// in memory, and saves the counts that changed to the store every minute and at stop(), as the
// usage counters save theirs (STYLE practice 20): never a write per request. A graceful stop
// loses none; a crash gives back at most the requests since the last save (docs/limits.md).
// One counter per meter ("<user id>/<plan id>", shared-windows.ts meterIdOf), so all of a user's
// keys on the plan share it. A counter keeps its count when the plan's quota changes; it starts
// again at 0 only when its period is over.

import type { KeyQuotas, QuotaCounter, QuotaView, SharedQuotaCounts } from '../../analytics/quota-counters.ts';
import { PeriodicSaver } from '../../analytics/periodic-saver.ts';
import { PLAN_LIST_ID, currentPlans } from '../../auth/plans.ts';
import { isoTime, type Clock } from '../../clock.ts';
import { USAGE_FLUSH_MS } from '../../config.ts';
import { PLANS, QUOTA_COUNTS, QUOTA_PERIODS, type KeyRecord, type PlanListRecord, type PlanQuota, type QuotaCountRecord, type QuotaPeriod } from '../../domain/records.ts';
import type { WriteOp } from '../../store/format.ts';
import type { Store } from '../../store/store.ts';

const DAY_MS = 24 * 60 * 60 * 1000;
/** Counters per store write, so one save after a busy minute is not one enormous log line. */
const OPS_PER_WRITE = 500;

/** Told when a count crosses 80 % of its quota or reaches it (once a period each). */
export type QuotaCrossing = (meterId: string, kind: 'quota.warning' | 'quota.exhausted', quota: PlanQuota, counter: QuotaCounter) => void;

export interface QuotaCountersOptions {
  store: Store;
  /** With many instances: the counts in Redis, which keeps them; this process then saves none. */
  shared?: SharedQuotaCounts | null;
  clock: Clock;
  /** Told when a count crosses 80 % of its quota or reaches it. */
  onCrossing?: QuotaCrossing;
  /** How often changed counts are saved; also the most a crash can give back. Default 60 s. */
  flushIntervalMs?: number;
  warn?: (message: string) => void;
}

/** The UTC day or month holding `nowMs`: [start, end). */
export function periodBounds(period: QuotaPeriod, nowMs: number): { start: number; end: number } {
  if (period === 'day') {
    const start = Math.floor(nowMs / DAY_MS) * DAY_MS;
    return { start, end: start + DAY_MS };
  }
  const date = new Date(nowMs);
  return { start: Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1), end: Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1) };
}

export class QuotaCounters implements KeyQuotas {
  private readonly store: Store;
  private readonly clock: Clock;
  private readonly warn: (message: string) => void;
  private readonly counters = new Map<string, QuotaCounter>();
  private readonly shared: SharedQuotaCounts | null;
  private readonly onCrossing: QuotaCrossing | null;
  /** Plan id → its quota, for the plan list last read (rebuilt when the list record changes). */
  private quotas = new Map<string, PlanQuota>();
  private quotasOf: PlanListRecord | undefined | null = null;
  private readonly saver: PeriodicSaver;

  constructor(options: QuotaCountersOptions) {
    this.store = options.store;
    this.clock = options.clock;
    this.saver = new PeriodicSaver(() => this.flushOnce(), options.flushIntervalMs ?? USAGE_FLUSH_MS);
    this.warn = options.warn ?? ((message: string) => console.warn(message));
    this.shared = options.shared ?? null;
    this.onCrossing = options.onCrossing ?? null;
    if (this.shared === null) this.load();
  }

  /** The quota of `key`'s plan, or undefined (a key with a limit of its own, or a plan with none). No allocation. */
  quotaOf(key: KeyRecord): PlanQuota | undefined {
    const plan = key.plan;
    if (!plan) return undefined;
    const list = this.store.get(PLANS, PLAN_LIST_ID);
    if (list !== this.quotasOf) {
      const quotas = new Map<string, PlanQuota>();
      for (const each of currentPlans(this.store)) if (each.quota) quotas.set(each.id, each.quota);
      this.quotas = quotas;
      this.quotasOf = list;
    }
    return this.quotas.get(plan);
  }

  /** `meterId`'s counter for the period now (a new period starts at 0; a changed period keeps the count). */
  counter(meterId: string, quota: PlanQuota): QuotaCounter {
    const now = this.clock.now();
    let counter = this.counters.get(meterId);
    if (counter === undefined) {
      const { start, end } = periodBounds(quota.period, now);
      counter = { period: quota.period, start, end, used: 0, dirty: false, warned: false, exhaustedTold: false };
      this.counters.set(meterId, counter);
    } else if (now >= counter.end || counter.period !== quota.period) {
      // A wall clock set back stays in the period it was in: no reset is given for it.
      const { start, end } = periodBounds(quota.period, now);
      if (counter.period === quota.period) counter.used = 0;
      counter.warned = false;
      counter.exhaustedTold = false;
      counter.period = quota.period;
      counter.start = start;
      counter.end = end;
      counter.dirty = true;
    }
    return counter;
  }

  /**
   * Whether the meter's quota is used up, as this process knows it (always false with shared
   * counts: Redis decides in take(), and another instance may have topped the count up).
   */
  exhausted(meterId: string, quota: PlanQuota): boolean {
    return this.shared === null && this.counter(meterId, quota).used >= quota.requests;
  }

  /**
   * Counts one request if the quota has room: the counter (its `used` the count after this
   * request), or null when it is used up (nothing counted). With shared counts, a promise.
   */
  take(meterId: string, quota: PlanQuota): QuotaCounter | null | Promise<QuotaCounter | null> {
    const counter = this.counter(meterId, quota);
    if (this.shared !== null) {
      const { start } = counter;
      return this.shared.take(meterId, start, counter.end, quota.requests).then(({ admitted, used }) => {
        if (counter.start === start) counter.used = used;
        // Redis hands each count out once: the instance that got the crossing one tells it.
        if (admitted) this.tellCrossing(meterId, quota, counter, used - 1, used);
        return admitted ? counter : null;
      });
    }
    if (counter.used >= quota.requests) return null;
    counter.used += 1;
    counter.dirty = true;
    this.tellCrossing(meterId, quota, counter, counter.used - 1, counter.used);
    return counter;
  }

  /** quota.warning when the count went past 80 %, quota.exhausted when it reached the quota: once a period each. */
  private tellCrossing(meterId: string, quota: PlanQuota, counter: QuotaCounter, before: number, after: number): void {
    if (this.onCrossing === null) return;
    const warnAt = Math.ceil(quota.requests * 0.8);
    if (!counter.warned && before < warnAt && after >= warnAt) {
      counter.warned = true;
      this.onCrossing(meterId, 'quota.warning', quota, counter);
    }
    if (!counter.exhaustedTold && after >= quota.requests && before < quota.requests) {
      counter.exhaustedTold = true;
      this.onCrossing(meterId, 'quota.exhausted', quota, counter);
    }
  }

  /** Takes back one request counted by take() (it was refused after all, by the rate limit). */
  giveBack(meterId: string, counter: QuotaCounter): void {
    if (counter.used > 0) counter.used -= 1;
    counter.dirty = true;
    this.shared?.giveBack(meterId, counter.start).catch((error: unknown) => this.warn(`A quota count could not be given back in Redis: ${(error as Error)?.message ?? String(error)}`));
  }

  /** Sets (`used`) or tops up (`add`, lowering the count) a meter's count in the current period. */
  async adjust(meterId: string, quota: PlanQuota, change: { used: number } | { add: number }): Promise<QuotaCounter> {
    const counter = this.counter(meterId, quota);
    if (this.shared !== null) counter.used = await this.shared.read(meterId, counter.start);
    counter.used = 'used' in change ? change.used : Math.max(0, counter.used - change.add);
    counter.dirty = true;
    if (this.shared !== null) await this.shared.set(meterId, counter.start, counter.end, counter.used);
    return counter;
  }

  /** The count now (read from Redis with shared counts). */
  async usedNow(meterId: string, quota: PlanQuota): Promise<QuotaCounter> {
    const counter = this.counter(meterId, quota);
    if (this.shared !== null) counter.used = await this.shared.read(meterId, counter.start);
    return counter;
  }

  /** What the usage reads show for `key`, or null when its plan has no quota. */
  async viewOf(key: KeyRecord, meterId: string): Promise<QuotaView | null> {
    const quota = this.quotaOf(key);
    return quota === undefined ? null : quotaView(quota, await this.usedNow(meterId, quota));
  }

  // --- Saving. ---

  /** Saves every `flushIntervalMs`; the timer does not keep the process alive. */
  start(): void {
    this.saver.start();
  }

  /** Saves the counts changed since the last save. Never rejects: a refused save is tried again at the next. */
  flush(): Promise<void> {
    return this.saver.save();
  }

  /** Stops the timer and makes a last save. */
  stop(): Promise<void> {
    return this.saver.stop();
  }

  private async flushOnce(): Promise<void> {
    if (this.shared !== null) return; // Redis keeps them
    const changed: Array<[string, QuotaCounter]> = [];
    for (const entry of this.counters) if (entry[1].dirty) changed.push(entry);
    const now = isoTime(this.clock.now());
    for (let offset = 0; offset < changed.length; offset += OPS_PER_WRITE) {
      const slice = changed.slice(offset, offset + OPS_PER_WRITE);
      const ops: WriteOp[] = [];
      for (const [id, counter] of slice) {
        counter.dirty = false;
        const data: QuotaCountRecord = { id, period: counter.period, start: isoTime(counter.start), used: counter.used, updated_at: now };
        ops.push({ op: 'put', collection: QUOTA_COUNTS, id, data });
      }
      try {
        await this.store.write(ops);
      } catch (error) {
        for (const [, counter] of slice) counter.dirty = true;
        this.warn(`Quota counts could not be saved (kept in memory; retried at the next save): ${(error as Error)?.message ?? String(error)}`);
      }
    }
  }

  /** The counts saved in the store; one whose period is over starts again when next used. */
  private load(): void {
    for (const record of this.store.values(QUOTA_COUNTS)) {
      const start = Date.parse(record.start);
      if (!QUOTA_PERIODS.includes(record.period) || !Number.isFinite(start) || !(record.used >= 0)) continue;
      const { end } = periodBounds(record.period, start);
      this.counters.set(record.id, { period: record.period, start, end, used: record.used, dirty: false, warned: false, exhaustedTold: false });
    }
  }
}

export function quotaView(quota: PlanQuota, counter: QuotaCounter): QuotaView {
  return { requests: quota.requests, used: counter.used, remaining: Math.max(0, quota.requests - counter.used), period: quota.period, resets_at: isoTime(counter.end) };
}
