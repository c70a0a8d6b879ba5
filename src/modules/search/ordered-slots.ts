// Every listed slot in one sort order (by price or by title, ties by id), kept as a sorted
// Int32Array: a price range is two binary searches, and a page in that order is a walk from
// one end. A write moves one slot (a binary search and a memmove). The order is made when first
// asked for, by a merge sort done in slices between event-loop turns (sorting a million slots
// at once would hold the loop for over a second); until it is done it is not `ready`, and
// searches take another path. Keys that change during the build are compared from a copy taken
// when it began, and the changed slots are moved to their place once it ends.

/** Compares two slots by the values in `keys` (a column or a copy of it), ties by `tieBreak`. */
export type SlotComparator = (left: number, right: number) => number;

/** Slots sorted or merged per event-loop turn while building, by default (a few ms of work). */
const MERGED_PER_TURN = 50_000;
/** Longest run sorted directly before merging. */
const RUN = 1_024;

export class OrderedSlots {
  private slots: Int32Array<ArrayBufferLike> = new Int32Array(0);
  private size = 0;
  /** Unmade until first asked for; writes before that cost nothing. */
  private state: 'unmade' | 'building' | 'ready' = 'unmade';
  /** Slots added, changed or removed while building, to put right when it ends. */
  private readonly changedWhileBuilding = new Set<number>();
  private readonly compare: SlotComparator;

  /** `compare` reads the live columns; it must be a total order (ties broken by id). */
  constructor(compare: SlotComparator) {
    this.compare = compare;
  }

  get ready(): boolean {
    return this.state === 'ready';
  }

  get unmade(): boolean {
    return this.state === 'unmade';
  }

  get length(): number {
    return this.size;
  }

  /** The slots at ranks [low, high), in order (a view: read it before the next change). */
  between(low: number, high: number): Int32Array {
    return this.slots.subarray(low, high);
  }

  /** The slot at `rank` (0: first in order). */
  at(rank: number): number {
    return this.slots[rank]!;
  }

  /**
   * Orders `slots` (every slot present, in increasing order) in slices of `perTurn` slots: `snapshot` compares them
   * by their values now, `isPresent` says at the end which changed slots are still listed.
   */
  build(slots: Int32Array, snapshot: SlotComparator, isPresent: (slot: number) => boolean, schedule: (next: () => void) => void, perTurn = MERGED_PER_TURN): void {
    this.state = 'building';
    // Slots are given in increasing order, so a changed one above the last given is new.
    const lastGiven = slots.length === 0 ? -1 : slots[slots.length - 1]!;
    const sorter = new SlicedMergeSort(slots, snapshot, Math.min(RUN, perTurn));
    const step = (): void => {
      if (!sorter.step(perTurn)) return schedule(step);
      this.slots = sorter.result();
      this.size = this.slots.length;
      // Changed slots: out by their old values (the order is still that of the copy), back in by their new ones.
      for (const slot of this.changedWhileBuilding) if (slot <= lastGiven) this.removeBy(slot, snapshot);
      for (const slot of this.changedWhileBuilding) if (isPresent(slot)) this.insertBy(slot, this.compare);
      this.changedWhileBuilding.clear();
      this.state = 'ready';
    };
    step();
  }

  /** Adds a slot (its key as it is now). */
  insert(slot: number): void {
    if (this.state === 'building') this.changedWhileBuilding.add(slot);
    else if (this.state === 'ready') this.insertBy(slot, this.compare);
  }

  /** Removes a slot; call it before the slot's key changes. */
  remove(slot: number): void {
    if (this.state === 'building') this.changedWhileBuilding.add(slot);
    else if (this.state === 'ready') this.removeBy(slot, this.compare);
  }

  /** The first rank whose slot does not come before a slot for which `before` is false. */
  firstRankNotBefore(before: (slot: number) => boolean): number {
    let low = 0;
    let high = this.size;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (before(this.slots[middle]!)) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  private insertBy(slot: number, compare: SlotComparator): void {
    if (this.size === this.slots.length) {
      const grown = new Int32Array(Math.max(1_024, this.slots.length * 2));
      grown.set(this.slots.subarray(0, this.size));
      this.slots = grown;
    }
    const rank = this.firstRankNotBefore((other) => compare(other, slot) < 0);
    this.slots.copyWithin(rank + 1, rank, this.size);
    this.slots[rank] = slot;
    this.size += 1;
  }

  private removeBy(slot: number, compare: SlotComparator): void {
    const rank = this.firstRankNotBefore((other) => compare(other, slot) < 0);
    if (rank >= this.size || this.slots[rank] !== slot) return;
    this.slots.copyWithin(rank, rank + 1, this.size);
    this.size -= 1;
  }
}

/**
 * A bottom-up merge sort that runs in steps: runs of `run` slots sorted directly, then passes
 * merging pairs of runs, each step moving at most `budget` slots before returning.
 */
class SlicedMergeSort {
  private source: Int32Array<ArrayBufferLike>;
  private target: Int32Array<ArrayBufferLike>;
  private readonly compare: SlotComparator;
  private readonly run: number;
  /** Runs of this length are sorted; 0 until the first runs are made. */
  private width = 0;
  /** Where the pair being merged starts, and the merge's three positions inside it. */
  private pairStart = 0;
  private left = 0;
  private right = 0;
  private out = 0;
  private pairOpen = false;

  constructor(slots: Int32Array, compare: SlotComparator, run: number) {
    this.source = slots;
    this.target = new Int32Array(slots.length);
    this.compare = compare;
    this.run = run;
  }

  /** Does up to `budget` slots of work; true once sorted. */
  step(budget: number): boolean {
    const length = this.source.length;
    let work = 0;
    while (work < budget) {
      if (this.width === 0) {
        // First the runs, each sorted in place.
        const end = Math.min(length, this.pairStart + this.run);
        this.source.subarray(this.pairStart, end).sort(this.compare);
        work += end - this.pairStart;
        this.pairStart = end;
        if (end < length) continue;
        this.width = this.run;
        this.pairStart = 0;
      }
      if (this.width >= length) return true;
      if (!this.pairOpen) {
        this.left = this.pairStart;
        this.right = Math.min(length, this.pairStart + this.width);
        this.out = this.pairStart;
        this.pairOpen = true;
      }
      work += this.mergeSome(budget - work);
      if (this.pairOpen) continue;
      this.pairStart += this.width * 2;
      if (this.pairStart < length) continue;
      // A pass is done: the merged runs are twice as long, and the buffers swap.
      [this.source, this.target] = [this.target, this.source];
      this.width *= 2;
      this.pairStart = 0;
    }
    return false;
  }

  result(): Int32Array {
    return this.source;
  }

  /** Merges up to `budget` slots of the open pair; returns how many it moved. */
  private mergeSome(budget: number): number {
    const { source, target, compare } = this;
    const leftEnd = Math.min(source.length, this.pairStart + this.width);
    const rightEnd = Math.min(source.length, this.pairStart + this.width * 2);
    let { left, right, out } = this;
    const stop = Math.min(rightEnd, out + Math.max(1, budget));
    while (out < stop) {
      if (left < leftEnd && (right >= rightEnd || compare(source[left]!, source[right]!) <= 0)) target[out++] = source[left++]!;
      else target[out++] = source[right++]!;
    }
    const moved = out - this.out;
    this.left = left;
    this.right = right;
    this.out = out;
    if (out === rightEnd) this.pairOpen = false;
    return moved;
  }
}
