// The user's own activity log (GET /portal/v1/activity), read from the audit log, where every
// account and security event is already written with its change: sign-ins and failed sign-ins
// (with where they came from), sign-outs, keys, plans, webhooks, password, email and two-factor
// changes, whether the user or the operator made them. Key expiries are not writes, so they are
// added from the keys' `expires_at`. An entry belongs to a user when the user acted, or it is
// about the user, one of her keys or one of her plan requests: never anyone else's. Kept as
// long as the audit log; an erased user can no longer read it, and erasure drops the origins.

import type { AuditRecord } from '../../domain/records.ts';
import { AUDIT, KEYS, PLAN_REQUESTS } from '../../domain/records.ts';
import type { RecordChange, Store } from '../../store/store.ts';

/** One line of the activity log, as the user sees it. */
export interface ActivityEntry {
  at: string;
  /** `sign_in`, `key.created`, `plan.request_declined`, … (see ACTIVITY_ACTIONS). */
  action: string;
  client_address: string | null;
  user_agent: string | null;
  target: { type: string; id: string };
}

/** Audit actions shown in the activity log, by the name the user reads. */
export const ACTIVITY_ACTIONS: Readonly<Record<string, string>> = {
  'portal.sign_in': 'sign_in',
  'portal.sign_in_failed': 'sign_in_failed',
  /** The right password, then a wrong code (or recovery code) at the second step. */
  'portal.sign_in_wrong_code': 'sign_in_wrong_code',
  /** A wrong code (or recovery code) given for an account change (email, turning two-factor off, new recovery codes). */
  'portal.wrong_code': 'wrong_code',
  'portal.sign_out': 'sign_out',
  'portal.session_end': 'session.ended',
  'portal.sessions_end': 'sessions.ended',
  'portal.sign_up': 'account.created',
  'user.invite': 'account.invited',
  'user.suspend': 'account.suspended',
  'user.unsuspend': 'account.unsuspended',
  'portal.password_set': 'password.set',
  'portal.password_change': 'password.changed',
  'portal.key_create': 'key.created',
  'key.create': 'key.created',
  'portal.key_roll': 'key.rolled',
  'key.roll': 'key.rolled',
  'portal.key_revoke': 'key.revoked',
  'key.revoke': 'key.revoked',
  'portal.key_update': 'key.updated',
  'key.update': 'key.updated',
  'portal.plan_request': 'plan.requested',
  'portal.plan_request_cancel': 'plan.request_cancelled',
  'plan_request.approve': 'plan.request_approved',
  'plan_request.decline': 'plan.request_declined',
  'portal.webhook_create': 'webhook.created',
  'portal.webhook_delete': 'webhook.deleted',
  'portal.webhook_update': 'webhook.updated',
  'portal.webhook_rotate_secret': 'webhook.secret_rotated',
  'webhook.disable': 'webhook.disabled',
};

/** The name the user reads for an audit entry, or null when it is not an account or security event. */
export function activityAction(record: AuditRecord): string | null {
  const changes = record.changes as Record<string, unknown>;
  if (record.action === 'portal.profile_update' || record.action === 'user.update') {
    // Only what concerns the account's security: the email (a role change is shown as well).
    if ('email' in changes) return 'email.changed';
    if ('role' in changes) return 'role.changed';
    return null;
  }
  // A sign-in finished with a recovery code is told apart: one code fewer is left.
  if (record.action === 'portal.sign_in' && changes.second_factor === 'recovery_code') return 'sign_in_recovery_code';
  if ((record.action === 'portal.key_update' || record.action === 'key.update') && 'plan' in changes) return 'key.plan_changed';
  // Two-factor and role changes, whatever their exact names: named without the portal's prefix.
  if (record.action.includes('two_factor') || record.action.includes('role')) return record.action.replace(/^portal\./, '');
  return ACTIVITY_ACTIONS[record.action] ?? null;
}

export class ActivityLog {
  private readonly store: Store;
  /** Audit entry ids by the ids they name (actor and target), so one user's log costs no scan of the audit log. */
  private readonly bySubject = new Map<string, Set<string>>();

  constructor(store: Store) {
    this.store = store;
    for (const record of store.values(AUDIT)) this.index(record);
  }

  /** Wired to the audit collection's changes in app.ts. */
  onAuditChange({ before, after }: RecordChange<AuditRecord>): void {
    if (after !== undefined) this.index(after);
    if (after === undefined && before !== undefined) for (const subject of subjectsOf(before)) this.bySubject.get(subject)?.delete(before.id);
  }

  /** The user's entries, newest first, as of `nowMs` (key expiries up to then). */
  entriesOf(userId: string, nowMs: number): ActivityEntry[] {
    const subjects = [userId];
    const entries: Array<ActivityEntry & { seq: number }> = [];
    for (const key of this.store.values(KEYS)) {
      if (key.user_id !== userId) continue;
      subjects.push(key.id);
      const expiresMs = key.expires_at == null ? null : Date.parse(key.expires_at);
      const expiredFirst = expiresMs !== null && expiresMs <= nowMs && (key.revoked_at === null || Date.parse(key.revoked_at) > expiresMs);
      if (expiredFirst) entries.push({ at: key.expires_at!, action: 'key.expired', client_address: null, user_agent: null, target: { type: 'key', id: key.id }, seq: Number.MAX_SAFE_INTEGER });
    }
    for (const request of this.store.values(PLAN_REQUESTS)) if (request.user_id === userId) subjects.push(request.id);
    const seen = new Set<string>();
    for (const subject of subjects) {
      for (const auditId of this.bySubject.get(subject) ?? []) {
        if (seen.has(auditId)) continue;
        seen.add(auditId);
        const record = this.store.get(AUDIT, auditId);
        if (record === undefined || !this.belongsTo(record, userId)) continue;
        const action = activityAction(record);
        if (action === null) continue;
        entries.push({
          at: record.at,
          action,
          client_address: record.origin?.client_address ?? null,
          user_agent: record.origin?.user_agent ?? null,
          target: { type: record.target_type, id: record.target_id },
          seq: record.seq ?? 0,
        });
      }
    }
    entries.sort((left, right) => (left.at !== right.at ? (left.at < right.at ? 1 : -1) : right.seq - left.seq));
    return entries.map(({ seq: _seq, ...entry }) => entry);
  }

  /** Hers when she acted, or it names her, her key or her plan request; an operator's entry about someone else never. */
  private belongsTo(record: AuditRecord, userId: string): boolean {
    if (record.actor?.type === 'user') return record.actor.id === userId;
    if (record.target_type === 'user') return record.target_id === userId;
    if (record.target_type === 'key') return this.store.get(KEYS, record.target_id)?.user_id === userId;
    if (record.target_type === 'plan') return this.store.get(PLAN_REQUESTS, record.target_id)?.user_id === userId;
    return false;
  }

  private index(record: AuditRecord): void {
    for (const subject of subjectsOf(record)) {
      let ids = this.bySubject.get(subject);
      if (ids === undefined) {
        ids = new Set();
        this.bySubject.set(subject, ids);
      }
      ids.add(record.id);
    }
  }
}

function subjectsOf(record: AuditRecord): string[] {
  // A webhook switched off for failing names its owner in its changes (no user acted).
  const owner = (record.changes as Record<string, unknown>).owner_id;
  const subjects = record.actor?.type === 'user' ? [record.actor.id, record.target_id] : [record.target_id];
  return typeof owner === 'string' ? [...subjects, owner] : subjects;
}
