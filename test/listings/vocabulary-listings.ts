// Listings for the CPU-budget tests: each titled and described with words of the search
// reference's vocabulary, so a one-word search matches hundreds of them and costs real work.

import { LISTINGS, LISTING_TYPES, type ListingRecord } from '../../src/domain/records.ts';
import { VOCABULARY } from './search-reference.ts';

/** `count` store operations putting such listings, owned by `ownerId`, made at `at` (ISO). */
export function vocabularyListingOps(count: number, ownerId: string, at: string): { op: 'put'; collection: typeof LISTINGS; id: string; data: ListingRecord }[] {
  return Array.from({ length: count }, (_, number) => {
    const listing: ListingRecord = {
      id: `lst_${number.toString().padStart(8, '0')}`,
      title: `${VOCABULARY[number % VOCABULARY.length]} ${VOCABULARY[(number * 7) % VOCABULARY.length]}`,
      description: VOCABULARY.slice(number % 9, (number % 9) + 6).join(' '),
      type: LISTING_TYPES[number % LISTING_TYPES.length]!,
      price: number % 500,
      tags: [],
      status: 'active',
      owner_id: ownerId,
      created_at: at,
      updated_at: at,
    };
    return { op: 'put' as const, collection: LISTINGS, id: listing.id, data: listing };
  });
}
