// What a user's role may ever use, for keys users make themselves in the portal (contract
// section 20): a creator may hold any entry; a member may hold none that grants a write on
// listings (only creators create listings, so a member's key never needs one). An entry is
// judged by the /v1 routes it would open, whatever its form: a scope (`write:listings`), a
// route (`PUT /v1/listings/:id`), a concrete path (`PUT /v1/listings/lst_…`) or a prefix
// (`POST /v1/*`).

import type { Role } from '../domain/records.ts';
import type { ApiRoute } from '../http/route.ts';
import { Router } from '../router.ts';
import { ROUTE_ENTRY } from './key-rules.ts';
import { PermissionSet } from './permissions.ts';

/** The /v1 routes a role may never be granted. */
function routesBeyond(role: Role, apiRoutes: readonly ApiRoute[]): ApiRoute[] {
  if (role === 'creator') return [];
  return apiRoutes.filter((route) => route.resource === 'listings' && route.method !== 'GET');
}

/** The entries of `entries` that would open a route `role` may never use (empty: all allowed). */
export function entriesBeyondRole(entries: readonly string[], role: Role, apiRoutes: readonly ApiRoute[]): string[] {
  const forbidden = routesBeyond(role, apiRoutes);
  if (forbidden.length === 0) return [];
  const router = new Router<ApiRoute>();
  for (const route of forbidden) router.add(route);
  return entries.filter((entry) => {
    const single = new PermissionSet([entry]);
    // Scopes, route patterns and prefixes: judged against each forbidden route's pattern.
    if (forbidden.some((route) => single.allows(route, route.pattern))) return true;
    // A concrete path ("PUT /v1/listings/lst_x") opens the route its path matches.
    const route = ROUTE_ENTRY.exec(entry);
    return route !== null && !route[2]!.endsWith('/*') && router.match(route[1]!, route[2]!).kind === 'found';
  });
}
