// The lifecycle the in-memory counters share (usage counts, quota counts; STYLE practice 20):
// save every interval on a timer that keeps no process alive, one save at a time (a save asked
// for while one runs follows it, so two never write at once), and a last save at stop. What a
// save writes is the owner's `saveOnce`, which must not reject (a refused write keeps its
// counts in memory for the next save).

export class PeriodicSaver {
  private readonly saveOnce: () => Promise<void>;
  private readonly intervalMs: number;
  private timer: NodeJS.Timeout | null = null;
  private saves: Promise<void> = Promise.resolve();

  constructor(saveOnce: () => Promise<void>, intervalMs: number) {
    if (!(intervalMs > 0)) throw new RangeError('flushIntervalMs must be a positive number');
    this.saveOnce = saveOnce;
    this.intervalMs = intervalMs;
  }

  /** Saves every interval from now on; a second call does nothing. */
  start(): void {
    if (this.timer !== null) return;
    this.timer = setInterval(() => void this.save(), this.intervalMs);
    this.timer.unref();
  }

  /** One save after those already asked for; resolves when it is done. */
  save(): Promise<void> {
    this.saves = this.saves.then(() => this.saveOnce());
    return this.saves;
  }

  /** Stops the timer and makes a last save. */
  async stop(): Promise<void> {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    await this.save();
  }
}
