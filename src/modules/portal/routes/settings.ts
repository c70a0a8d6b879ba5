// GET /portal/v1/settings: what the portal page needs to know before anyone signs in — whether
// anyone may sign up (PORTAL_SIGNUP) and the address programs reach the API at (MARKETPLACE_URL,
// else the origin this request came to), for the first-request lines shown beside a new key.

import type { OpenPortalContext, PortalRoute, Reply } from '../../../http/route.ts';
import { checkQueryNames } from '../../../http/lists.ts';
import { ownOrigin, type OriginSettings } from '../same-origin.ts';

export interface PortalSettingsRoutesDeps {
  signup: 'invite' | 'open';
  origin: OriginSettings;
}

export function portalSettingsRoutes({ signup, origin }: PortalSettingsRoutesDeps): PortalRoute[] {
  function settings(context: OpenPortalContext): Reply {
    checkQueryNames(context.query, []);
    return { status: 200, body: { data: { signup, api_base_url: ownOrigin(context.req, origin) } } };
  }
  return [{ method: 'GET', pattern: '/portal/v1/settings', summary: 'Whether sign-up is open, and the API base address', open: true, handle: settings }];
}
