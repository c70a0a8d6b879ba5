// The words text search sees, for the listings' text and for `q` alike: the text is decomposed
// (NFKD) and stripped of its combining marks, so accents and compatibility forms are ignored,
// lower-cased, and cut at every character that is neither a letter nor a digit. "Zèbre-Rouge"
// holds the words "zebre" and "rouge"; `q` matches a listing when each of its words is the
// start of some word of the listing's title, description or tags.

const ASCII_ONLY = /^[\x00-\x7f]*$/;
const ASCII_SEPARATORS = /[^a-z0-9]+/;
const SEPARATORS = /[^\p{L}\p{N}]+/u;
const COMBINING_MARKS = /\p{M}+/gu;

/** The words of `text`, in order, repeats kept; none for text without letters or digits. */
export function wordsOf(text: string): string[] {
  // Most listing text is ASCII: the fast path skips normalisation (about half of a load's cost).
  const folded = ASCII_ONLY.test(text) ? text.toLowerCase() : text.toLowerCase().normalize('NFKD').replace(COMBINING_MARKS, '');
  const words = folded.split(ASCII_ONLY.test(folded) ? ASCII_SEPARATORS : SEPARATORS);
  // split leaves an empty string at each end the text starts or ends with a separator.
  if (words.length > 0 && words[0] === '') words.shift();
  if (words.length > 0 && words[words.length - 1] === '') words.pop();
  return words;
}

/**
 * Calls `visit` with each word of `text`, repeats included, without building an array: the
 * load of a million listings calls it for every field.
 */
export function forEachWord(text: string, visit: (word: string) => void): void {
  if (!ASCII_ONLY.test(text)) {
    for (const word of wordsOf(text)) visit(word);
    return;
  }
  const lower = text.toLowerCase();
  let start = -1;
  for (let position = 0; position <= lower.length; position += 1) {
    const code = position < lower.length ? lower.charCodeAt(position) : 0;
    const wordCharacter = (code >= 97 && code <= 122) || (code >= 48 && code <= 57);
    if (wordCharacter) {
      if (start < 0) start = position;
    } else if (start >= 0) {
      visit(lower.slice(start, position));
      start = -1;
    }
  }
}

/** The distinct words of a listing's searchable fields: title, description and each tag. */
export function listingWords(listing: { title: string; description: string; tags: readonly string[] }): Set<string> {
  const words = new Set<string>(wordsOf(listing.title));
  for (const word of wordsOf(listing.description)) words.add(word);
  for (const tag of listing.tags) for (const word of wordsOf(tag)) words.add(word);
  return words;
}

/**
 * The words of a search, without repeats and without any word that starts another one: a listing
 * holding "zebra" also holds a word starting with "zeb", so "zeb zebra" asks no more than "zebra".
 */
export function queryWords(q: string): string[] {
  const distinct = [...new Set(wordsOf(q))].sort();
  // Sorted, a word that starts another sits right before one that it starts (or one that does).
  return distinct.filter((word, position) => !distinct.slice(position + 1).some((other) => other.startsWith(word)));
}
