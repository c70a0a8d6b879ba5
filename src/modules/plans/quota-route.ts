// POST /admin/v1/keys/:id/quota: sets (`used`) or tops up (`add`) the count of the key's user and
// plan against the plan's quota, saved and audited in one write. The plans module's: without it
// no key has a quota, and the route is not served.

import type { AuditLog } from '../../audit/audit-log.ts';
import { isoTime, type Clock } from '../../clock.ts';
import { KEYS, QUOTA_COUNTS, type QuotaCountRecord } from '../../domain/records.ts';
import { conflict, notFound } from '../../domain/errors.ts';
import { BodyChecker } from '../../http/validation.ts';
import type { KeylessContext, AdminRoute, Reply } from '../../http/route.ts';
import type { Store } from '../../store/store.ts';
import { quotaView, type QuotaCounters } from './quota-counters.ts';
import { meterIdOf } from './shared-windows.ts';

export interface AdminQuotaRouteDeps {
  store: Store;
  clock: Clock;
  audit: AuditLog;
  quotas: QuotaCounters;
}

/** The most a count may be set to or topped up by. */
const MAX_QUOTA_CHANGE = 1_000_000_000;

/** `{used}` or `{add}`, exactly one; a 400 names every problem. */
export function readQuotaChange(body: Record<string, unknown>): { used: number } | { add: number } {
  const checker = new BodyChecker(body, ['used', 'add']);
  const used = checker.integer('used', 0, MAX_QUOTA_CHANGE);
  const add = checker.integer('add', 1, MAX_QUOTA_CHANGE);
  if (checker.has('used') && checker.has('add')) checker.fail('add', 'cannot be sent with used: send one of them');
  if (!checker.has('used') && !checker.has('add')) checker.fail('used', 'or add is required');
  checker.finish();
  return used !== undefined ? { used } : { add: add! };
}

export function adminQuotaRoute({ store, clock, audit, quotas }: AdminQuotaRouteDeps): AdminRoute {
  return {
    method: 'POST',
    pattern: '/admin/v1/keys/:id/quota',
    summary: "Set or top up the count of a key's user and plan against the plan's quota",
    async handle(context: KeylessContext): Promise<Reply> {
      const change = readQuotaChange(await context.readJsonBody());
      const keyId = context.params.id!;
      const found = store.get(KEYS, keyId);
      if (!found) throw notFound('Key');
      const quota = quotas.quotaOf(found);
      if (quota === undefined) throw conflict(`Key ${keyId} is not on a plan with a quota.`);
      const meterId = meterIdOf(found);
      const counter = await quotas.usedNow(meterId, quota);
      const from = counter.used;
      const to = 'used' in change ? change.used : Math.max(0, from - change.add);
      const record: QuotaCountRecord = { id: meterId, period: counter.period, start: isoTime(counter.start), used: to, updated_at: isoTime(clock.now()) };
      const changes = { meter: meterId, period: quota.period, used: { from, to }, ...('add' in change ? { add: change.add } : {}) };
      // Saved with its audit entry; the count moves (in memory, or in Redis) once the write is in.
      await context.commit<null>(() => ({
        ops: [{ op: 'put', collection: QUOTA_COUNTS, id: meterId, data: record }, audit.entryOp(context.requestId, { action: 'key.quota', target_type: 'key', target_id: keyId, changes })],
        result: null,
      }));
      const adjusted = await quotas.adjust(meterId, quota, change);
      return { status: 200, body: { data: quotaView(quota, adjusted) } };
    },
  };
}
