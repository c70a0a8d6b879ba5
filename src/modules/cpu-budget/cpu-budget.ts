// How much CPU time each key has used in the last minute, and whether it may use more. A
// request's synchronous work (the handler, serialising, compressing in-line, the answer's bytes)
// is timed with the monotonic clock and charged to its key as CPU time: the time on the clock
// scaled by the share of the event loop's busy time in which its thread was actually on a
// processor, measured every quarter of a second (src/limits/on-cpu-share.ts). On an idle
// machine the share is 1 and the charge is the time on the clock; on a machine with more
// runnable work than cores, the time the process waited for a core is not charged to the key
// whose request it was serving. A key whose charges in the last 60 s exceed its budget is
// refused with 429 until enough of them are older than a minute. The budget is `budgetMs` per
// minute for a key with the default rate limit of 100 requests a minute, and grows in
// proportion for keys granted more requests, up to four times that (20% of one core by
// default): a key granted 1,000 requests a minute gets room for heavier work, but no key,
// whatever its limit and whatever it asks, takes more of the server than that.
// The work counted is the request's synchronous work on the event loop plus the time a
// thread-pool job spent compressing its answer (scaled the same way). Per process: each
// instance counts the time it spent itself, which is the resource it protects.
//
// Memory per key is O(1): twelve 5-second buckets. Keys idle for a minute are forgotten.

import { OnCpuShare } from './on-cpu-share.ts';

const BUCKETS = 12;
const BUCKET_MS = 5_000;
const WINDOW_MS = BUCKETS * BUCKET_MS;
/** The rate limit whose keys get exactly `budgetMs`; others get it in proportion, up to MAX_SHARES times. */
const REFERENCE_RATE_LIMIT = 100;
const MAX_SHARES = 4;

interface KeyUse {
  /** ms charged per bucket; bucket i holds the time of bucket number numbers[i]. */
  spent: Float64Array;
  numbers: Float64Array;
  lastBucket: number;
}

export interface CpuBudgetOptions {
  /** ms of CPU time per minute for a key with rate limit 100; 0 turns the budget off. */
  budgetMs: number;
  monotonicNow: () => number;
  /** Most keys tracked at once; past it, keys idle for a minute are dropped first, then the oldest. */
  maxKeys?: number;
  /** Turns time on the clock into CPU time; by default, this process's own measure. */
  onCpu?: OnCpuShare;
}

export class CpuBudget {
  private readonly budgetMs: number;
  private readonly monotonicNow: () => number;
  private readonly maxKeys: number;
  private readonly onCpu: OnCpuShare;
  private readonly uses = new Map<string, KeyUse>();
  private nextSweepAt: number;

  constructor(options: CpuBudgetOptions) {
    this.budgetMs = options.budgetMs;
    this.monotonicNow = options.monotonicNow;
    this.maxKeys = options.maxKeys ?? 100_000;
    this.onCpu = options.onCpu ?? new OnCpuShare();
    this.nextSweepAt = this.monotonicNow() + WINDOW_MS;
  }

  /** The budget of a key with this rate limit, in ms per minute. */
  budgetOf(rateLimit: number): number {
    return this.budgetMs * Math.min(MAX_SHARES, Math.max(1, rateLimit / REFERENCE_RATE_LIMIT));
  }

  /**
   * Whole seconds the key must wait before its use in the last minute is back within its budget,
   * or 0 when it may go on now.
   */
  waitSeconds(keyId: string, rateLimit: number): number {
    const use = this.uses.get(keyId);
    if (use === undefined) return 0;
    const now = this.monotonicNow();
    const current = Math.floor(now / BUCKET_MS);
    const budget = this.budgetOf(rateLimit);
    let total = 0;
    for (let index = 0; index < BUCKETS; index += 1) if (use.numbers[index]! > current - BUCKETS) total += use.spent[index]!;
    if (total <= budget) return 0;
    // Oldest bucket first: the time until enough of them have left the window.
    for (let age = BUCKETS - 1; age >= 0; age -= 1) {
      const number = current - age;
      const index = number % BUCKETS;
      if (use.numbers[index] !== number) continue;
      total -= use.spent[index]!;
      if (total <= budget) return Math.max(1, Math.ceil(((number + BUCKETS) * BUCKET_MS - now) / 1000));
    }
    return Math.ceil(WINDOW_MS / 1000);
  }

  /**
   * Charges `wallMs` of the key's work, timed with performance.now() and ending at `now`, as
   * the CPU time it used (the clock's time scaled by the share the loop thread was on a processor).
   */
  chargeTimed(keyId: string, wallMs: number, now: number): void {
    this.charge(keyId, this.onCpu.cpuOf(wallMs, now));
  }

  /** Adds `ms` of CPU time to the key's last minute. */
  charge(keyId: string, ms: number): void {
    const now = this.monotonicNow();
    if (now >= this.nextSweepAt) this.sweep(now);
    const number = Math.floor(now / BUCKET_MS);
    let use = this.uses.get(keyId);
    if (use === undefined) {
      if (this.uses.size >= this.maxKeys) this.makeRoom(number);
      use = { spent: new Float64Array(BUCKETS), numbers: new Float64Array(BUCKETS).fill(-Infinity), lastBucket: number };
      this.uses.set(keyId, use);
    }
    const index = number % BUCKETS;
    if (use.numbers[index] !== number) {
      use.numbers[index] = number;
      use.spent[index] = 0;
    }
    use.spent[index]! += ms;
    use.lastBucket = number;
  }

  trackedKeys(): number {
    return this.uses.size;
  }

  private sweep(now: number): void {
    this.nextSweepAt = now + WINDOW_MS;
    const current = Math.floor(now / BUCKET_MS);
    for (const [keyId, use] of this.uses) if (use.lastBucket <= current - BUCKETS) this.uses.delete(keyId);
  }

  private makeRoom(current: number): void {
    for (const [keyId, use] of this.uses) if (use.lastBucket <= current - BUCKETS) this.uses.delete(keyId);
    // Still full: the first tracked (the longest known) go; their charges are forgotten, never others'.
    for (const keyId of this.uses.keys()) {
      if (this.uses.size < this.maxKeys) break;
      this.uses.delete(keyId);
    }
  }
}
