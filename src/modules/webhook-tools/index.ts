// Running a webhook through /v1 (contract section 23's "webhooks people run"): PATCH
// /v1/webhooks/:id changes, pauses or resumes one, POST /v1/webhooks/:id/rotate-secret gives it a
// new secret with a grace for the old one, POST /v1/webhooks/:id/recover sends again every event
// not delivered since a time. Installed by src/app.ts when MARKETPLACE_MODULES names
// `webhook-tools`. Without it webhooks are registered, listed, removed, delivered, signed,
// retried and redelivered as ever (the core's /v1/webhooks); only these three routes are gone.

import type { MarketplaceModule } from '../../module.ts';
import { webhookToolOperations } from './openapi.ts';
import { webhookToolRoutes } from './routes.ts';

export const webhookToolsModule: MarketplaceModule = {
  name: 'webhook-tools',
  install(host) {
    const { store, clock, config, outbox, audit, backends } = host;
    host.addApiRoutes(webhookToolRoutes({ store, clock, outbox, audit, allowPrivate: config.webhookAllowPrivate, redeliveryLimiter: backends.redeliveryLimiter, eventRetentionDays: config.eventRetentionDays }));
    host.addOpenApi({ operations: webhookToolOperations });
  },
};
