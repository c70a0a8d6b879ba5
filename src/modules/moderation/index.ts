// Moderation (contract section 16): the operator suspends and reinstates users, erases a user
// and their personal data, and removes or restores listings. Installed by src/app.ts when
// MARKETPLACE_MODULES names `moderation`. Without it, records a suspension left still count
// (the core's gate refuses a suspended user's keys); only the acts are gone.

import type { MarketplaceModule } from '../../module.ts';
import { moderationOperations } from './openapi.ts';
import { moderationRoutes } from './routes.ts';

export const moderationModule: MarketplaceModule = {
  name: 'moderation',
  install(host) {
    const { store, clock, audit, outbox } = host;
    host.addAdminRoutes(moderationRoutes({ store, clock, audit, outbox }));
    host.addOpenApi({ operations: moderationOperations });
  },
};
