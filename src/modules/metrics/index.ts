// Prometheus metrics at GET /metrics (contract section 23's optional part "metrics"): requests,
// their durations and 429s, the store's fsyncs and log size, webhook deliveries, memory, CPU
// time and event-loop delay. Installed by src/app.ts when MARKETPLACE_MODULES names `metrics`.
// The core calls the hooks it sets here (src/module.ts `Measures`) where things happen; without
// it those hooks are empty, nothing is counted, and GET /metrics answers 404.

import { WEBHOOKS } from '../../domain/records.ts';
import type { WebhookRecord } from '../../domain/webhook-records.ts';
import type { MarketplaceModule } from '../../module.ts';
import type { RecordChange } from '../../store/collections.ts';
import { metricsOperations } from './openapi.ts';
import { metricsRoute } from './route.ts';
import { ServerMetrics } from './server-metrics.ts';

export const metricsModule: MarketplaceModule = {
  name: 'metrics',
  install(host) {
    const { store, measures } = host;
    const metrics = new ServerMetrics({ residentMemoryBytes: () => process.memoryUsage.rss(), sampled: measures });
    metrics.start(store);
    measures.requests = metrics;
    measures.fsync = (seconds) => metrics.observeFsync(seconds);
    measures.droppedDeliveries = (howMany) => metrics.countDroppedDeliveries(howMany);
    // Delivery attempts are counted from the outcomes the dispatcher writes on the webhooks.
    host.onStoreChange((change) => {
      if (change.collection === WEBHOOKS) metrics.onWebhookChange(change as RecordChange<WebhookRecord>);
    });
    host.addAdminRoutes([metricsRoute(metrics)]);
    host.addOpenApi({ operations: metricsOperations });
    host.onClose(() => metrics.stop());
  },
};
