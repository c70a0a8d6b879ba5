// One word of `q` during a search: the slot lists of every word it starts (the dictionary's
// entries for that prefix), of the search's type or of every type. The search index either walks
// it as its driver, in slot order, or asks it of each candidate slot whether the slot holds such
// a word.

import type { Postings } from './postings.ts';
import { markedSlots, slotsOfMarked } from './slot-bits.ts';
import type { WordEntry } from './word-dictionary.ts';

/**
 * As the driver it is walked in slot order (one list directly, several merged through a bit
 * set); otherwise it answers "does this slot hold such a word", by a bit set when marking costs
 * less than a binary search per word in the list of the slot's type.
 */
export class WordTerm {
  /** Slots in its lists together: what walking it costs (0: nothing matches). */
  readonly cost: number;
  private bits: Uint32Array | null = null;
  private readonly entries: WordEntry[];
  private readonly lists: Postings[];
  private readonly typeCode: number;
  private readonly typeOf: Uint8Array;

  /** `typeCode` 0 means any type; `typeOf` is the index's type column (code by slot). */
  constructor(entries: WordEntry[], typeCode: number, typeOf: Uint8Array) {
    this.entries = entries;
    this.typeCode = typeCode;
    this.typeOf = typeOf;
    this.lists = [];
    for (const entry of entries) {
      if (typeCode !== 0) {
        const list = entry.byType[typeCode];
        if (list !== undefined && list.length > 0) this.lists.push(list);
      } else for (const list of entry.byType) if (list !== undefined && list.length > 0) this.lists.push(list);
    }
    let cost = 0;
    for (const list of this.lists) cost += list.length;
    this.cost = cost;
  }

  /**
   * Chooses how `has` answers, for about `probes` calls over `slotCount` slots: a bit set when
   * marking every slot of the lists (and clearing one bit per 32 slots) costs less than a binary
   * search (about 16 steps) per entry per probe.
   */
  prepareTests(probes: number, slotCount: number): void {
    if (this.cost + (slotCount >>> 5) < probes * this.entries.length * 16) this.bits = this.marked(slotCount);
  }

  has(slot: number): boolean {
    if (this.bits !== null) return (this.bits[slot >>> 5]! & (1 << (slot & 31))) !== 0;
    const typeCode = this.typeCode !== 0 ? this.typeCode : this.typeOf[slot]!;
    for (const entry of this.entries) if (entry.byType[typeCode]?.has(slot)) return true;
    return false;
  }

  /** Every slot holding such a word, once each, in slot order. */
  slotsIn(slotCount: number): Int32Array {
    if (this.lists.length === 1) return this.lists[0]!.slots.subarray(0, this.lists[0]!.length);
    return slotsOfMarked(this.marked(slotCount), this.cost);
  }

  private marked(slotCount: number): Uint32Array {
    return markedSlots(
      this.lists.map((list) => list.view()),
      slotCount,
    );
  }
}
