// The /portal/v1 gate, the developer portal's session API. Its steps, in order:
//   0. the URL (U+0000); answers are never cached; (after step 1) the instance caught up (or 503)
//   1. a write must come from a page of this server's own origin and send JSON (403, before
//      anything else, so another site's page can neither sign a user in nor act with her cookie)
//   2. route (404/405)
//   3. the live session the cookie names: required (401) unless the route is open
//   4. the handler.
// The route is looked up once, on arrival, because it decides the context: a route that needs a
// session gets a PortalContext (its commit re-reads the session's user), an open one
// (sign-in, sign-up, an invitation's password) an OpenPortalContext.

import type { IncomingMessage } from 'node:http';
import { forbidden } from '../../domain/errors.ts';
import { isJsonContentType } from '../../http/body.ts';
import { pathOf, type BaseContext } from '../../http/context.ts';
import { OpenPortalContext } from './open-portal-context.ts';
import { PortalContext } from './portal-context.ts';
import { isSameOriginWrite } from './same-origin.ts';
import { sessionRequired, type PortalSessions } from './sessions.ts';
import type { PortalRoute, Reply } from '../../http/route.ts';
import type { Router } from '../../router.ts';
import type { Store } from '../../store/store.ts';
import { checkUrl, whenFresh } from '../../pipeline/first-checks.ts';
import type { Gate, Run } from '../../pipeline/gate.ts';
import { refuseUnmatched, routeOf } from '../../pipeline/route-step.ts';

export interface PortalDeps {
  store: Store;
  /** Portal sessions: the cookie → the signed-in user. */
  sessions: PortalSessions;
  portalRoutes: Router<PortalRoute>;
}

export function createPortalGate(deps: PortalDeps, run: Run): Gate {
  const { store, sessions } = deps;
  const services = { store, sessions };

  /** Steps 0 and 1, the same for every portal request; then `next`, once the instance is caught up. */
  function door<C extends BaseContext>(context: C, next: (context: C) => Reply | Promise<Reply>): Reply | Promise<Reply> {
    checkUrl(context);
    context.responseHeaders['Cache-Control'] = 'no-store';
    const { req } = context;
    if (SAFE_METHODS.has(context.method)) return whenFresh(store, () => next(context));
    if (!isSameOriginWrite(req, sessions.origin)) {
      throw forbidden('Portal writes are accepted only from the portal itself: send an Origin header equal to this server\'s origin (or Sec-Fetch-Site: same-origin).');
    }
    if (hasBody(req) && !isJsonContentType(req.headers['content-type'])) throw forbidden('Portal writes must send JSON ("Content-Type: application/json").');
    return whenFresh(store, () => next(context));
  }

  return (req, res, startedAt) => {
    const match = deps.portalRoutes.match(req.method ?? 'GET', pathOf(req.url ?? '/'));
    if (match.kind !== 'found') {
      // No such route: its 404 or 405 after the door, as for any other portal request.
      run(new OpenPortalContext(req, res, store), (context) => door(context, () => refuseUnmatched(match, context)), startedAt);
      return;
    }
    const { route } = match;
    if (route.open === true) {
      run(new OpenPortalContext(req, res, store), (context) => door(context, () => {
        routeOf(match, context); // 2. found: its label and parameters recorded
        context.signedIn = sessions.signedIn(req); // 3. a session, if any, for sign-out or a password change
        return route.handle(context);
      }), startedAt);
      return;
    }
    run(new PortalContext(req, res, services), (context) => door(context, () => {
      routeOf(match, context); // 2. found: its label and parameters recorded
      context.signedIn = sessions.signedIn(req); // 3. a live session, required
      if (context.signedIn === null) throw sessionRequired();
      return route.handle(context);
    }), startedAt);
  };
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

function hasBody(req: IncomingMessage): boolean {
  return Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
}
