// The listed listings as columns and inverted lists, so a filtered or searched page costs in
// proportion to the listings it can match, not to the marketplace. Each listed listing has a
// slot (a small integer, given in order of arrival and not reused while the process runs); its
// type, owner, price and creation time sit in typed arrays by slot, and the listings of a type
// or of an owner sit in sorted slot lists (Postings). The listings holding each word are kept
// by the word dictionary (word-dictionary.ts), where a word prefix of `q` is a range of words;
// each word of `q` becomes a WordTerm (word-term.ts) for one search.
// A search starts from its rarest part (a word range, the type, the owner, a price range),
// tests the other parts slot by slot, and takes the page in sort order: by creation time with
// a walk from the newest (or oldest) end that stops once the page is settled; by price or
// title by walking that order (ordered-slots.ts) or, for few matches, with a bounded heap.
// The search module's ListingSearch (src/listings/listing-search.ts), installed into the core's
// ListingIndex, which tells it every listing change on every instance.
// At start-up a large store's listings go in by slices between event-loop turns after the
// server listens (a few µs of CPU per listing): a query that needs this index waits for it
// (`ready`); cached pages, look-ups and default-order pages never do.

import { compareText } from '../../domain/order.ts';
import { LISTING_TYPES, type ListingRecord } from '../../domain/records.ts';
import { compareLowerCased, type ListingSearch, type SearchAnswer, type SearchFilter, type SortKey } from '../../listings/listing-search.ts';
import { forEachWord, listingWords } from '../../listings/words.ts';
import { OrderedSlots } from './ordered-slots.ts';
import { Postings } from './postings.ts';
import { markedSlots, slotsOfMarked } from './slot-bits.ts';
import { initialsOf, WordDictionary } from './word-dictionary.ts';
import { WordTerm } from './word-term.ts';

/** How the listings present at start are put in (ListingSearchIndex.addAll). */
export interface WordLoadOptions {
  /** Stores up to this many listings are put in at once (default 20,000). */
  atOnce?: number;
  /** Listings per slice beyond that (default 2,000, a few ms of work). */
  slice?: number;
  /** Runs the next slice later (default setImmediate: after pending I/O); also the slices of the orders' builds. */
  schedule?: (next: () => void) => void;
  /** Slots sorted or merged per slice when the order by price or by title is first made (default 50,000). */
  orderSlice?: number;
}

/** Type → its code in the type column; 0 marks an empty slot. */
const TYPE_CODES = new Map<string, number>(LISTING_TYPES.map((type, position) => [type, position + 1]));

export class ListingSearchIndex implements ListingSearch {
  private readonly slotById = new Map<string, number>();
  private readonly records: Array<ListingRecord | undefined> = [];
  private typeOf = new Uint8Array(1024);
  private ownerOf = new Int32Array(1024);
  private priceOf = new Float64Array(1024);
  private createdOf = new Float64Array(1024);
  /**
   * Bounds on creation times by slot, for stopping a newest- or oldest-first walk early: the
   * latest creation time of any slot up to this one, and the earliest of any slot from this one
   * on. Slots arrive nearly in creation order (a restored listing is the exception), so past
   * the page the bounds soon show that no slot further along can belong on it.
   */
  private createdCeiling = new Float64Array(1024);
  private createdFloor = new Float64Array(1024);
  private nextSlot = 0;
  private readonly ownerNumbers = new Map<string, number>();
  /** Owner number → the owner's slots; number 0 stands for "no owner filter". */
  private readonly byOwner: Postings[] = [new Postings()];
  private readonly byType: Postings[] = Array.from({ length: LISTING_TYPES.length + 1 }, () => new Postings());
  private readonly all = new Postings();
  /** Every listed slot by (price, id): price ranges and pages by price. */
  private readonly byPrice = new OrderedSlots((left, right) => this.priceOf[left]! - this.priceOf[right]! || compareText(this.records[left]!.id, this.records[right]!.id));
  /** Every listed slot by (lower-cased title, id): pages by title. */
  private readonly byTitle = new OrderedSlots((left, right) => compareLowerCased(this.records[left]!.title, this.records[right]!.title) || compareText(this.records[left]!.id, this.records[right]!.id));
  /** Runs the next slice of the start-up load (and of the orders' build) later. */
  private schedule: (next: () => void) => void = setImmediate;
  private orderSlice: number | undefined;
  /** The distinct words and initials, each with the slots holding it. */
  private readonly dictionary = new WordDictionary(TYPE_CODES.size + 1);
  private loading = false;
  /** While loading: the listings present at start, and how many of them are in. */
  private pending: ListingRecord[] = [];
  private loaded = 0;
  /** While loading: the latest state (undefined: no longer listed) of listings changed before the load reached them. */
  private readonly changedDuringLoad = new Map<string, ListingRecord | undefined>();
  private waiters: Array<() => void> = [];
  /** How the listings present at start are put in (addAll). */
  private readonly load: WordLoadOptions;

