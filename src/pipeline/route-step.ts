// The route step every area shares: the request's method and path looked up in the area's
// router; 404 for an unknown path, 405 with Allow for a known path asked with another method.
// What it finds is recorded on the context: the route's label (analytics, metrics and the
// access log count the request under it) and the path's parameters.

import type { BaseContext } from '../http/context.ts';
import { routeLabel } from '../http/route.ts';
import { HttpError } from '../domain/errors.ts';
import type { RouteMatch, Router } from '../router.ts';

type AnyRoute = { method: string; pattern: string };

/** The matched route, recorded on the context; or the 404 / 405. */
export function matchRoute<R extends AnyRoute>(router: Router<R>, context: BaseContext): R {
  return routeOf(router.match(context.method, context.path), context);
}

/** As matchRoute, for a look-up the gate already made (the portal's, which picks the context by it). */
export function routeOf<R extends AnyRoute>(match: RouteMatch<R>, context: BaseContext): R {
  if (match.kind !== 'found') return refuseUnmatched(match, context);
  context.routeLabel = routeLabel(match.route);
  context.params = match.params;
  return match.route;
}

/** The 404 for an unknown path, or the 405 with Allow (counted under the path's pattern) for another method. */
export function refuseUnmatched(match: Exclude<RouteMatch<unknown>, { kind: 'found' }>, context: BaseContext): never {
  const { method, path } = context;
  if (match.kind === 'not-found') throw new HttpError(404, `No route ${method} ${path}.`);
  context.routeLabel = `${method} ${match.pattern}`;
  const allowed = match.allowed.join(', ');
  throw new HttpError(405, `${method} is not allowed on ${path}. Allowed: ${allowed}.`, { headers: { Allow: allowed } });
}

/**
 * For a request refused before its route step (no key, a wrong token, a preflight, the CPU
 * budget or the rate limit): names the route it asked for (one router look-up, on the refusal
 * path only), so metrics, analytics and the access log count it there; an unknown path keeps no
 * label and is counted as unmatched.
 */
export function labelAskedRoute<R extends AnyRoute>(router: Router<R>, context: BaseContext, method = context.method): void {
  const match = router.match(method, context.path);
  if (match.kind !== 'found') return;
  context.routeLabel = method === context.method ? routeLabel(match.route) : `${context.method} ${match.route.pattern}`;
}
