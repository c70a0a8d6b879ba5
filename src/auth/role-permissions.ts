// What a user's role may ever use, for keys users make themselves in the portal (contract
// section 20): a creator may hold any entry; a member may hold none that grants a write on
// listings (only creators create listings, so a member's key never needs one). An entry is
// judged by the /v1 routes it would open, whatever its form: a scope (`write:listings`), a
// route (`PUT /v1/listings/:id`), a concrete path (`PUT /v1/listings/lst_…`) or a prefix
// (`POST /v1/*`). When a user's role changes, keysNarrowedTo gives each of their keys without
// the entries the new role may never hold (the operator's route writes them with the change).

import { KEYS, type KeyRecord, type Role } from '../domain/records.ts';
import type { RecordReader } from '../store/collections.ts';
import { Router } from '../router.ts';
import { ROUTE_ENTRY } from './key-rules.ts';
import { PermissionSet, type PermissionRoute } from './permissions.ts';

/** The /v1 routes a role may never be granted. */
function routesBeyond(role: Role, apiRoutes: readonly PermissionRoute[]): PermissionRoute[] {
  if (role === 'creator') return [];
  return apiRoutes.filter((route) => route.resource === 'listings' && route.method !== 'GET');
}

/** The entries of `entries` that would open a route `role` may never use (empty: all allowed). */
export function entriesBeyondRole(entries: readonly string[], role: Role, apiRoutes: readonly PermissionRoute[]): string[] {
  const forbidden = routesBeyond(role, apiRoutes);
  if (forbidden.length === 0) return [];
  const router = new Router<PermissionRoute>();
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

/**
 * Each live key of `userId` that holds an entry `role` may never hold, before and after those
 * entries are taken out (a prefix or scope that opens such a route goes whole: narrower, never
 * wider). Revoked keys grant nothing and are left as they were.
 */
export function keysNarrowedTo(reader: RecordReader, userId: string, role: Role, apiRoutes: readonly PermissionRoute[], now: string): Array<{ before: KeyRecord; after: KeyRecord }> {
  const narrowed: Array<{ before: KeyRecord; after: KeyRecord }> = [];
  for (const key of reader.values(KEYS)) {
    if (key.user_id !== userId || key.revoked_at !== null) continue;
    const beyond = new Set(entriesBeyondRole(key.permissions, role, apiRoutes));
    if (beyond.size === 0) continue;
    narrowed.push({ before: key, after: { ...key, permissions: key.permissions.filter((entry) => !beyond.has(entry)), updated_at: now } });
  }
  return narrowed;
}
