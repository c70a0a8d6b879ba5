// A small Map with a time-to-live per entry, a size cap and, optionally, a weight cap (bytes,
// say). Entries expire lazily when read; when full, the oldest insertions go first. The clock is
// injected so tests never sleep.

export interface TtlCacheOptions<Value> {
  ttlMs: number;
  maxEntries: number;
  monotonicNow: () => number;
  /** What an entry weighs (e.g. its bytes); with maxWeight, the total is kept under it. */
  weigh?: (value: Value) => number;
  maxWeight?: number;
}

export class TtlCache<Key, Value> {
  private readonly entries = new Map<Key, { value: Value; expiresAt: number; weight: number }>();
  private readonly ttlMs: number;
  private readonly maxEntries: number;
  private readonly monotonicNow: () => number;
  private readonly weigh: (value: Value) => number;
  private readonly maxWeight: number;
  private totalWeight = 0;

  constructor(options: TtlCacheOptions<Value>) {
    this.ttlMs = options.ttlMs;
    this.maxEntries = options.maxEntries;
    this.monotonicNow = options.monotonicNow;
    this.weigh = options.weigh ?? (() => 0);
    this.maxWeight = options.maxWeight ?? Infinity;
  }

  get(key: Key): Value | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= this.monotonicNow()) {
      this.delete(key);
      return undefined;
    }
    return entry.value;
  }

  set(key: Key, value: Value): void {
    this.delete(key);
    const weight = this.weigh(value);
    if (weight > this.maxWeight) return; // could never fit: not kept at all
    for (const oldest of this.entries.keys()) {
      if (this.entries.size < this.maxEntries && this.totalWeight + weight <= this.maxWeight) break;
      this.delete(oldest);
    }
    this.entries.set(key, { value, expiresAt: this.monotonicNow() + this.ttlMs, weight });
    this.totalWeight += weight;
  }

  delete(key: Key): void {
    const entry = this.entries.get(key);
    if (entry === undefined) return;
    this.entries.delete(key);
    this.totalWeight -= entry.weight;
  }

  clear(): void {
    // Called on every listing write, mostly on an empty cache: clearing an empty Map still allocates.
    if (this.entries.size === 0) return;
    this.entries.clear();
    this.totalWeight = 0;
  }

  get size(): number {
    return this.entries.size;
  }
}
