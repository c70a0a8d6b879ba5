// The listed listings as columns and inverted lists, so a filtered or searched page costs in
// proportion to the listings it can match, not to the marketplace. Each listed listing has a
// slot (a small integer, given in order of arrival and not reused while the process runs); its
// type, owner, price and creation time sit in typed arrays by slot, and the listings holding a
// word, of a type or of an owner sit in sorted slot lists (Postings). The distinct words are
// also kept sorted, so a word prefix of `q` is a range of words (a binary search), never a scan
// of the text. A search starts from its rarest part (a word range, the type, the owner), tests
// the other parts slot by slot, and takes the page in sort order with a bounded heap.
// Kept up to date by ListingIndex, which sees every listing change on every instance.
// At start-up a large store's listings go in by slices between event-loop turns after the
// server listens (a few µs of CPU per listing): a query that needs this index waits for it
// (`ready`); cached pages, look-ups and default-order pages never do.

import { compareText } from '../domain/order.ts';
import { LISTING_TYPES, type ListingRecord } from '../domain/records.ts';
import { Postings } from './postings.ts';
import { forEachWord, listingWords } from './words.ts';

export type SortKey = 'created_at' | '-created_at' | 'price' | '-price' | 'title';

/** What a search asks besides its sort and page; `words` as queryWords() gives them. */
export interface SearchFilter {
  type: string | null;
  ownerId: string | null;
  minPrice: number | null;
  maxPrice: number | null;
  words: readonly string[];
}

/** How the listings present at start are put in (ListingSearchIndex.addAll). */
export interface WordLoadOptions {
  /** Stores up to this many listings are put in at once (default 20,000). */
  atOnce?: number;
  /** Listings per slice beyond that (default 2,000, a few ms of work). */
  slice?: number;
  /** Runs the next slice later (default setImmediate: after pending I/O). */
  schedule?: (next: () => void) => void;
}

/**
 * One distinct word: the slots holding it, kept per type (index = type code, made on first
 * use), so a search with a type starts from the word's listings of that type alone.
 */
interface WordEntry {
  word: string;
  byType: Array<Postings | undefined>;
  /** Slots in all the type lists together; the word is dropped at 0. */
  size: number;
}

/** Type → its code in the type column; 0 marks an empty slot. */
const TYPE_CODES = new Map<string, number>(LISTING_TYPES.map((type, position) => [type, position + 1]));
/** Above every character a word holds (letters and digits), so `prefix + WORD_END` ends a prefix's range. */
const WORD_END = '\uffff';

export class ListingSearchIndex {
  private readonly slotById = new Map<string, number>();
  private readonly records: Array<ListingRecord | undefined> = [];
  private typeOf = new Uint8Array(1024);
  private ownerOf = new Int32Array(1024);
  private priceOf = new Float64Array(1024);
  private createdOf = new Float64Array(1024);
  /** Lower-cased titles, made at the first title sort that meets the slot. */
  private readonly titleKeys: Array<string | undefined> = [];
  private nextSlot = 0;
  private readonly ownerNumbers = new Map<string, number>();
  /** Owner number → the owner's slots; number 0 stands for "no owner filter". */
  private readonly byOwner: Postings[] = [new Postings()];
  private readonly byType: Postings[] = Array.from({ length: LISTING_TYPES.length + 1 }, () => new Postings());
  private readonly all = new Postings();
  private readonly words = new Map<string, WordEntry>();
  /** Every distinct word in string order; while loading, appended and sorted once at the end. */
  private sortedWords: WordEntry[] = [];
  private loading = false;
  /** While loading: the listings present at start, and how many of them are in. */
  private pending: ListingRecord[] = [];
  private loaded = 0;
  /** While loading: the latest state (undefined: no longer listed) of listings changed before the load reached them. */
  private readonly changedDuringLoad = new Map<string, ListingRecord | undefined>();
  private waiters: Array<() => void> = [];

