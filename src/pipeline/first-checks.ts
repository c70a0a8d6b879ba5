// The checks before any area's own: no handler ever sees U+0000 decoded from the path or query;
// and an instance of many that cannot vouch it holds every acknowledged write answers nothing
// from memory (it would answer from the past): 503, and the balancer's next try goes elsewhere.

import { instanceBehind } from '../domain/errors.ts';
import type { BaseContext } from '../http/context.ts';
import { assertNoNulInUrl } from '../http/url-text.ts';
import type { Store } from '../store/store.ts';

/** The URL check alone: for areas that answer from no records (health, static files, /metrics). */
export function checkUrl(context: BaseContext): void {
  assertNoNulInUrl(context.req.url ?? '');
}

/** The URL check, then the instance's standing: for areas that answer from the records (/v1, /portal/v1, /admin). */
export function checkUrlAndStanding(context: BaseContext, store: Store): void {
  checkUrl(context);
  const stale = store.staleness();
  if (stale !== null) throw instanceBehind(stale);
}
