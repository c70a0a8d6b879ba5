// Each user's event log (contract section 23's optional part "events"): every event the user's
// webhooks would receive, kept EVENT_RETENTION_DAYS, read a page at a time (GET /v1/events) or
// followed live (GET /v1/events/stream). Installed by src/app.ts when MARKETPLACE_MODULES names
// `events`. Without it webhooks still deliver, retry and redeliver (their events live in the
// outbox's own records); only the pull-able log is gone, and no event is logged meanwhile.

import { EVENT_LOG } from '../../domain/records.ts';
import type { EventLogRecord } from '../../domain/webhook-records.ts';
import type { MarketplaceModule } from '../../module.ts';
import type { RecordChange } from '../../store/collections.ts';
import { EventLog } from './event-log.ts';
import { EventStreams } from './event-streams.ts';
import { eventOperations } from './openapi.ts';
import { eventRoutes } from './routes.ts';

/** Old events leave the logs hourly, with the core's other retention sweeps. */
const SWEEP_MS = 60 * 60 * 1000;

export const eventsModule: MarketplaceModule = {
  name: 'events',
  install(host) {
    const { store, clock, config, outbox } = host;
    const eventLog = new EventLog(store, clock, config.eventRetentionDays);
    // Logged in the same write as the change that made the event (src/webhooks/outbox.ts).
    outbox.logEventsIn(eventLog);
    host.onStoreChange((change) => {
      if (change.collection === EVENT_LOG) eventLog.onStoreChange(change as RecordChange<EventLogRecord>);
    });
    // The open GET /v1/events/stream responses, counted and capped.
    const streams = new EventStreams(eventLog, config.eventStreams);
    host.measureOpenEventStreams(() => streams.openCount());
    host.addApiRoutes(eventRoutes({ store, clock, eventLog, streams }));
    host.addOpenApi({ operations: eventOperations });
    host.every(SWEEP_MS, 'could not sweep the event logs', async () => void (await eventLog.sweep()));
    host.onStopping(() => streams.closeAll());
  },
};
