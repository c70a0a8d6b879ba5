// DELETE /admin/v1/users/:id/two-factor: the operator turns a user's two-factor sign-in off, for
// someone who lost both their app and their recovery codes. Every session of the user ends in the
// same write (whoever holds one may be the reason for the reset), and the reset is audited.
// POST /admin/v1/two-factor/reseal: after the operator token changed, every secret sealed under
// the old one is sealed again under the current one (`marketplace reseal --old-token-file`).

import type { AuditLog } from '../../../audit/audit-log.ts';
import { USERS, userStatus } from '../../../domain/records.ts';
import { notFound } from '../../../domain/errors.ts';
import type { AdminRoute, Reply, RequestContext } from '../../../http/route.ts';
import { endSessionsOps } from '../../../domain/end-access.ts';
import { TWO_FACTOR } from '../../../domain/account-records.ts';
import { endTicketsOps } from '../sign-in-tickets.ts';
import type { WriteOp } from '../../../store/store.ts';
import { BodyChecker } from '../../../http/validation.ts';
import type { SecretSealer } from '../sealed-secrets.ts';
import { resealOps } from '../two-factor.ts';

export interface TwoFactorResetRoutesDeps {
  audit: AuditLog;
  /** The sealer under the current operator token. */
  sealer: SecretSealer;
  /** The sealer under another (the old) operator token. */
  sealerFor: (operatorToken: string) => SecretSealer;
}

export function twoFactorResetRoutes({ audit, sealer, sealerFor }: TwoFactorResetRoutesDeps): AdminRoute[] {
  /** POST /admin/v1/two-factor/reseal {old_token}: every secret the old token sealed, sealed again under the current one. */
  async function reseal(context: RequestContext): Promise<Reply> {
    const checker = new BodyChecker(await context.readJsonBody(), ['old_token']);
    checker.requireFields(['old_token']);
    const oldToken = checker.string('old_token', 1, 4096);
    checker.finish();
    const previous = sealerFor(oldToken!.trim());
    return context.commit((tx) => {
      const { ops, ...counts } = resealOps(tx, previous, sealer);
      const entry = audit.entryOp(context.requestId, { action: 'two_factor.reseal', target_type: 'store', target_id: 'two_factor', changes: { ...counts } });
      return { ops: [...ops, entry], result: { status: 200, body: { data: counts } } };
    });
  }

  async function reset(context: RequestContext): Promise<Reply> {
    // The reason is optional (an empty body is still a reset), kept in the audit entry.
    const { headers } = context.req;
    const hasBody = headers['transfer-encoding'] !== undefined || Number(headers['content-length'] ?? 0) > 0;
    const checker = new BodyChecker(hasBody ? await context.readJsonBody() : {}, ['reason']);
    const reason = checker.string('reason', 1, 500);
    checker.finish();
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
          audit.entryOp(context.requestId, { action: 'user.two_factor_reset', target_type: 'user', target_id: user.id, changes: { was_on: wasOn, sessions_ended: endedSessions.length, ...(reason === undefined ? {} : { reason: reason.trim() }) } }),
        ],
        result: { status: 200, body: { data: { enabled: false, recovery_codes_left: 0 } } },
      };
    });
  }

  return [
    { method: 'DELETE', pattern: '/admin/v1/users/:id/two-factor', summary: "Reset a user's two-factor sign-in (ends their sessions)", handle: reset },
    { method: 'POST', pattern: '/admin/v1/two-factor/reseal', summary: 'Seal every two-factor secret again under the current operator token', handle: reseal },
  ];
}