  /**
   * Adds the listings present at start-up: up to `atOnce` of them now, more in slices of `slice`
   * listings, one per event-loop turn (`schedule`, setImmediate by default), so a large store's
   * server listens at once and keeps answering while the index fills. Changes meanwhile are
   * applied as they come to listings already in, and noted for the others.
   */
  addAll(listings: ListingRecord[], options: WordLoadOptions = {}): void {
    const atOnce = options.atOnce ?? 20_000;
    const slice = options.slice ?? 2_000;
    const schedule = options.schedule ?? setImmediate;
    this.loading = true;
    this.pending = listings;
    this.loaded = 0;
    if (listings.length <= atOnce) return this.loadSlice(listings.length);
    const step = (): void => {
      this.loadSlice(slice);
      if (this.loading) schedule(step);
    };
    schedule(step);
  }

  /** Whether every listing is in (a query needing this index waits until then). */
  get ready(): boolean {
    return !this.loading;
  }

  /** Resolves once `ready`. */
  whenReady(): Promise<void> {
    if (!this.loading) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Puts in up to `count` more of the listings present at start (as they are now); the last call ends the load. */
  private loadSlice(count: number): void {
    const end = Math.min(this.pending.length, this.loaded + count);
    for (; this.loaded < end; this.loaded += 1) {
      const listing = this.pending[this.loaded]!;
      if (!this.changedDuringLoad.has(listing.id)) this.insert(listing);
    }
    if (end < this.pending.length) return;
    // Listings changed before the load reached them (or made during it), in their latest state.
    for (const listing of this.changedDuringLoad.values()) if (listing !== undefined) this.insert(listing);
    this.changedDuringLoad.clear();
    this.pending = [];
    this.loading = false;
    this.sortedWords.sort((left, right) => compareText(left.word, right.word));
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }

  get size(): number {
    return this.all.length;
  }

  add(listing: ListingRecord): void {
    if (this.loading && !this.slotById.has(listing.id)) this.changedDuringLoad.set(listing.id, listing);
    else this.insert(listing);
  }

  private insert(listing: ListingRecord): void {
    if (this.slotById.has(listing.id)) return;
    const slot = this.nextSlot++;
    this.ensureCapacity(this.nextSlot);
    this.slotById.set(listing.id, slot);
    this.records[slot] = listing;
    this.ownerOf[slot] = this.ownerNumber(listing.owner_id);
    this.setColumns(slot, listing);
    this.all.add(slot);
    this.byType[this.typeOf[slot]!]!.add(slot);
    this.byOwner[this.ownerOf[slot]!]!.add(slot);
    // Repeats need no set: the slot is the newest in its lists, so a second add finds it last and stops.
    const typeCode = this.typeOf[slot]!;
    const addWord = (word: string): void => this.addWord(word, slot, typeCode);
    forEachWord(listing.title, addWord);
    forEachWord(listing.description, addWord);
    for (const tag of listing.tags) forEachWord(tag, addWord);
  }

  remove(listing: ListingRecord): void {
    const slot = this.slotById.get(listing.id);
    if (slot === undefined) {
      if (this.loading) this.changedDuringLoad.set(listing.id, undefined);
      return;
    }
    const stored = this.records[slot]!;
    this.slotById.delete(listing.id);
    this.records[slot] = undefined;
    this.titleKeys[slot] = undefined;
    this.all.delete(slot);
    this.byType[this.typeOf[slot]!]!.delete(slot);
    this.byOwner[this.ownerOf[slot]!]!.delete(slot);
    for (const word of listingWords(stored)) this.dropWord(word, slot, this.typeOf[slot]!);
    this.typeOf[slot] = 0;
  }

  /** The same listing, changed: its slot stays; only what changed moves. */
  update(after: ListingRecord): void {
    const slot = this.slotById.get(after.id);
    if (slot === undefined) return this.add(after);
    const before = this.records[slot]!;
    if (before.owner_id !== after.owner_id) {
      this.remove(before);
      this.add(after);
      return;
    }
    this.records[slot] = after;
    const typeBefore = this.typeOf[slot]!;
    const typeAfter = TYPE_CODES.get(after.type) ?? 0;
    if (typeBefore !== typeAfter) {
      this.byType[typeBefore]!.delete(slot);
      this.byType[typeAfter]!.add(slot);
    }
    this.setColumns(slot, after);
    if (before.title !== after.title) this.titleKeys[slot] = undefined;
    const sameText = before.title === after.title && before.description === after.description && sameTags(before.tags, after.tags);
    if (sameText && typeBefore === typeAfter) return;
    // Only the words that changed move; all of them when the type did (they are kept per type).
    const wordsBefore = listingWords(before);
    const wordsAfter = sameText ? wordsBefore : listingWords(after);
    const retyped = typeBefore !== typeAfter;
    for (const word of wordsBefore) if (retyped || !wordsAfter.has(word)) this.dropWord(word, slot, typeBefore);
    for (const word of wordsAfter) if (retyped || !wordsBefore.has(word)) this.addWord(word, slot, typeAfter);
  }

  /**
   * The slots matching `filter`, in slot order. Starts from the smallest of the candidate lists
   * (each word's range of words, the type, the owner, or all) and tests the rest per slot.
   */
  matches(filter: SearchFilter): number[] {
    if (this.loading) throw new Error('A search must wait for whenReady().');
    const typeCode = filter.type === null ? 0 : (TYPE_CODES.get(filter.type) ?? -1);
    if (typeCode === -1) return [];
    const terms: WordTerm[] = [];
    for (const word of filter.words) {
      const term = this.termOf(word, typeCode);
      if (term.cost === 0) return [];
      terms.push(term);
    }
    const ownerNumber = filter.ownerId === null ? 0 : (this.ownerNumbers.get(filter.ownerId) ?? -1);
    if (ownerNumber === -1) return [];

    // The driver: the smallest candidate list. Its own test is then skipped.
    let driver: Postings | WordTerm = this.all;
    let driverSize = this.all.length;
    let testType = typeCode !== 0;
    let testOwner = ownerNumber !== 0;
    if (testType && this.byType[typeCode]!.length < driverSize) {
      driver = this.byType[typeCode]!;
      driverSize = driver.length;
    }
    if (testOwner && this.byOwner[ownerNumber]!.length < driverSize) {
      driver = this.byOwner[ownerNumber]!;
      driverSize = driver.length;
    }
    terms.sort((left, right) => left.cost - right.cost);
    if (terms.length > 0 && terms[0]!.cost < driverSize) {
      driver = terms.shift()!;
      driverSize = driver.cost;
    }
    // A word term with a type holds only listings of that type.
    if (driver === this.byType[typeCode] || filter.words.length > 0) testType = false;
    if (driver === this.byOwner[ownerNumber]) testOwner = false;
    for (const term of terms) term.prepareTests(driverSize, this.nextSlot);

    const minPrice = filter.minPrice ?? -Infinity;
    const maxPrice = filter.maxPrice ?? Infinity;
    const testPrice = filter.minPrice !== null || filter.maxPrice !== null;
    const { typeOf, ownerOf, priceOf } = this;
    const candidates = driver instanceof Postings ? driver.slots.subarray(0, driver.length) : driver.slotsIn(this.nextSlot);
    const found: number[] = [];
    // One tight loop over typed arrays, the checks inline: this loop is a search's whole cost.
    for (let position = 0; position < candidates.length; position += 1) {
      const slot = candidates[position]!;
      if (testType && typeOf[slot] !== typeCode) continue;
      if (testOwner && ownerOf[slot] !== ownerNumber) continue;
      if (testPrice && (priceOf[slot]! < minPrice || priceOf[slot]! > maxPrice)) continue;
      let held = true;
      for (let term = 0; held && term < terms.length; term += 1) held = terms[term]!.has(slot);
      if (held) found.push(slot);
    }
    return found;
  }

  /**
   * The listings at ranks [start, start + limit) of `slots` in `sort` order. A page in the first
   * half is taken with a bounded heap (about one comparison per match); a later one sorts all
   * the matches, and returns them as `sorted`, worth keeping for the next pages.
   */
  page(slots: number[], sort: SortKey, start: number, limit: number): { items: ListingRecord[]; sorted: ListingRecord[] | null } {
    const compare = this.comparator(sort);
    const wanted = start + limit;
    if (start >= slots.length) return { items: [], sorted: null };
    if (wanted * 2 >= slots.length) {
      const all = slots.slice().sort(compare).map((slot) => this.records[slot]!);
      return { items: all.slice(start, wanted), sorted: all };
    }
    // Slots mostly follow creation order: newest first is best met walking from the end, so
    // the heap fills with the page at once and later slots are turned away by one comparison.
    const best = smallest(slots, wanted, compare, sort === '-created_at');
    return { items: best.slice(start).map((slot) => this.records[slot]!), sorted: null };
  }

  /** Ascending comparator of slots for `sort` ("-field" reversed, ties by id as the lists promise). */
  private comparator(sort: SortKey): (left: number, right: number) => number {
    const { records, createdOf, priceOf } = this;
    const byId = (left: number, right: number): number => compareText(records[left]!.id, records[right]!.id);
    let ascending: (left: number, right: number) => number;
    if (sort === 'created_at' || sort === '-created_at') {
      ascending = (left, right) =>
        createdOf[left]! - createdOf[right]! || compareText(records[left]!.created_at, records[right]!.created_at) || byId(left, right);
    } else if (sort === 'price' || sort === '-price') {
      ascending = (left, right) => priceOf[left]! - priceOf[right]! || byId(left, right);
    } else {
      ascending = (left, right) => compareText(this.titleKey(left), this.titleKey(right)) || byId(left, right);
    }
    return sort.startsWith('-') ? (left, right) => ascending(right, left) : ascending;
  }

  private titleKey(slot: number): string {
    let key = this.titleKeys[slot];
    if (key === undefined) {
      key = this.records[slot]!.title.toLowerCase();
      this.titleKeys[slot] = key;
    }
    return key;
  }

  /** The words starting with `prefix` (a range of the sorted words), in listings of `typeCode` (0: any type). */
  private termOf(prefix: string, typeCode: number): WordTerm {
    const low = this.wordPosition(prefix);
    const high = this.wordPosition(prefix + WORD_END);
    return new WordTerm(this.sortedWords.slice(low, high), typeCode, this.typeOf);
  }

  /** First position in the sorted words whose word is not before `word`. */
  private wordPosition(word: string): number {
    let low = 0;
    let high = this.sortedWords.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.sortedWords[middle]!.word < word) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  private entryOf(word: string): WordEntry {
    let entry = this.words.get(word);
    if (entry === undefined) {
      entry = { word, byType: new Array<Postings | undefined>(TYPE_CODES.size + 1), size: 0 };
      this.words.set(word, entry);
      // A new word goes to its place in the order: a binary search and one memmove of pointers.
      if (this.loading) this.sortedWords.push(entry);
      else this.sortedWords.splice(this.wordPosition(word), 0, entry);
    }
    return entry;
  }

  private addWord(word: string, slot: number, typeCode: number): void {
    const entry = this.entryOf(word);
    const list = (entry.byType[typeCode] ??= new Postings());
    if (list.add(slot)) entry.size += 1;
  }

  private dropWord(word: string, slot: number, typeCode: number): void {
    const entry = this.words.get(word);
    if (entry === undefined) return;
    if (entry.byType[typeCode]?.delete(slot)) entry.size -= 1;
    if (entry.size > 0) return;
    this.words.delete(word);
    if (this.loading) {
      this.sortedWords = this.sortedWords.filter((kept) => kept !== entry);
      return;
    }
    const position = this.wordPosition(word);
    if (this.sortedWords[position] === entry) this.sortedWords.splice(position, 1);
  }

  private ownerNumber(ownerId: string): number {
    let number = this.ownerNumbers.get(ownerId);
    if (number === undefined) {
      number = this.byOwner.length;
      this.byOwner.push(new Postings());
      this.ownerNumbers.set(ownerId, number);
    }
    return number;
  }

  private setColumns(slot: number, listing: ListingRecord): void {
    this.typeOf[slot] = TYPE_CODES.get(listing.type) ?? 0;
    this.priceOf[slot] = listing.price;
    this.createdOf[slot] = Date.parse(listing.created_at);
  }

  private ensureCapacity(slots: number): void {
    if (slots <= this.typeOf.length) return;
    const capacity = Math.max(slots, this.typeOf.length * 2);
    this.typeOf = grown(this.typeOf, new Uint8Array(capacity));
    this.ownerOf = grown(this.ownerOf, new Int32Array(capacity));
    this.priceOf = grown(this.priceOf, new Float64Array(capacity));
    this.createdOf = grown(this.createdOf, new Float64Array(capacity));
  }
}

/**
 * One word of `q`: the slot lists of every word it starts, of the filter's type (or of every
 * type). As the driver it is walked in slot order (one list directly, several merged through a
 * bit set); otherwise it answers "does this slot hold such a word", by a bit set when marking
 * costs less than a binary search per word in the list of the slot's type.
 */
class WordTerm {
  readonly cost: number;
  private bits: Uint32Array | null = null;
  private readonly entries: WordEntry[];
  private readonly lists: Postings[];
  private readonly typeCode: number;
  private readonly typeOf: Uint8Array;

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

