// POST /admin/v1/users/:id/invitations: the operator's link for a user to set a password in the
// portal, the first time or after forgetting it (this server sends no email). The token is
// random, shown in this answer only, stored as its SHA-256, valid 72 hours and single-use; a new
// invitation replaces the user's previous one. It travels in the link's fragment
// (`/portal#invitation=…`), which browsers never send to a server, so it reaches no access log.

import type { AuditLog } from '../../../audit/audit-log.ts';
import type { Clock } from '../../../clock.ts';
import { isoTime } from '../../../clock.ts';
import { USERS, userStatus } from '../../../domain/records.ts';
import { conflict, HttpError, notFound } from '../../../domain/errors.ts';
import { SECRET_ANSWER_HEADERS } from '../../../http/respond.ts';
import type { AdminRoute, Reply, RequestContext } from '../../../http/route.ts';
import { INVITATIONS, type InvitationRecord } from '../../../domain/account-records.ts';
import { ownOrigin, type OriginSettings } from '../same-origin.ts';
import { digestOf, newSecret } from '../secrets.ts';

export const INVITATION_LIFETIME_MS = 72 * 60 * 60 * 1000;

export interface InvitationRoutesDeps {
  clock: Clock;
  audit: AuditLog;
  origin: OriginSettings;
}

export function invitationRoutes(deps: InvitationRoutesDeps): AdminRoute[] {
  const { clock, audit } = deps;

  function invite(context: RequestContext): Promise<Reply> {
    const base = ownOrigin(context.req, deps.origin);
    if (base === null) throw new HttpError(400, 'Cannot make the link: the request has no usable Host header. Set MARKETPLACE_URL to the address users reach the server at.');
    const token = newSecret();
    return context.commit((tx) => {
      const user = tx.get(USERS, context.params.id!);
      if (!user || userStatus(user) === 'erased') throw notFound('User');
      // The email is what the user signs in with.
      if (user.email === '') throw conflict('This user has no email address, which is what they sign in with: set one first (PATCH /admin/v1/users/:id).');
      const now = clock.now();
      const invitation: InvitationRecord = { id: user.id, token_hash: digestOf(token), created_at: isoTime(now), expires_at: isoTime(now + INVITATION_LIFETIME_MS) };
      const replaced = tx.get(INVITATIONS, user.id) !== undefined;
      return {
        ops: [
          { op: 'put', collection: INVITATIONS, id: invitation.id, data: invitation },
          audit.entryOp(context.requestId, { action: 'user.invite', target_type: 'user', target_id: user.id, changes: { expires_at: invitation.expires_at, replaced_previous: replaced } }),
        ],
        result: {
          status: 201,
          headers: { ...SECRET_ANSWER_HEADERS },
          body: { data: { url: `${base}/portal#invitation=${token}`, token, expires_at: invitation.expires_at } },
        },
      };
    });
  }

  return [{ method: 'POST', pattern: '/admin/v1/users/:id/invitations', summary: 'Invite a user to the portal (a single-use link to set a password)', handle: invite }];
}
