// Drops what the server would otherwise keep for ever: audit entries (the users' activity log
// is made of them) older than AUDIT_RETENTION_DAYS, and keys revoked or expired more than
// ENDED_KEY_RETENTION_DAYS ago, with the plan requests made for them. Without it a busy
// server's memory and log grow with every action ever taken (issue 43: the soak's RSS floor
// rose ~11.6 MiB a minute). 0 keeps them for ever. Deletions are decided when their write
// commits, so a key no longer ended (or already gone) meanwhile is left alone; audit entries
// are never rewritten, so theirs only checks the entry is still there.

import type { Clock } from '../clock.ts';
import { DAY_MS } from '../analytics/buckets.ts';
import { AUDIT, KEYS, PLAN_REQUESTS, type KeyRecord } from '../domain/records.ts';
import type { WriteOp } from '../store/format.ts';
import type { DecisionReader, Store } from '../store/store.ts';

export interface RetentionSettings {
  /** Audit entries older than this many days are deleted; 0 keeps them for ever. */
  auditRetentionDays: number;
  /** Keys revoked or expired more than this many days ago are deleted; 0 keeps them for ever. */
  endedKeyRetentionDays: number;
}

/** Deletions per write, so one sweep after a long time is not one enormous log line. */
const DELETES_PER_WRITE = 1_000;

/** When a key stopped working (revoked or expired), in wall ms, or null while it still works. */
function endedAtMs(key: KeyRecord, nowMs: number): number | null {
  const revoked = key.revoked_at === null ? Infinity : Date.parse(key.revoked_at);
  const expires = key.expires_at == null ? Infinity : Date.parse(key.expires_at);
  const ended = Math.min(revoked, expires);
  return Number.isFinite(ended) && ended <= nowMs ? ended : null;
}

/**
 * Deletes the audit entries and ended keys past their retention; returns how many records went.
 * @example await sweepRetention(store, clock, { auditRetentionDays: 365, endedKeyRetentionDays: 90 });
 */
export async function sweepRetention(store: Store, clock: Clock, settings: RetentionSettings): Promise<number> {
  let deleted = 0;
  if (settings.auditRetentionDays > 0) {
    const cutoff = clock.now() - settings.auditRetentionDays * DAY_MS;
    const ids: string[] = [];
    for (const entry of store.values(AUDIT)) if (Date.parse(entry.at) < cutoff) ids.push(entry.id);
    deleted += await deleteInSlices(store, ids, (slice, tx) =>
      slice.filter((id) => tx.get(AUDIT, id) !== undefined).map((id): WriteOp => ({ op: 'del', collection: AUDIT, id })),
    );
  }
  if (settings.endedKeyRetentionDays > 0) {
    const cutoff = clock.now() - settings.endedKeyRetentionDays * DAY_MS;
    const isLongEnded = (key: KeyRecord | undefined): boolean => {
      if (key === undefined) return false;
      const ended = endedAtMs(key, clock.now());
      return ended !== null && ended < cutoff;
    };
    const ids: string[] = [];
    for (const key of store.values(KEYS)) if (isLongEnded(key)) ids.push(key.id);
    if (ids.length > 0) {
      const requestsByKey = new Map<string, string[]>();
      for (const request of store.values(PLAN_REQUESTS)) {
        const list = requestsByKey.get(request.key_id);
        if (list === undefined) requestsByKey.set(request.key_id, [request.id]);
        else list.push(request.id);
      }
      deleted += await deleteInSlices(store, ids, (slice, tx) =>
        slice
          .filter((id) => isLongEnded(tx.get(KEYS, id)))
          .flatMap((id): WriteOp[] => [
            { op: 'del', collection: KEYS, id },
            ...(requestsByKey.get(id) ?? []).filter((requestId) => tx.get(PLAN_REQUESTS, requestId) !== undefined).map((requestId): WriteOp => ({ op: 'del', collection: PLAN_REQUESTS, id: requestId })),
          ]),
      );
    }
  }
  return deleted;
}

/** Commits the deletions `decide` makes of each slice of `ids`, decided again at commit. */
async function deleteInSlices(store: Store, ids: string[], decide: (slice: string[], tx: DecisionReader) => WriteOp[]): Promise<number> {
  let deleted = 0;
  for (let start = 0; start < ids.length; start += DELETES_PER_WRITE) {
    const slice = ids.slice(start, start + DELETES_PER_WRITE);
    deleted += await store.commit((tx) => {
      const ops = decide(slice, tx);
      return { ops, result: ops.length };
    });
  }
  return deleted;
}
