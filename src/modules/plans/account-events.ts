// Events about a user's account, sent to their own webhooks like every event (contract section
// 23): `quota.warning` when a plan's quota is 80 % used and `quota.exhausted` when it is used up
// (each once a period), and `key.expiring` seven days before a key's `expires_at` (once per
// expiry: a key given a new `expires_at` is told again). `plan_request.decided` is queued with
// the decision itself (routes.ts).

import { isoTime, type Clock } from '../../clock.ts';
import { KEYS, type KeyRecord } from '../../domain/records.ts';
import type { EventType } from '../../domain/events.ts';
import type { Store } from '../../store/store.ts';
import type { WebhookOutbox } from '../../webhooks/outbox.ts';

export const KEY_EXPIRING_NOTICE_MS = 7 * 24 * 60 * 60 * 1000;

/** Queues one account event for `userId`'s webhooks, in a write of its own (off the request's path). */
export function queueAccountEvent(store: Store, outbox: WebhookOutbox, type: EventType, userId: string, data: object): Promise<void> {
  return store.commit((tx) => ({ ops: outbox.eventOps(tx, type, userId, data), result: undefined }));
}

/** The keys that expire within the notice and were not told of this expiry: each gets `key.expiring`, marked in the same write. */
export async function sendExpiryNotices(store: Store, outbox: WebhookOutbox, clock: Clock): Promise<number> {
  const now = clock.now();
  let sent = 0;
  for (const key of store.values(KEYS)) {
    if (!dueForNotice(key, now)) continue;
    const told = await store.commit((tx) => {
      const current = tx.get(KEYS, key.id);
      if (current === undefined || !dueForNotice(current, now)) return { ops: [], result: false };
      const marked: KeyRecord = { ...current, expiry_notice_for: current.expires_at! };
      const data = { key_id: current.id, name: current.name, prefix: current.prefix, last_four: current.last_four, plan: current.plan ?? null, expires_at: current.expires_at };
      return { ops: [{ op: 'put', collection: KEYS, id: current.id, data: marked }, ...outbox.eventOps(tx, 'key.expiring', current.user_id, data)], result: true };
    });
    if (told) sent += 1;
  }
  return sent;
}

function dueForNotice(key: KeyRecord, now: number): boolean {
  if (key.revoked_at !== null || !key.expires_at || key.expiry_notice_for === key.expires_at) return false;
  const expiresAt = Date.parse(key.expires_at);
  return expiresAt > now && expiresAt - now <= KEY_EXPIRING_NOTICE_MS;
}

/** When a quota count crosses 80 % or reaches the quota: its event, for the user of the meter ("<user id>/<plan id>"). */
export function quotaEventData(meterId: string, quota: { requests: number; period: string }, used: number, resetsAtMs: number) {
  const slash = meterId.lastIndexOf('/');
  return { userId: meterId.slice(0, slash), data: { user_id: meterId.slice(0, slash), plan: meterId.slice(slash + 1), requests: quota.requests, used, period: quota.period, resets_at: isoTime(resetsAtMs) } };
}
