// Idempotency-Key on POST (contract section 7, beyond the spec, as Stripe does it): a repeat of a
// POST with the same key and body within 24 h gets the first answer again and changes nothing
// (src/modules/idempotency/guard.ts). Installed by src/app.ts when MARKETPLACE_MODULES names
// `idempotency`: the /v1 gate claims the key through what the module gives the host
// (src/http/key-context.ts `PostIdempotency`), and the claim's answer is recorded in the same
// write as the change. Without it the header is not read: every POST is a new request.

import type { MarketplaceModule } from '../../module.ts';
import { IdempotencyGuard } from './guard.ts';

/** Records are swept this often: the count bound (IDEMPOTENCY_MAX_RECORDS) holds to within a minute's creates. */
const SWEEP_MS = 60 * 1000;

export const idempotencyModule: MarketplaceModule = {
  name: 'idempotency',
  install(host) {
    const { store, clock, config } = host;
    const guard = new IdempotencyGuard(store, () => clock.now(), config.idempotencyMaxRecords);
    host.useIdempotency(guard);
    host.every(SWEEP_MS, 'could not sweep idempotency records', () => guard.sweepExpired());
  },
};
