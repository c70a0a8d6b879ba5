// The demo's keys as the start banner shows them (src/banner.ts): on the start that seeds them
// (src/demo.ts) the plain keys, on every later start their outlines, found by the name the demo
// gives them.

import { KEYS, USERS } from './domain/records.ts';
import type { Store } from './store/store.ts';

export interface DemoKey {
  user: string;
  user_id: string;
  role: string;
  /** The plain key on the start that made it; later only its prefix and last four characters (`market_live_…gyg1`). */
  key: string;
  /** True when `key` is the plain key (the first start); false when it is only its outline. */
  plain: boolean;
  permissions: readonly string[];
}

/** The name the demo gives its keys, so later starts can tell them apart from the operator's. */
export const DEMO_KEY_NAME = 'demo key';

/** The demo keys still usable, for the banner of a later start: the secrets are gone (only hashes are kept), so each shows as its outline. */
export function describeDemoKeys(store: Store): DemoKey[] {
  const keys: DemoKey[] = [];
  for (const key of store.values(KEYS)) {
    if (key.name !== DEMO_KEY_NAME || key.revoked_at !== null) continue;
    const user = store.get(USERS, key.user_id);
    if (!user) continue;
    keys.push({ user: user.name, user_id: user.id, role: user.role, key: `${key.prefix}…${key.last_four}`, plain: false, permissions: key.permissions });
  }
  return keys.sort((left, right) => left.user.localeCompare(right.user));
}
