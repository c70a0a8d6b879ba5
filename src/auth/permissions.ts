// Key permissions. An entry is a route (`GET /v1/listings`, `PUT /v1/listings/:id`, or a
// concrete path), a route prefix (`GET /v1/listings/*`), or a scope (`read:listings`,
// `write:webhooks`; write = POST, PUT, PATCH and DELETE). Entries are checked when a key is
// made and compiled once per key record, so the per-request check is a few comparisons.

import { RESOURCES, type Resource } from '../http/route.ts';
import { Router } from '../router.ts';
import { PERMISSION_METHODS, ROUTE_ENTRY, SCOPE_ENTRY } from './key-rules.ts';

export interface PermissionRoute {
  method: string;
  pattern: string;
  resource: Resource;
}

export function scopeFor(method: string, resource: Resource): string {
  return `${method === 'GET' ? 'read' : 'write'}:${resource}`;
}

/** The entries that would allow `route`, for the 403 body's `required`. */
export function requiredEntries(route: PermissionRoute): string[] {
  return [`${route.method} ${route.pattern}`, scopeFor(route.method, route.resource)];
}

/** Null when `entry` is well formed for these routes, else why it is not. */
export function checkPermissionEntry(entry: unknown, routes: readonly PermissionRoute[]): string | null {
  if (typeof entry !== 'string') return 'must be a string';
  const scope = SCOPE_ENTRY.exec(entry);
  if (scope) {
    return (RESOURCES as readonly string[]).includes(scope[2]!)
      ? null
      : `unknown resource "${scope[2]}" (known: ${RESOURCES.join(', ')})`;
  }
  const routeEntry = ROUTE_ENTRY.exec(entry);
  if (!routeEntry) {
    return 'must look like "read:listings", "write:webhooks", "GET /v1/listings", "PUT /v1/listings/:id" or "GET /v1/listings/*"';
  }
  const [, method, path] = routeEntry as unknown as [string, string, string];
  if (!(PERMISSION_METHODS as readonly string[]).includes(method)) return `unknown method ${method} (known: ${PERMISSION_METHODS.join(', ')})`;
  if (path.endsWith('/*')) {
    const prefix = path.slice(0, -1);
    return routes.some((route) => route.method === method && routeLiesUnder(route.pattern, prefix))
      ? null
      : `no ${method} route lies under ${path}`;
  }
  const matcher = cachedRouterOf(routes);
  const match = matcher.match(method, path);
  if (match.kind === 'found' || routes.some((route) => route.method === method && route.pattern === path)) return null;
  return `there is no route ${method} ${path}`;
}

/**
 * True when some path of `pattern` starts with `prefix` (which ends in "/"), i.e. when the
 * prefix entry would grant something: "/v1/listings/:id" lies under "/v1/listings/", but
 * "/v1/listings" itself does not, as the request-time check (a string prefix) agrees.
 */
function routeLiesUnder(pattern: string, prefix: string): boolean {
  const prefixSegments = prefix.split('/').slice(1, -1);
  const patternSegments = pattern.split('/').slice(1);
  if (patternSegments.length <= prefixSegments.length) return false;
  return prefixSegments.every((segment, index) => patternSegments[index] === segment || patternSegments[index]!.startsWith(':'));
}

const routerCache = new WeakMap<readonly PermissionRoute[], Router<PermissionRoute>>();
/** One router per route list, made at its first key check. */
function cachedRouterOf(routes: readonly PermissionRoute[]): Router<PermissionRoute> {
  let router = routerCache.get(routes);
  if (!router) {
    router = new Router<PermissionRoute>();
    for (const route of routes) router.add(route);
    routerCache.set(routes, router);
  }
  return router;
}

/** A key's entries, sorted by form, ready for quick checks. */
export class PermissionSet {
  private readonly scopes = new Set<string>();
  private readonly exact = new Set<string>();
  private readonly prefixes: Array<{ method: string; prefix: string }> = [];
  /** Whether a scope or a route entry allows a route: it depends on the route alone, so it is worked out once per route. */
  private readonly byRoute = new Map<PermissionRoute, boolean>();

  constructor(entries: readonly string[]) {
    for (const entry of entries) {
      if (SCOPE_ENTRY.test(entry)) this.scopes.add(entry);
      else if (entry.endsWith('/*')) {
        const space = entry.indexOf(' ');
        this.prefixes.push({ method: entry.slice(0, space), prefix: entry.slice(space + 1, -1) });
      } else this.exact.add(entry);
    }
  }

  allows(route: PermissionRoute, concretePath: string): boolean {
    let allowedByRoute = this.byRoute.get(route);
    if (allowedByRoute === undefined) {
      allowedByRoute = this.scopes.has(scopeFor(route.method, route.resource)) || this.exact.has(`${route.method} ${route.pattern}`);
      this.byRoute.set(route, allowedByRoute);
    }
    if (allowedByRoute) return true;
    if (this.exact.size > 0 && this.exact.has(`${route.method} ${concretePath}`)) return true;
    for (const { method, prefix } of this.prefixes) {
      if (method === route.method && concretePath.startsWith(prefix)) return true;
    }
    return false;
  }
}

const compiled = new WeakMap<readonly string[], PermissionSet>();

/** The compiled set for a key's entries; a key record's array is never mutated, so this is safe. */
export function permissionSetOf(entries: readonly string[]): PermissionSet {
  let set = compiled.get(entries);
  if (!set) {
    set = new PermissionSet(entries);
    compiled.set(entries, set);
  }
  return set;
}
