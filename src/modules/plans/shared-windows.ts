// Shared windows (contract section 23): a key on a plan is metered with its user's other keys on
// that plan, so a user cannot multiply a plan's limit, CPU budget or quota by making more keys.
// Without the plans module each key is metered alone (src/analytics/quota-counters.ts Metering).

import type { KeyRecord } from '../../domain/records.ts';

/** Each key record's meter id, made once per record (records are immutable; a changed key is a new record). */
const meterIds = new WeakMap<KeyRecord, string>();

/**
 * What a key is metered as (contract section 23): a key on a plan counts in its user's window on
 * that plan, shared by all of the user's keys on it (and their CPU budget and quota); a key the
 * operator gave a limit of its own counts alone. Ids of keys start with "key_", so a user's
 * "<user id>/<plan id>" never names a key's own window.
 */
export function meterIdOf(key: KeyRecord): string {
  if (!key.plan) return key.id;
  let id = meterIds.get(key);
  if (id === undefined) {
    id = `${key.user_id}/${key.plan}`;
    meterIds.set(key, id);
  }
  return id;
}
