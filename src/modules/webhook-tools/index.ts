// Running a webhook through /v1 (contract section 23's "webhooks people run"): PATCH
// /v1/webhooks/:id changes, pauses or resumes one, POST /v1/webhooks/:id/rotate-secret gives it a
// new secret with a grace for the old one, POST /v1/webhooks/:id/recover sends again every event
// not delivered since a time; and a webhook whose every delivery has failed for 5 days is
// switched off (audited), for its owner to resume. Installed by src/app.ts when
// MARKETPLACE_MODULES names `webhook-tools`. Without it webhooks are registered, listed, removed,
// delivered, signed, retried and redelivered as ever (the core's /v1/webhooks); these three
// routes are gone, and a failing webhook keeps its retries, since nothing could resume it.

import type { MarketplaceModule } from '../../module.ts';
import { webhookToolOperations } from './openapi.ts';
import { webhookToolRoutes } from './routes.ts';

/** Every delivery of a webhook failing for this long (none delivered) switches it off, until its owner resumes it. */
const FAILING_FOR_MS = 5 * 24 * 60 * 60 * 1000;

export const webhookToolsModule: MarketplaceModule = {
  name: 'webhook-tools',
  install(host) {
    const { store, clock, config, outbox, audit, backends } = host;
    host.addApiRoutes(webhookToolRoutes({ store, clock, outbox, audit, allowPrivate: config.webhookAllowPrivate, redeliveryLimiter: backends.redeliveryLimiter, eventRetentionDays: config.eventRetentionDays }));
    host.addOpenApi({ operations: webhookToolOperations });
    host.switchOffFailingWebhooks({
      afterMs: FAILING_FOR_MS,
      // No request, so no request id; the owner is named for their activity.
      entryOp: (webhook, failingSince) =>
        audit.entryOp('webhook-dispatcher', {
          action: 'webhook.disable',
          target_type: 'webhook',
          target_id: webhook.id,
          changes: { owner_id: webhook.user_id, url: webhook.url, disabled_reason: 'failing', failing_since: failingSince },
        }),
    });
  },
};
