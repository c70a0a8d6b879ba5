// The operator dashboard: the page at /dashboard and its scripts, which call the operator API
// with the operator token. Installed by src/app.ts when MARKETPLACE_MODULES names `dashboard`.

import { pageServer } from '../../http/static-pages.ts';
import type { MarketplaceModule } from '../../module.ts';

export const dashboardModule: MarketplaceModule = {
  name: 'dashboard',
  install(host) {
    host.addStaticFiles(pageServer({ dashboardIndex: true, portalPage: false }));
  },
};
