// The one file that imports the optional modules (src/modules/), each only when
// MARKETPLACE_MODULES names it: a module left out is never loaded, so none of its code runs
// or takes memory.

import type { ModuleName } from '../config.ts';
import type { MarketplaceModule } from '../module.ts';

const LOADERS: Readonly<Record<ModuleName, () => Promise<MarketplaceModule>>> = {
  portal: async () => (await import('../modules/portal/index.ts')).portalModule,
  dashboard: async () => (await import('../modules/dashboard/index.ts')).dashboardModule,
  search: async () => (await import('../modules/search/index.ts')).searchModule,
  moderation: async () => (await import('../modules/moderation/index.ts')).moderationModule,
  events: async () => (await import('../modules/events/index.ts')).eventsModule,
  metrics: async () => (await import('../modules/metrics/index.ts')).metricsModule,
  plans: async () => (await import('../modules/plans/index.ts')).plansModule,
  'webhook-tools': async () => (await import('../modules/webhook-tools/index.ts')).webhookToolsModule,
  'cpu-budget': async () => (await import('../modules/cpu-budget/index.ts')).cpuBudgetModule,
  compression: async () => (await import('../modules/compression/index.ts')).compressionModule,
  idempotency: async () => (await import('../modules/idempotency/index.ts')).idempotencyModule,
};

/** The named modules, loaded, in the order given. */
export function loadModules(names: readonly ModuleName[]): Promise<MarketplaceModule[]> {
  return Promise.all(names.map((name) => LOADERS[name]()));
}
