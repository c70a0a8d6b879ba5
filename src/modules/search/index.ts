// The search index of listings (placeholder until the index moves here).

import type { MarketplaceModule } from '../../module.ts';

export const searchModule: MarketplaceModule = {
  name: 'search',
  install() {},
};