  constructor(load: WordLoadOptions = {}) {
    this.load = load;
  }

  /**
   * Adds the listings present at start-up: up to `atOnce` of them now, more in slices of `slice`
   * listings, one per event-loop turn (`schedule`, setImmediate by default), so a large store's
   * server listens at once and keeps answering while the index fills. Changes meanwhile are
   * applied as they come to listings already in, and noted for the others.
   */
  addAll(listings: ListingRecord[]): void {
    const options = this.load;
    const atOnce = options.atOnce ?? 20_000;
    const slice = options.slice ?? 2_000;
    const schedule = options.schedule ?? setImmediate;
    this.orderSlice = options.orderSlice;
    this.loading = true;
    this.dictionary.startLoad();
    this.pending = listings;
    this.loaded = 0;
    if (listings.length <= atOnce) {
      // A small store is indexed at once, its orders included.
      this.schedule = (next) => next();
      this.loadSlice(listings.length);
      this.schedule = schedule;
      return;
    }
    this.schedule = schedule;
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
    this.dictionary.endLoad();
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }

  get size(): number {
    return this.all.length;
  }

  /**
   * The order by price (or by title) if made; the first call starts making it, in slices,
   * comparing the keys as they are then (a copy: listings may change or leave meanwhile).
   */
  private readyOrder(order: OrderedSlots): OrderedSlots | null {
    if (order.unmade) {
      const listed = this.records.slice(0, this.nextSlot);
      const ids = listed.map((listing) => listing?.id);
      const byId = (left: number, right: number): number => compareText(ids[left]!, ids[right]!);
      let compare: (left: number, right: number) => number;
      if (order === this.byPrice) {
        const prices = this.priceOf.slice(0, this.nextSlot);
        compare = (left, right) => prices[left]! - prices[right]! || byId(left, right);
      } else {
        const titles = listed.map((listing) => listing?.title);
        compare = (left, right) => compareLowerCased(titles[left]!, titles[right]!) || byId(left, right);
      }
      const { records } = this;
      order.build(this.all.view().slice(), compare, (slot) => records[slot] !== undefined, this.schedule, this.orderSlice);
    }
    return order.ready ? order : null;
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
    this.byPrice.insert(slot);
    this.byTitle.insert(slot);
    this.byType[this.typeOf[slot]!]!.add(slot);
    this.byOwner[this.ownerOf[slot]!]!.add(slot);
    // Repeats need no set: the slot is the newest in its lists, so a second add finds it last and stops.
    const typeCode = this.typeOf[slot]!;
    const { dictionary } = this;
    const addWord = (word: string): void => dictionary.addWordAndInitial(word, slot, typeCode);
    forEachWord(listing.title, addWord);
    forEachWord(listing.description, addWord);
    for (const tag of listing.tags) forEachWord(tag, addWord);
    this.boundCreation(slot);
  }

