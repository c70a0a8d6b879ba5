// An exact sliding-window limiter: per id, the times of the requests admitted in the last
// window, in a ring buffer that grows only as far as the id's limit. A request is admitted
// when fewer than `limit` admitted requests are younger than the window; refused requests are
// not recorded, so hammering while blocked never extends the block. Times are monotonic.

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Monotonic ms at which one more request will be admitted. */
  resetAt: number;
  /** Monotonic ms when this was decided, so callers can turn resetAt into wall time without reading the clock again. */
  decidedAt: number;
  /**
   * With many instances, the commit watermark read in the same step as the decision (slot →
   * last sequence; src/store/instance-sync.ts), so the request learns it without another round trip.
   */
  watermark?: ReadonlyMap<string, number>;
}

interface Window {
  times: Float64Array;
  head: number;
  count: number;
  newest: number;
}

export interface SlidingWindowOptions {
  windowMs?: number;
  monotonicNow: () => number;
  /** Most ids tracked at once; beyond it the least recently created idle ids are dropped first. */
  maxIds?: number;
}

export class SlidingWindowLimiter {
  private readonly windowMs: number;
  private readonly monotonicNow: () => number;
  private readonly maxIds: number;
  private readonly windows = new Map<string, Window>();
  private nextSweepAt: number;

  constructor(options: SlidingWindowOptions) {
    this.windowMs = options.windowMs ?? 60_000;
    this.monotonicNow = options.monotonicNow;
    this.maxIds = options.maxIds ?? 1_000_000;
    this.nextSweepAt = this.monotonicNow() + this.windowMs;
  }

  /** Records a request for `id` if the window has room; says how much room is left either way. */
  hit(id: string, limit: number): RateDecision {
    const now = this.monotonicNow();
    if (now >= this.nextSweepAt) this.sweep(now);
    let window = this.windows.get(id);
    if (!window) {
      if (this.windows.size >= this.maxIds) this.makeRoom(now);
      window = { times: new Float64Array(Math.min(limit, 16)), head: 0, count: 0, newest: now };
      this.windows.set(id, window);
    }
    this.evictExpired(window, now);
    if (window.count >= limit) return this.blocked(window, limit, now);
    this.push(window, now, limit);
    return { allowed: true, limit, remaining: limit - window.count, resetAt: this.timeAt(window, 0) + this.windowMs, decidedAt: now };
  }

  /** The current state for `id` without recording a request. */
  peek(id: string, limit: number): RateDecision {
    const now = this.monotonicNow();
    const window = this.windows.get(id);
    if (!window) return { allowed: true, limit, remaining: limit, resetAt: now + this.windowMs, decidedAt: now };
    this.evictExpired(window, now);
    if (window.count >= limit) return this.blocked(window, limit, now);
    const resetAt = window.count > 0 ? this.timeAt(window, 0) + this.windowMs : now + this.windowMs;
    return { allowed: true, limit, remaining: limit - window.count, resetAt, decidedAt: now };
  }

  /**
   * Takes back one admission recorded at `at` (the `decidedAt` of the hit that made it), if it
   * is still in the window: a reservation given back once its attempt succeeded. Times of one
   * id are in order and equal times are interchangeable, so the newest match is removed.
   */
  giveBack(id: string, at: number): void {
    const window = this.windows.get(id);
    if (window === undefined) return;
    const capacity = window.times.length;
    for (let offset = window.count - 1; offset >= 0; offset -= 1) {
      if (window.times[(window.head + offset) % capacity] !== at) continue;
      for (let later = offset; later < window.count - 1; later += 1) {
        window.times[(window.head + later) % capacity] = window.times[(window.head + later + 1) % capacity]!;
      }
      window.count -= 1;
      return;
    }
  }

  /** Ids currently tracked (for tests of memory bounds). */
  trackedIds(): number {
    return this.windows.size;
  }

  private blocked(window: Window, limit: number, now: number): RateDecision {
    // Room for one more appears when the request at position (count - limit) leaves the window.
    const freeingIndex = window.count - limit;
    return { allowed: false, limit, remaining: 0, resetAt: this.timeAt(window, freeingIndex) + this.windowMs, decidedAt: now };
  }

  private timeAt(window: Window, offset: number): number {
    return window.times[(window.head + offset) % window.times.length]!;
  }

  private evictExpired(window: Window, now: number): void {
    const capacity = window.times.length;
    while (window.count > 0 && window.times[window.head]! <= now - this.windowMs) {
      window.head = (window.head + 1) % capacity;
      window.count -= 1;
    }
  }

  private push(window: Window, now: number, limit: number): void {
    if (window.count === window.times.length) this.grow(window, limit);
    const capacity = window.times.length;
    window.times[(window.head + window.count) % capacity] = now;
    window.count += 1;
    window.newest = now;
  }

  private grow(window: Window, limit: number): void {
    const capacity = window.times.length;
    const grown = new Float64Array(Math.max(Math.min(capacity * 2, limit), window.count + 1));
    for (let index = 0; index < window.count; index += 1) grown[index] = window.times[(window.head + index) % capacity]!;
    window.times = grown;
    window.head = 0;
  }

  /** Forgets ids with nothing in their window: idle keys cost no memory. */
  private sweep(now: number): void {
    for (const [id, window] of this.windows) {
      if (window.newest <= now - this.windowMs) this.windows.delete(id);
    }
    this.nextSweepAt = now + this.windowMs;
  }

  private makeRoom(now: number): void {
    this.sweep(now);
    if (this.windows.size < this.maxIds) return;
    // Still full of active ids (a flood of ids, not real keys): drop the oldest-created ones, a
    // batch at a time, so a flood pays for one full sweep per batch rather than per request.
    const toDrop = Math.max(this.windows.size - this.maxIds + 1, Math.ceil(this.maxIds / 64));
    let dropped = 0;
    for (const id of this.windows.keys()) {
      if (dropped >= toDrop) break;
      this.windows.delete(id);
      dropped += 1;
    }
  }
}
