// The distinct words of the listed listings, for text search. Each word, and each first letter
// (or digit) of a word, has an entry with the slots of the listings holding it, one list per
// type, so a search with a type starts from that type's listings alone. Every distinct word is
// also kept in string order, so the words a prefix of `q` starts are one range found by two
// binary searches, never a scan of the text; a one-letter prefix is its initial's one list
// rather than the union of every word it starts. ListingSearchIndex (search-index.ts) owns the
// slots and tells the dictionary which words each slot gains and loses. While the start-up load
// runs, new words are appended and sorted once at its end (a sort beats a splice per word).

import { compareText } from '../../domain/order.ts';
import { Postings } from './postings.ts';

/**
 * One distinct word (or initial): the slots holding it, kept per type (index = type code, made
 * on first use).
 */
export interface WordEntry {
  word: string;
  byType: Array<Postings | undefined>;
  /** Slots in all the type lists together; a word is dropped at 0 (an initial is kept). */
  size: number;
  /** The entry of the word's first character (null for an initial). */
  initial: WordEntry | null;
}

/** Above every character a word holds (letters and digits), so `prefix + WORD_END` ends a prefix's range. */
const WORD_END = '\uffff';

export class WordDictionary {
  private readonly words = new Map<string, WordEntry>();
  /**
   * First letter (or digit) → the listings holding a word that starts with it: a one-letter `q`
   * is one list, never the union of every word that starts with that letter.
   */
  private readonly initials = new Map<string, WordEntry>();
  /** Every distinct word in string order; while loading, appended and sorted once at the end. */
  private sortedWords: WordEntry[] = [];
  private loading = false;
  /** How many type codes an entry keeps lists for (code 0 included). */
  private readonly typeCodeCount: number;

  constructor(typeCodeCount: number) {
    this.typeCodeCount = typeCodeCount;
  }

  /** Until endLoad, new words are appended unsorted: a load brings many at once. */
  startLoad(): void {
    this.loading = true;
  }

  /** Sorts the words the load appended; from now on a new word goes straight to its place. */
  endLoad(): void {
    this.loading = false;
    this.sortedWords.sort((left, right) => compareText(left.word, right.word));
  }

  /** Slot `slot` (of type `typeCode`) holds `word`, and so a word starting with its initial. */
  addWordAndInitial(word: string, slot: number, typeCode: number): void {
    const entry = this.entryOf(word);
    addToEntry(entry, slot, typeCode);
    addToEntry(entry.initial!, slot, typeCode);
  }

  /** Slot `slot` (of type `typeCode`) holds `word`. */
  addWord(word: string, slot: number, typeCode: number): void {
    addToEntry(this.entryOf(word), slot, typeCode);
  }

  /** Slot `slot` (of type `typeCode`) no longer holds `word`; a word no slot holds is forgotten. */
  dropWord(word: string, slot: number, typeCode: number): void {
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

  /** Slot `slot` (of type `typeCode`) holds a word starting with `initial`. */
  addInitial(initial: string, slot: number, typeCode: number): void {
    addToEntry(this.initialEntry(initial), slot, typeCode);
  }

  /** Slot `slot` (of type `typeCode`) no longer holds a word starting with `initial`. */
  dropInitial(initial: string, slot: number, typeCode: number): void {
    const entry = this.initials.get(initial);
    if (entry?.byType[typeCode]?.delete(slot)) entry.size -= 1;
  }

  /**
   * The entries of every word starting with `prefix`: a range of the sorted words, or for a
   * one-character prefix its initial's entry alone. Call only once the load has ended.
   */
  entriesStarting(prefix: string): WordEntry[] {
    if (prefix.length === initialOf(prefix).length) {
      const entry = this.initials.get(prefix);
      return entry === undefined ? [] : [entry];
    }
    const low = this.wordPosition(prefix);
    const high = this.wordPosition(prefix + WORD_END);
    return this.sortedWords.slice(low, high);
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
      entry = { word, byType: new Array<Postings | undefined>(this.typeCodeCount), size: 0, initial: this.initialEntry(initialOf(word)) };
      this.words.set(word, entry);
      // A new word goes to its place in the order: a binary search and one memmove of pointers.
      if (this.loading) this.sortedWords.push(entry);
      else this.sortedWords.splice(this.wordPosition(word), 0, entry);
    }
    return entry;
  }

  /** The entry of one initial, made on first use and kept (there are only so many letters and digits). */
  private initialEntry(initial: string): WordEntry {
    let entry = this.initials.get(initial);
    if (entry === undefined) {
      entry = { word: initial, byType: new Array<Postings | undefined>(this.typeCodeCount), size: 0, initial: null };
      this.initials.set(initial, entry);
    }
    return entry;
  }
}

function addToEntry(entry: WordEntry, slot: number, typeCode: number): void {
  const list = (entry.byType[typeCode] ??= new Postings());
  if (list.add(slot)) entry.size += 1;
}

/** The first character (code point) of a word. */
function initialOf(word: string): string {
  const first = word.charCodeAt(0);
  // A surrogate pair is one character (an emoji, a rare letter).
  return first >= 0xd800 && first <= 0xdbff ? word.slice(0, 2) : word.charAt(0);
}

/** The distinct first characters of `words`. */
export function initialsOf(words: Iterable<string>): Set<string> {
  const initials = new Set<string>();
  for (const word of words) initials.add(initialOf(word));
  return initials;
}
