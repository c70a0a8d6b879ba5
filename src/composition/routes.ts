// The core's routes on each surface, made from its parts, with the modules' added in their
// places: a module's operator routes sit where they have always sat in /openapi.json
// (moderation's after the users and keys, the plans' after moderation's and a key's quota after
// its usage, GET /metrics after the audit log, the portal's last),
// so the document keeps its order.

import { adminUsageRoute } from '../handlers/admin/key-usage.ts';
import { auditRoutes } from '../handlers/admin/audit.ts';
import { coreAdminRoutes } from '../handlers/admin/core.ts';
import { adminWebhookRoutes } from '../handlers/admin/webhooks.ts';
import { healthRoutes } from '../handlers/public/health.ts';
import { homeRoute } from '../handlers/public/home.ts';
import { readinessRoute } from '../handlers/public/readiness.ts';
import { analyticsRoutes } from '../handlers/v1/analytics.ts';
import { listingRoutes } from '../handlers/v1/listings.ts';
import { userRoutes } from '../handlers/v1/users.ts';
import { webhookRoutes } from '../handlers/v1/webhooks.ts';
import type { ApiRoute, AdminRoute, PublicRoute } from '../http/route.ts';
import type { Core } from './core.ts';
import type { ModuleAdditions } from './module-host.ts';

/** The spec's /v1 routes: listings, users, analytics, webhooks. */
export function coreApiRoutes(core: Core): ApiRoute[] {
  const { store, clock, index, pageCache, recorder, outbox, usageReader, backends, config, metering } = core;
  return [
    ...listingRoutes({ store, clock, index, pageCache, usage: recorder, outbox }),
    ...userRoutes({ store, clock, outbox }),
    ...analyticsRoutes({ store, clock, usage: usageReader, keyLimiter: backends.keyLimiter, metering }),
    ...webhookRoutes({ store, clock, outbox, allowPrivate: config.webhookAllowPrivate, redeliveryLimiter: backends.redeliveryLimiter }),
  ];
}

/**
 * The modules' /v1 routes added to the core's: the webhook-tools module's each after the core
 * route /openapi.json has always listed it after (so the document keeps its order), the others
 * at the end.
 */
export function addModuleApiRoutes(apiRoutes: ApiRoute[], moduleRoutes: readonly ApiRoute[]): void {
  const placedAfter: Readonly<Record<string, string>> = {
    'PATCH /v1/webhooks/:id': 'POST /v1/webhooks',
    'POST /v1/webhooks/:id/rotate-secret': 'DELETE /v1/webhooks/:id',
    'POST /v1/webhooks/:id/recover': 'POST /v1/webhooks/:id/rotate-secret',
  };
  for (const route of moduleRoutes) {
    const after = placedAfter[`${route.method} ${route.pattern}`];
    const position = apiRoutes.findIndex((placed) => `${placed.method} ${placed.pattern}` === after);
    if (position === -1) apiRoutes.push(route);
    else apiRoutes.splice(position + 1, 0, route);
  }
}

/** The operator API: the core's routes with the modules' in their places. */
export function adminRoutes(core: Core, apiRoutes: readonly ApiRoute[], added: ModuleAdditions): AdminRoute[] {
  const { store, clock, audit, outbox, usageReader, config, backends, startedAtMs, metering } = core;
  const placed = ['moderation', 'plans', 'metrics', 'portal'] as const;
  const ofModule = (name: (typeof placed)[number]) => added.adminRoutes.get(name) ?? [];
  // The plans module's key quota route sits with the key's usage, its plan and plan-request routes before the audit log.
  const isQuotaRoute = (route: AdminRoute) => route.pattern === '/admin/v1/keys/:id/quota';
  return [
    ...coreAdminRoutes({ store, clock, brand: config.brand, apiRoutes, outbox, lastUsedAt: (keyId) => usageReader.lastUsedAt(keyId), startedAtMs, audit, backends: backends.description, plans: () => metering.plans }),
    ...ofModule('moderation'),
    ...ofModule('plans').filter((route) => !isQuotaRoute(route)),
    ...auditRoutes(audit),
    ...ofModule('metrics'),
    adminUsageRoute({ store, clock, usage: usageReader, keyLimiter: backends.keyLimiter, metering }),
    ...ofModule('plans').filter(isQuotaRoute),
    ...adminWebhookRoutes({ store, outbox }),
    ...ofModule('portal'),
    ...[...added.adminRoutes].filter(([name]) => !(placed as readonly string[]).includes(name)).flatMap(([, routes]) => routes),
  ];
}

/** The home page, health, the OpenAPI document (made by `document` on first request) and readiness. */
export function publicRoutes(core: Core, document: () => Buffer | Promise<Buffer>, added: ModuleAdditions): PublicRoute[] {
  return [homeRoute(), ...healthRoutes(document), readinessRoute(core.readiness), ...added.publicRoutes];
}
