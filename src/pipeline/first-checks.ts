// The checks before any area's own: no handler ever sees U+0000 decoded from the path or query;
// and an instance of many answers from memory only once it holds every write acknowledged
// anywhere (src/store/instance-sync.ts): when it is behind it catches up first, and when it
// cannot within the bound it answers 503 (InstanceBehindError), so the balancer's next try goes
// elsewhere. It never answers from the past.

import type { BaseContext } from '../http/context.ts';
import { assertNoNulInUrl } from '../http/url-text.ts';
import type { Store } from '../store/store.ts';

/** The URL check alone: for areas that answer from no records (health, static files, /metrics). */
export function checkUrl(context: BaseContext): void {
  assertNoNulInUrl(context.req.url ?? '');
}

/** `next()` once this instance holds every acknowledged write: at once with one instance, or when it does already. */
export function whenFresh<T>(store: Store, next: () => T | Promise<T>): T | Promise<T> {
  const catchingUp = store.ensureFresh();
  return catchingUp === null ? next() : catchingUp.then(next);
}
