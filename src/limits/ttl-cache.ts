// A small Map with a time-to-live per entry and a size cap. Entries expire lazily when read;
// when full, the oldest insertion goes first. The clock is injected so tests never sleep.

export interface TtlCacheOptions {
  ttlMs: number;
  maxEntries: number;
  monotonicNow: () => number;
}

export class TtlCache<Key, Value> {
  private readonly entries = new Map<Key, { value: Value; expiresAt: number }>();
  private readonly ttlMs: number;
  private readonly maxEntries: number;
  private readonly monotonicNow: () => number;

  constructor(options: TtlCacheOptions) {
    this.ttlMs = options.ttlMs;
    this.maxEntries = options.maxEntries;
    this.monotonicNow = options.monotonicNow;
  }

  get(key: Key): Value | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= this.monotonicNow()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  set(key: Key, value: Value): void {
    this.entries.delete(key);
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(key, { value, expiresAt: this.monotonicNow() + this.ttlMs });
  }

  delete(key: Key): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}
