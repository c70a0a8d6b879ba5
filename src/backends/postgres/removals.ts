// How many removals (tombstones) the records table keeps, and how many of them a compaction
// could drop now: a removal is kept for a while after it is made so instances that were briefly
// cut off still learn of it, and only then can be dropped. Counted from what this instance sees
// (its own writes and those it follows), and counted again from the table at load and after
// each compaction; the store compacts when the droppable removals outnumber the live records,
// as it does when most of a log file is superseded.

/** Removals becoming droppable in the same second share one entry. */
interface Maturing {
  droppableAtMs: number;
  count: number;
}

export class RemovalCount {
  private readonly keepMs: number;
  private readonly now: () => number;
  private kept = 0;
  private droppable = 0;
  /** Removals not yet droppable, in the order they become so. */
  private maturing: Maturing[] = [];

  constructor(keepMs: number, now: () => number = Date.now) {
    this.keepMs = keepMs;
    this.now = now;
  }

  /** Starts again from the table: `ageMs` of each removal younger than the keeping time, and the count of older ones. */
  reset(olderCount: number, youngerAgesMs: readonly number[]): void {
    this.kept = olderCount + youngerAgesMs.length;
    this.droppable = olderCount;
    this.maturing = [];
    const now = this.now();
    for (const ageMs of [...youngerAgesMs].sort((left, right) => right - left)) this.add(now + this.keepMs - ageMs);
  }

  /** `count` removals made just now. */
  removed(count: number): void {
    this.kept += count;
    for (let index = 0; index < count; index += 1) this.add(this.now() + this.keepMs);
  }

  stats(): { kept: number; droppable: number } {
    const now = this.now();
    while (this.maturing.length > 0 && this.maturing[0]!.droppableAtMs <= now) this.droppable += this.maturing.shift()!.count;
    return { kept: this.kept, droppable: this.droppable };
  }

  private add(droppableAtMs: number): void {
    const last = this.maturing.at(-1);
    const second = Math.ceil(droppableAtMs / 1000) * 1000;
    if (last !== undefined && last.droppableAtMs === second) last.count += 1;
    else this.maturing.push({ droppableAtMs: second, count: 1 });
  }
}
