// The audit trail (the `audit` collection): operator actions, and users' own actions in the portal
// (their `actor` names the user). A handler asks for the op that records its
// action and commits it together with the change, so no change exists without its entry and
// no entry without its change. Entries are listed newest first.

import type { Clock } from '../clock.ts';
import { isoTime } from '../clock.ts';
import { newId } from '../domain/ids.ts';
import { AUDIT, type AuditActor, type AuditRecord, type RequestOrigin } from '../domain/records.ts';
import type { WriteOp } from '../store/format.ts';
import type { Store } from '../store/store.ts';

/** What a handler says about its action; time, id and request id are added here. */
export interface AuditEntry {
  action: string;
  target_type: AuditRecord['target_type'];
  target_id: string;
  changes: Record<string, unknown>;
  /** Who acted; the operator when absent. */
  actor?: AuditActor;
  /** The request's client address and user agent, kept for the user's activity log (sign-ins). */
  origin?: RequestOrigin;
}

const OPERATOR: AuditActor = { type: 'operator' };

/** The actor of an entry made by a signed-in user acting on their own account. */
export function userActor(userId: string): AuditActor {
  return { type: 'user', id: userId };
}

/** The stored record: the contract's fields plus a sequence number for a stable order. */
export type StoredAuditRecord = AuditRecord;

export interface AuditFilter {
  action: string | null;
  targetId: string | null;
}

export class AuditLog {
  private readonly store: Store;
  private readonly clock: Clock;
  /** Entries made within one millisecond still sort in the order they were made. */
  private lastSeq: number;

  constructor(store: Store, clock: Clock) {
    this.store = store;
    this.clock = clock;
    let last = 0;
    for (const record of store.values(AUDIT)) last = Math.max(last, record.seq ?? 0);
    this.lastSeq = last;
  }

  /**
   * The op recording `entry`, for the same store write as the change it describes.
   * @example context.commit([userPut, audit.entryOp(context.requestId, { action: 'user.suspend', … })], reply)
   */
  entryOp(requestId: string, entry: AuditEntry): WriteOp {
    this.lastSeq += 1;
    const record: StoredAuditRecord = { id: newId('aud'), at: isoTime(this.clock.now()), ...entry, request_id: requestId, seq: this.lastSeq };
    return { op: 'put', collection: AUDIT, id: record.id, data: record };
  }

  /** Matching entries, newest first. */
  find(filter: AuditFilter): StoredAuditRecord[] {
    const found: StoredAuditRecord[] = [];
    for (const record of this.store.values(AUDIT)) {
      if (filter.action !== null && record.action !== filter.action) continue;
      if (filter.targetId !== null && record.target_id !== filter.targetId) continue;
      found.push(record);
    }
    return found.sort(newestFirst);
  }
}

function newestFirst(left: StoredAuditRecord, right: StoredAuditRecord): number {
  if (left.at !== right.at) return left.at < right.at ? 1 : -1;
  if (left.seq !== right.seq) return right.seq - left.seq;
  return left.id < right.id ? 1 : left.id > right.id ? -1 : 0;
}

/** The entry as the API shows it (without the internal sequence number). */
export function auditView(record: StoredAuditRecord): Omit<AuditRecord, 'seq'> & { actor: AuditActor } {
  return {
    id: record.id,
    at: record.at,
    actor: record.actor ?? OPERATOR,
    action: record.action,
    target_type: record.target_type,
    target_id: record.target_id,
    changes: record.changes,
    request_id: record.request_id,
  };
}

/** `{field: {from, to}}` for each of `fields` whose value differs between the two records. */
export function fieldChanges<T extends object>(before: T, after: T, fields: readonly (keyof T & string)[]): Record<string, { from: unknown; to: unknown }> {
  const changes: Record<string, { from: unknown; to: unknown }> = {};
  for (const field of fields) {
    const from = before[field] ?? null;
    const to = after[field] ?? null;
    if (JSON.stringify(from) !== JSON.stringify(to)) changes[field] = { from, to };
  }
  return changes;
}
