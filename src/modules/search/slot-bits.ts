// Sets of listing slots as bit sets (bit `slot` of a Uint32Array): the search index merges
// several sorted slot lists through one, tests membership in one in a step, and puts slots that
// came in another order (by price) back in slot order by reading the set bits.

/** A bit set of `slotCount` slots with every slot in `lists` set. */
export function markedSlots(lists: Int32Array[], slotCount: number): Uint32Array {
  const bits = new Uint32Array((slotCount + 31) >>> 5);
  for (const slots of lists) {
    for (let position = 0; position < slots.length; position += 1) {
      const slot = slots[position]!;
      bits[slot >>> 5]! |= 1 << (slot & 31);
    }
  }
  return bits;
}

/** The slots whose bits are set, in slot order; `most` bounds how many there can be. */
export function slotsOfMarked(bits: Uint32Array, most: number): Int32Array {
  const slots = new Int32Array(most);
  let count = 0;
  for (let block = 0; block < bits.length; block += 1) {
    let set = bits[block]!;
    while (set !== 0) {
      const lowest = set & -set;
      slots[count++] = block * 32 + (31 - Math.clz32(lowest));
      set ^= lowest;
    }
  }
  return slots.subarray(0, count);
}