  /** Chooses how `has` answers, for about `probes` calls over `slotCount` slots. */
  prepareTests(probes: number, slotCount: number): void {
    if (this.entries.length > 1 && this.cost < probes * this.entries.length * 16) this.bits = this.marked(slotCount);
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
    const bits = this.marked(slotCount);
    const slots = new Int32Array(this.cost);
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

  private marked(slotCount: number): Uint32Array {
    const bits = new Uint32Array((slotCount + 31) >>> 5);
    for (const { slots, length } of this.lists) {
      for (let position = 0; position < length; position += 1) {
        const slot = slots[position]!;
        bits[slot >>> 5]! |= 1 << (slot & 31);
      }
    }
    return bits;
  }
}

/** The `count` smallest of `slots` by `compare`, sorted: a bounded max-heap, O(n log count). */
function smallest(slots: number[], count: number, compare: (left: number, right: number) => number, fromEnd: boolean): number[] {
  const heap: number[] = [];
  const siftDown = (from: number): void => {
    let position = from;
    for (;;) {
      const left = position * 2 + 1;
      const right = left + 1;
      let largest = position;
      if (left < heap.length && compare(heap[left]!, heap[largest]!) > 0) largest = left;
      if (right < heap.length && compare(heap[right]!, heap[largest]!) > 0) largest = right;
      if (largest === position) return;
      [heap[position], heap[largest]] = [heap[largest]!, heap[position]!];
      position = largest;
    }
  };
  for (let index = 0; index < slots.length; index += 1) {
    const slot = slots[fromEnd ? slots.length - 1 - index : index]!;
    if (heap.length < count) {
      heap.push(slot);
      let position = heap.length - 1;
      while (position > 0) {
        const parent = (position - 1) >>> 1;
        if (compare(heap[position]!, heap[parent]!) <= 0) break;
        [heap[position], heap[parent]] = [heap[parent]!, heap[position]!];
        position = parent;
      }
    } else if (compare(slot, heap[0]!) < 0) {
      heap[0] = slot;
      siftDown(0);
    }
  }
  return heap.sort(compare);
}

function grown<Column extends Uint8Array | Int32Array | Float64Array>(old: Column, fresh: Column): Column {
  fresh.set(old as never);
  return fresh;
}

function sameTags(left: readonly string[], right: readonly string[]): boolean {
  return left.length === right.length && left.every((tag, position) => tag === right[position]);
}
