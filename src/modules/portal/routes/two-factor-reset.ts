// DELETE /admin/v1/users/:id/two-factor: the operator turns a user's two-factor sign-in off, for
// someone who lost both their app and their recovery codes. Every session of the user ends in the
// same write (whoever holds one may be the reason for the reset), and the reset is audited.

import type { AuditLog } from '../../../audit/audit-log.ts';
import { USERS, userStatus } from '../../../domain/records.ts';
import { notFound } from '../../../domain/errors.ts';
import type { OperatorRoute, Reply, RequestContext } from '../../../http/route.ts';
import { endSessionsOps } from '../../../domain/end-access.ts';
import { TWO_FACTOR } from '../../../domain/account-records.ts';
import { endTicketsOps } from '../sign-in-tickets.ts';
import type { WriteOp } from '../../../store/store.ts';

export interface TwoFactorResetRoutesDeps {
  audit: AuditLog;
}

export function twoFactorResetRoutes({ audit }: TwoFactorResetRoutesDeps): OperatorRoute[] {
  function reset(context: RequestContext): Promise<Reply> {
    return context.commit((tx) => {
      const user = tx.get(USERS, context.params.id!);
      if (!user || userStatus(user) === 'erased') throw notFound('User');
      const wasOn = tx.get(TWO_FACTOR, user.id)?.enabled === true;
      const removed: WriteOp[] = tx.get(TWO_FACTOR, user.id) === undefined ? [] : [{ op: 'del', collection: TWO_FACTOR, id: user.id }];
      const endedSessions = endSessionsOps(tx, user.id);
      return {
        ops: [
          ...removed,
          ...endTicketsOps(tx, user.id),
          ...endedSessions,
          audit.entryOp(context.requestId, { action: 'user.two_factor_reset', target_type: 'user', target_id: user.id, changes: { was_on: wasOn, sessions_ended: endedSessions.length } }),
        ],
        result: { status: 200, body: { data: { enabled: false, recovery_codes_left: 0 } } },
      };
    });
  }

  return [{ method: 'DELETE', pattern: '/admin/v1/users/:id/two-factor', summary: "Reset a user's two-factor sign-in (ends their sessions)", handle: reset }];
}