  /** Keeps createdCeiling and createdFloor true for a new slot (the last one). */
  private boundCreation(slot: number): void {
    const created = this.createdOf[slot]!;
    this.createdCeiling[slot] = slot === 0 ? created : Math.max(created, this.createdCeiling[slot - 1]!);
    this.createdFloor[slot] = created;
    // Usually nothing moves: only a listing older than one already in lowers earlier floors.
    for (let earlier = slot - 1; earlier >= 0 && this.createdFloor[earlier]! > created; earlier -= 1) this.createdFloor[earlier] = created;
  }

  remove(listing: ListingRecord): void {
    const slot = this.slotById.get(listing.id);
    if (slot === undefined) {
      if (this.loading) this.changedDuringLoad.set(listing.id, undefined);
      return;
    }
    const stored = this.records[slot]!;
    this.byPrice.remove(slot);
    this.byTitle.remove(slot);
    this.slotById.delete(listing.id);
    this.records[slot] = undefined;
    this.all.delete(slot);
    this.byType[this.typeOf[slot]!]!.delete(slot);
    this.byOwner[this.ownerOf[slot]!]!.delete(slot);
    const words = listingWords(stored);
    for (const word of words) this.dictionary.dropWord(word, slot, this.typeOf[slot]!);
    for (const initial of initialsOf(words)) this.dictionary.dropInitial(initial, slot, this.typeOf[slot]!);
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
    // Out of the orders first: their comparators read the listing as it was.
    const repriced = before.price !== after.price;
    const retitled = before.title !== after.title;
    if (repriced) this.byPrice.remove(slot);
    if (retitled) this.byTitle.remove(slot);
    this.records[slot] = after;
    const typeBefore = this.typeOf[slot]!;
    const typeAfter = TYPE_CODES.get(after.type) ?? 0;
    if (typeBefore !== typeAfter) {
      this.byType[typeBefore]!.delete(slot);
      this.byType[typeAfter]!.add(slot);
    }
    this.setColumns(slot, after);
    if (repriced) this.byPrice.insert(slot);
    if (retitled) this.byTitle.insert(slot);
    const sameText = before.title === after.title && before.description === after.description && sameTags(before.tags, after.tags);
    if (sameText && typeBefore === typeAfter) return;
    // Only the words that changed move; all of them when the type did (they are kept per type).
    const wordsBefore = listingWords(before);
    const wordsAfter = sameText ? wordsBefore : listingWords(after);
    const retyped = typeBefore !== typeAfter;
    const { dictionary } = this;
    for (const word of wordsBefore) if (retyped || !wordsAfter.has(word)) dictionary.dropWord(word, slot, typeBefore);
    for (const word of wordsAfter) if (retyped || !wordsBefore.has(word)) dictionary.addWord(word, slot, typeAfter);
    const initialsBefore = initialsOf(wordsBefore);
    const initialsAfter = initialsOf(wordsAfter);
    for (const initial of initialsBefore) if (retyped || !initialsAfter.has(initial)) dictionary.dropInitial(initial, slot, typeBefore);
    for (const initial of initialsAfter) if (retyped || !initialsBefore.has(initial)) dictionary.addInitial(initial, slot, typeAfter);
  }

  /** ListingSearch's one question: the matches (`matches`), then the page (`page`). */
  find(filter: SearchFilter, sort: SortKey, start: number, limit: number): SearchAnswer {
    const slots = this.matches(filter);
    const { items, sorted } = this.page(slots, sort, start, limit);
    return { items, total: slots.length, sorted };
  }

