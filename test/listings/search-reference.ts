// The answer GET /v1/listings must give, worked out the plain way: every listing checked one by
// one against the contract's rule (section 8), written here independently of src/listings, and
// random queries of every filter, text, sort and page to ask both.

import { LISTING_TYPES, type ListingRecord } from '../../src/domain/records.ts';

export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = Math.imul(state ^ (state >>> 15), 1 | state);
    mixed = (mixed + Math.imul(mixed ^ (mixed >>> 7), 61 | mixed)) ^ mixed;
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4294967296;
  };
}

/** Words with accents, cases, ligatures, digits, scripts without case, and shared prefixes. */
export const VOCABULARY = [
  'Zebra', 'zèbre', 'ZEBU', 'zed', 'apple', 'Äpfel', 'app', 'a', 'b2b', 'naïve', 'Café', 'cafeteria', 'über', 'X-ray',
  'ﬁle', 'file', '日本語', 'déjà-vu', "l'été", 'résumé', 'resume', '42', '4x4', 'Ωmega', 'omega', 'vector', 'Vectors', 'ÉCOLE',
];
export const OWNERS = ['usr_a', 'usr_b', 'usr_c', 'usr_d'];
export const PRICES = [0, 1, 5, 9.99, 10, 100, 250.5, 999_999.99];
export const SORTS = ['created_at', '-created_at', 'price', '-price', 'title'] as const;

/** The contract's words (section 8), written independently of src/listings/words.ts. */
function referenceWords(text: string): string[] {
  return text
    .toLowerCase()
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word !== '');
}

function compareText(left: string, right: string): number {
  return left < right ? -1 : left > right ? 1 : 0;
}

const ASCENDING = {
  created_at: (left: ListingRecord, right: ListingRecord) => compareText(left.created_at, right.created_at) || compareText(left.id, right.id),
  price: (left: ListingRecord, right: ListingRecord) => left.price - right.price || compareText(left.id, right.id),
  title: (left: ListingRecord, right: ListingRecord) => compareText(left.title.toLowerCase(), right.title.toLowerCase()) || compareText(left.id, right.id),
};

/** Every listing checked one by one: the answer GET /v1/listings must give (`suspended`: owners whose listings are hidden). */
export function plainAnswer(listings: Iterable<ListingRecord>, suspended: ReadonlySet<string>, params: URLSearchParams): { ids: string[]; total: number } {
  const q = params.get('q');
  const queryWords = q === null ? [] : referenceWords(q);
  const matches = [...listings].filter((listing) => {
    if (listing.status !== 'active' || suspended.has(listing.owner_id)) return false;
    if (params.has('type') && listing.type !== params.get('type')) return false;
    if (params.has('owner_id') && listing.owner_id !== params.get('owner_id')) return false;
    if (params.has('min_price') && listing.price < Number(params.get('min_price'))) return false;
    if (params.has('max_price') && listing.price > Number(params.get('max_price'))) return false;
    const words = [listing.title, listing.description, ...listing.tags].flatMap(referenceWords);
    return queryWords.every((wanted) => words.some((word) => word.startsWith(wanted)));
  });
  const sort = (params.get('sort') ?? '-created_at') as (typeof SORTS)[number];
  const ascending = ASCENDING[sort.replace('-', '') as keyof typeof ASCENDING];
  matches.sort(sort.startsWith('-') ? (left, right) => ascending(right, left) : ascending);
  const limit = Number(params.get('limit') ?? 20);
  const start = (Number(params.get('page') ?? 1) - 1) * limit;
  return { ids: matches.slice(start, start + limit).map((listing) => listing.id), total: matches.length };
}

/** A random query: each filter sometimes, q as prefixes of vocabulary words in any case. */
export function randomQuery(random: () => number, owners: readonly string[] = OWNERS): URLSearchParams {
  const pick = <Item>(items: readonly Item[]): Item => items[Math.floor(random() * items.length)]!;
  const params = new URLSearchParams();
  if (random() < 0.3) params.set('type', pick(LISTING_TYPES));
  if (random() < 0.25) params.set('owner_id', random() < 0.9 ? pick(owners) : 'usr_nobody');
  if (random() < 0.2) params.set('min_price', String(pick(PRICES)));
  if (random() < 0.2) params.set('max_price', String(Math.max(Number(params.get('min_price') ?? 0), pick(PRICES))));
  const textRoll = random();
  if (textRoll < 0.55) {
    const prefix = (): string => {
      const word = pick(VOCABULARY);
      const cut = word.slice(0, 1 + Math.floor(random() * word.length));
      return random() < 0.3 ? cut.toUpperCase() : cut;
    };
    params.set('q', random() < 0.3 ? `${prefix()} ${prefix()}` : prefix());
  } else if (textRoll < 0.6) params.set('q', pick(['!!', 'zzz', 'ebra', 'pple', ' - ', 'zebrafish']));
  if (random() < 0.8) params.set('sort', pick(SORTS));
  params.set('limit', String(1 + Math.floor(random() * 30)));
  params.set('page', String(1 + Math.floor(random() * 4)));
  return params;
}

