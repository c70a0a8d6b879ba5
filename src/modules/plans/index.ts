// Plans (contract section 23's "higher tiers"): the operator's plan list and plan requests under
// /admin/v1, each plan's quota per UTC day or month counted by the /v1 gate (X-Quota-* headers,
// 429 once used up, POST /admin/v1/keys/:id/quota), shared windows (a key on a plan is metered
// with its user's other keys on that plan), and the account events quota.warning,
// quota.exhausted, key.expiring and plan_request.decided. Installed by src/app.ts when
// MARKETPLACE_MODULES names `plans`; the portal needs it (src/config.ts MODULE_NEEDS). Without
// it a key is on no plan and metered alone against its own rate_limit, with no quota, and no
// plan route is served.

import type { MarketplaceModule } from '../../module.ts';
import { keyPlans } from '../../resources/key-plans.ts';
import { queueAccountEvent, quotaEventData, sendExpiryNotices } from './account-events.ts';
import { planOperations, quotaOperations } from './openapi.ts';
import { QuotaCounters } from './quota-counters.ts';
import { adminQuotaRoute } from './quota-route.ts';
import { planRoutes } from './routes.ts';
import { meterIdOf } from './shared-windows.ts';

/** How often keys expiring within 7 days are looked for (key.expiring). */
const EXPIRY_NOTICE_SWEEP_MS = 15 * 60 * 1000;

export const plansModule: MarketplaceModule = {
  name: 'plans',
  install(host) {
    const { store, clock, config, outbox, audit, backends, metering, warn } = host;
    // Counted in memory, saved with the usage counts (never a write per request); crossing 80 %
    // and reaching the quota are told to the user's webhooks.
    const quotas = new QuotaCounters({
      store,
      clock,
      warn,
      flushIntervalMs: config.usageFlushMs,
      shared: backends.quotaCounts,
      onCrossing: (meterId, kind, quota, counter) => {
        const { userId, data } = quotaEventData(meterId, quota, counter.used, counter.end);
        queueAccountEvent(store, outbox, kind, userId, data).catch((error: unknown) => warn(`could not queue ${kind}: ${(error as Error).message}`));
      },
    });
    metering.meterOf = meterIdOf;
    metering.quotas = quotas;
    metering.plans = keyPlans;
    quotas.start();
    host.addAdminRoutes([...planRoutes({ store, clock, audit, outbox }), adminQuotaRoute({ store, clock, audit, quotas })]);
    host.addOpenApi({
      operations: { ...planOperations, ...quotaOperations },
      descriptionLines: [
        "All of one user's keys on one plan share the plan's window (and its CPU budget); a key with a limit of its own has its own. When the plan has a quota,",
        'every /v1 answer also carries X-Quota-Limit, X-Quota-Remaining and X-Quota-Reset (Unix seconds of the end of the UTC day or month).',
      ],
      webhookEvents: ['quota.warning', 'quota.exhausted', 'key.expiring', 'plan_request.decided'],
    });
    host.every(EXPIRY_NOTICE_SWEEP_MS, 'could not send key.expiring events', async () => void (await sendExpiryNotices(store, outbox, clock)));
    host.onClose(() => quotas.stop());
  },
};
