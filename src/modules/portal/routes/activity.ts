// GET /portal/v1/activity: the signed-in user's own account and security events, newest first,
// paged (src/audit/activity.ts decides which entries are hers).

import type { ActivityLog } from '../activity.ts';
import type { Clock } from '../../../clock.ts';
import { checkQueryNames, pageOf, readPageRequest } from '../../../http/lists.ts';
import type { PortalContext, PortalRoute, Reply } from '../../../http/route.ts';

export interface PortalActivityRoutesDeps {
  activity: ActivityLog;
  clock: Clock;
}

export function portalActivityRoutes({ activity, clock }: PortalActivityRoutesDeps): PortalRoute[] {
  function list(context: PortalContext): Reply {
    checkQueryNames(context.query, ['page', 'limit']);
    const request = readPageRequest(context.query);
    return { status: 200, body: pageOf(activity.entriesOf(context.user.id, clock.now()), request) };
  }

  return [{ method: 'GET', pattern: '/portal/v1/activity', summary: 'Your account and security events, newest first', handle: list }];
}
