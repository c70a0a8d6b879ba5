// What the store does only where other servers share its log (it was given an InstanceSync,
// instance-sync.ts): catching up with their writes, in the store's write queue; holding back a
// refusal decided before this server had caught up; acknowledging a write once it is in the
// commit watermark; and keeping requests fresh (ensureFresh). The store loads this file only in
// that setup (Store.open), so one server's store never does: everything here is the answer to
// "what if another server wrote meanwhile?", which one server never has to ask.

import type { WriteOp } from './format.ts';
import type { InstanceSync, Watermark } from './instance-sync.ts';
import { InstanceBehindError, StoreClosedError } from './store-errors.ts';

/** A write waiting in the store's queue, as far as catching up concerns it. */
export interface WaitingWrite {
  /** A watermark the request learned and did not wait for: an answer that writes nothing must cover it. */
  freshAs?: Watermark;
  reject: (error: Error) => void;
}

/** What Following needs of its store. */
export interface FollowedStore {
  /** Runs `work` in the write queue, between batches. */
  enqueueTask<T>(work: () => Promise<T>): Promise<T>;
  /** Applies another server's write to memory (as the store applies its own). */
  apply(ops: readonly WriteOp[], version: number): void;
  /** close() was called. */
  closing(): boolean;
  warn(message: string): void;
}

export class Following {
  private readonly sync: InstanceSync;
  private readonly store: FollowedStore;
  private readonly catchUpWaitMs: number;
  /** The catch-up queued and not started yet, if any. */
  private queuedPull: Promise<void> | null = null;
  private lastPullWarning: string | null = null;
  private readonly pullListeners: Array<() => void> = [];

  constructor(sync: InstanceSync, store: FollowedStore, catchUpWaitMs: number) {
    this.sync = sync;
    this.store = store;
    this.catchUpWaitMs = catchUpWaitMs;
    sync.onOthersWrote(() => void this.queuePull().catch(() => {}));
  }

  /**
   * Queues one catch-up of others' writes, unless one already waits (it reads everything
   * committed until it runs); resolves when that catch-up has run.
   */
  queuePull(): Promise<void> {
    if (this.store.closing()) return Promise.reject(new StoreClosedError());
    if (this.queuedPull !== null) return this.queuedPull;
    // The task may start at once (an idle queue runs it synchronously): it clears only its own promise.
    let started = false;
    const pull: Promise<void> = this.store
      .enqueueTask(() => {
        started = true;
        this.queuedPull = null;
        return this.pullOthers();
      })
      .then(
        () => {
          this.lastPullWarning = null;
        },
        (error: Error) => {
          // Said once per cause, not at every periodic catch-up of an outage.
          if (error.message !== this.lastPullWarning) this.store.warn(`Could not read other servers' writes: ${error.message}`);
          this.lastPullWarning = error.message;
          throw error;
        },
      );
    if (!started) this.queuedPull = pull;
    pull.catch(() => {});
    return pull;
  }

  /** Applies the writes other servers committed since the last pull; the store calls it in its write queue. */
  async pullOthers(): Promise<void> {
    await this.sync.pull((write) => this.store.apply(write.ops, write.version));
    for (const listener of this.pullListeners) {
      try {
        listener();
      } catch (error) {
        this.store.warn(`A catch-up listener failed: ${(error as Error)?.message ?? String(error)}`);
      }
    }
  }

  /** The write's request learned a watermark this server's memory does not cover yet (it was decided on older state). */
  decidedBehind(write: WaitingWrite): boolean {
    return write.freshAs !== undefined && !this.sync.covers(write.freshAs);
  }

  /** Catches up, then hands back the writes to decide again (those decided behind refused with 503 if it cannot). */
  async catchUpBeforeDeciding<W extends WaitingWrite>(again: W[]): Promise<W[]> {
    try {
      await this.pullOthers();
    } catch (error) {
      return this.refuseBehind(again, error);
    }
    return this.caughtUp(again);
  }

  /** After a catch-up every watermark learned before it is covered; one that is not (never expected) no longer holds a write back. */
  caughtUp<W extends WaitingWrite>(again: W[]): W[] {
    for (const write of again) if (this.decidedBehind(write)) delete write.freshAs;
    return again;
  }

  /** Writes decided behind are answered 503 when the catch-up failed; the others go on. */
  refuseBehind<W extends WaitingWrite>(again: W[], error: unknown): W[] {
    const failure = new InstanceBehindError(`this instance cannot catch up with the other instances (${(error as Error)?.message ?? String(error)})`);
    return again.filter((write) => {
      if (!this.decidedBehind(write)) return true;
      write.reject(failure);
      return false;
    });
  }

  /** Resolves once this server's writes up to `version` are in the commit watermark (every server's next request catches up with them). */
  published(version: number): Promise<void> {
    return this.sync.published(version);
  }

  /** A watermark a request learned may be used as is (read from a source that cannot have gone back in time). */
  trusts(watermark: Watermark): boolean {
    return this.sync.trusts(watermark);
  }

  /** Store.ensureFresh with another server sharing the log. */
  ensureFresh(known?: Watermark): Promise<void> | null {
    const usable = known !== undefined && this.sync.trusts(known) ? known : null;
    if (usable !== null && this.sync.covers(usable)) return null;
    return this.catchUpTo(usable);
  }

  private async catchUpTo(known: Watermark | null): Promise<void> {
    let watermark: Watermark;
    try {
      watermark = known ?? (await this.sync.watermark());
    } catch (error) {
      throw new InstanceBehindError(`it cannot tell which writes were acknowledged (${(error as Error)?.message ?? String(error)})`);
    }
    if (this.sync.covers(watermark)) return;
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`not caught up within ${this.catchUpWaitMs} ms`)), this.catchUpWaitMs);
    });
    try {
      await Promise.race([this.queuePull(), bound]);
    } catch (error) {
      throw new InstanceBehindError(`this instance is catching up with the other instances (${(error as Error)?.message ?? String(error)})`);
    } finally {
      clearTimeout(timer);
    }
    if (!this.sync.covers(watermark)) throw new InstanceBehindError('this instance is catching up with the other instances');
  }

  /** What keeps the shared log from being ready (database unreachable, behind). */
  problems(): string[] {
    return this.sync.problems();
  }

  /** Store.orderedBelow with another server sharing the log. */
  orderedBelow(): number {
    return this.sync.orderedBelow();
  }

  /** Store.settleOrder with another server sharing the log: one catch-up since the call. */
  settleOrder(): Promise<void> {
    return this.queuePull().catch((error: Error) => {
      throw new InstanceBehindError(`this instance cannot catch up with the other instances (${error.message})`);
    });
  }

  /** Called after each catch-up of others' writes. */
  onCaughtUp(listener: () => void): void {
    this.pullListeners.push(listener);
  }
}