  /**
   * The slots matching `filter`, in slot order. Starts from the smallest of the candidate lists
   * (each word's range of words, the type, the owner, or all) and tests the rest per slot; when
   * that list alone answers the filter it is returned as it is, uncopied (read it before the
   * next change).
   */
  matches(filter: SearchFilter): Int32Array {
    if (this.loading) throw new Error('A search must wait for whenReady().');
    const typeCode = filter.type === null ? 0 : (TYPE_CODES.get(filter.type) ?? -1);
    if (typeCode === -1) return NO_SLOTS;
    const terms: WordTerm[] = [];
    for (const word of filter.words) {
      const term = new WordTerm(this.dictionary.entriesStarting(word), typeCode, this.typeOf);
      if (term.cost === 0) return NO_SLOTS;
      terms.push(term);
    }
    const ownerNumber = filter.ownerId === null ? 0 : (this.ownerNumbers.get(filter.ownerId) ?? -1);
    if (ownerNumber === -1) return NO_SLOTS;

    const minPrice = filter.minPrice ?? -Infinity;
    const maxPrice = filter.maxPrice ?? Infinity;
    const byPriceRange = filter.minPrice !== null || filter.maxPrice !== null;

    // The driver: the smallest candidate list. Its own test is then skipped.
    let driver: 'all' | 'type' | 'owner' | 'word' | 'price' = 'all';
    let driverSize = this.all.length;
    if (typeCode !== 0 && this.byType[typeCode]!.length < driverSize) [driver, driverSize] = ['type', this.byType[typeCode]!.length];
    if (ownerNumber !== 0 && this.byOwner[ownerNumber]!.length < driverSize) [driver, driverSize] = ['owner', this.byOwner[ownerNumber]!.length];
    terms.sort((left, right) => left.cost - right.cost);
    if (terms.length > 0 && terms[0]!.cost < driverSize) [driver, driverSize] = ['word', terms[0]!.cost];
    const priceRange = byPriceRange ? this.priceRange(minPrice, maxPrice) : null;
    if (priceRange !== null && priceRange.length < driverSize) [driver, driverSize] = ['price', priceRange.length];
    // A range holding every listing filters nothing.
    const everyPrice = priceRange !== null && priceRange.length === this.all.length;

    let candidates: Int32Array;
    if (driver === 'type') candidates = this.byType[typeCode]!.view();
    else if (driver === 'owner') candidates = this.byOwner[ownerNumber]!.view();
    else if (driver === 'word') candidates = terms.shift()!.slotsIn(this.nextSlot);
    // The listings in the price range come by price: put back in slot order through a bit set
    // (one pass over the slots' bits, where sorting them would cost a comparison sort).
    else if (driver === 'price') candidates = slotsOfMarked(markedSlots([priceRange!], this.nextSlot), priceRange!.length);
    else candidates = this.all.view();
    // A word term with a type holds only listings of that type.
    const testType = typeCode !== 0 && driver !== 'type' && filter.words.length === 0;
    const testOwner = ownerNumber !== 0 && driver !== 'owner';
    const testPrice = byPriceRange && driver !== 'price' && !everyPrice;
    if (!testType && !testOwner && !testPrice && terms.length === 0) return candidates;
    for (const term of terms) term.prepareTests(driverSize, this.nextSlot);

    const { typeOf, ownerOf, priceOf } = this;
    const found = new Int32Array(candidates.length);
    let count = 0;
    // One tight loop over typed arrays, the checks inline: this loop is a search's whole cost.
    for (let position = 0; position < candidates.length; position += 1) {
      const slot = candidates[position]!;
      if (testType && typeOf[slot] !== typeCode) continue;
      if (testOwner && ownerOf[slot] !== ownerNumber) continue;
      if (testPrice && (priceOf[slot]! < minPrice || priceOf[slot]! > maxPrice)) continue;
      let held = true;
      for (let term = 0; held && term < terms.length; term += 1) held = terms[term]!.has(slot);
      if (held) found[count++] = slot;
    }
    return found.subarray(0, count);
  }

  /** The slots priced within [min, max], by price; null while the price order is being built. */
  private priceRange(min: number, max: number): Int32Array | null {
    const order = this.readyOrder(this.byPrice);
    if (order === null) return null;
    const { priceOf } = this;
    const low = order.firstRankNotBefore((slot) => priceOf[slot]! < min);
    const high = order.firstRankNotBefore((slot) => priceOf[slot]! <= max);
    return order.between(low, high);
  }

