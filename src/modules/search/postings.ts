// A set of listing slots kept as a sorted, growable Int32Array: the listings holding one word,
// of one type or of one owner. New listings get the highest slot, so adding one is an append;
// an update or an archive moves the later slots by one (a memmove, no per-element work).

export class Postings {
  slots = new Int32Array(4);
  length = 0;

  /** The slots, in order (a view: read it before the next change). */
  view(): Int32Array {
    return this.slots.subarray(0, this.length);
  }

  /** Adds `slot`; false when it was there already. */
  add(slot: number): boolean {
    if (this.length === this.slots.length) {
      const grown = new Int32Array(this.slots.length * 2);
      grown.set(this.slots);
      this.slots = grown;
    }
    if (this.length === 0 || this.slots[this.length - 1]! < slot) {
      this.slots[this.length++] = slot;
      return true;
    }
    if (this.slots[this.length - 1] === slot) return false;
    const position = this.lowerBound(slot);
    if (this.slots[position] === slot) return false;
    this.slots.copyWithin(position + 1, position, this.length);
    this.slots[position] = slot;
    this.length += 1;
    return true;
  }

  /** Removes `slot`; false when it was not there. */
  delete(slot: number): boolean {
    const position = this.lowerBound(slot);
    if (position >= this.length || this.slots[position] !== slot) return false;
    this.slots.copyWithin(position, position + 1, this.length);
    this.length -= 1;
    // Give memory back once mostly empty, so a word that was common once does not pin its peak.
    if (this.slots.length > 64 && this.length * 4 < this.slots.length) this.slots = this.slots.slice(0, this.slots.length / 2);
    return true;
  }

  has(slot: number): boolean {
    const position = this.lowerBound(slot);
    return position < this.length && this.slots[position] === slot;
  }

  private lowerBound(slot: number): number {
    let low = 0;
    let high = this.length;
    const slots = this.slots;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (slots[middle]! < slot) low = middle + 1;
      else high = middle;
    }
    return low;
  }
}
