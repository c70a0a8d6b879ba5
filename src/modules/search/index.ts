// The search module: the listings' search index (search-index.ts), so that text, price and
// owner filters and the sorts by price and title cost in proportion to their matches. It takes
// the place of the core's scan (src/listings/scanning-search.ts), which answers the same; the
// price is the index's upkeep on every listing write and its memory (columns and word lists).

import type { MarketplaceModule } from '../../module.ts';
import { ListingSearchIndex } from './search-index.ts';

export const searchModule: MarketplaceModule = {
  name: 'search',
  install(host) {
    host.useListingSearch(() => new ListingSearchIndex());
  },
};