  /**
   * The listings at ranks [start, start + limit) of `slots` in `sort` order. By creation time, a
   * walk from the matching end with a bounded heap, stopped as soon as the creation-time bounds
   * show no further slot can rank on the page (about as many steps as the page is long). By
   * price or title, a page in the first half is taken with a bounded heap (about one comparison
   * per match); a later one sorts all the matches, and returns them as `sorted`, worth keeping
   * for the next pages.
   */
  page(slots: Int32Array, sort: SortKey, start: number, limit: number): { items: ListingRecord[]; sorted: ListingRecord[] | null } {
    const compare = this.comparator(sort);
    const wanted = start + limit;
    if (start >= slots.length) return { items: [], sorted: null };
    if (sort === '-created_at' || sort === 'created_at') {
      const { createdOf, createdCeiling, createdFloor } = this;
      // Stop once every slot left is older (newest first) or newer (oldest first) than the page's last.
      const done =
        sort === '-created_at'
          ? (slot: number, last: number): boolean => createdCeiling[slot]! < createdOf[last]!
          : (slot: number, last: number): boolean => createdFloor[slot]! > createdOf[last]!;
      const best = smallest(slots, wanted, compare, sort === '-created_at', done);
      return { items: best.slice(start).map((slot) => this.records[slot]!), sorted: null };
    }
    const order = this.readyOrder(sort === 'title' ? this.byTitle : this.byPrice);
    if (order !== null && wanted * this.all.length <= slots.length * slots.length * 4) {
      // Many matches: fewer steps to walk the whole order to the page than to rank every match.
      return { items: this.walk(order, slots, sort === '-price', start, limit), sorted: null };
    }
    if (wanted * 2 >= slots.length) {
      const all = Array.from(slots).sort(compare).map((slot) => this.records[slot]!);
      return { items: all.slice(start, wanted), sorted: all };
    }
    const best = smallest(slots, wanted, compare, false, null);
    return { items: best.slice(start).map((slot) => this.records[slot]!), sorted: null };
  }

  /** The matches at ranks [start, start + limit) of `order`, walking it from one end. */
  private walk(order: OrderedSlots, slots: Int32Array, descending: boolean, start: number, limit: number): ListingRecord[] {
    const member = slots.length === this.all.length ? null : markedSlots([slots], this.nextSlot);
    const items: ListingRecord[] = [];
    const count = order.length;
    let rank = 0;
    for (let step = 0; step < count && items.length < limit; step += 1) {
      const slot = order.at(descending ? count - 1 - step : step);
      if (member !== null && (member[slot >>> 5]! & (1 << (slot & 31))) === 0) continue;
      if (rank >= start) items.push(this.records[slot]!);
      rank += 1;
    }
    return items;
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
      ascending = (left, right) => compareLowerCased(records[left]!.title, records[right]!.title) || byId(left, right);
    }
    return sort.startsWith('-') ? (left, right) => ascending(right, left) : ascending;
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
    this.createdCeiling = grown(this.createdCeiling, new Float64Array(capacity));
    this.createdFloor = grown(this.createdFloor, new Float64Array(capacity));
  }
}

/**
 * The `count` smallest of `slots` by `compare`, sorted: a bounded max-heap, O(n log count).
 * `fromEnd` walks the slots backwards; `done(slot, worst)`, once the heap is full, ends the walk
 * when no slot from this one on can beat the heap's worst.
 */
function smallest(
  slots: Int32Array,
  count: number,
  compare: (left: number, right: number) => number,
  fromEnd: boolean,
  done: ((slot: number, worst: number) => boolean) | null,
): number[] {
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
    } else if (done !== null && done(slot, heap[0]!)) {
      break;
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

const NO_SLOTS = new Int32Array(0);

function sameTags(left: readonly string[], right: readonly string[]): boolean {
  return left.length === right.length && left.every((tag, position) => tag === right[position]);
}
