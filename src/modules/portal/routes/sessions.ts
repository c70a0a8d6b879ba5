// A user's own sessions (contract section 23, "a security page people act on"): GET
// /portal/v1/sessions lists the live ones with where each signed in from, DELETE
// /portal/v1/sessions/:id signs one device out, DELETE /portal/v1/sessions every device but this
// one. A session is shown by an id derived from its store id (sessions.ts publicSessionId), so
// no answer holds anything a cookie could be made from; another user's session is a 404.

import type { AuditLog } from '../../../audit/audit-log.ts';
import { userActor } from '../../../audit/audit-log.ts';
import type { Clock } from '../../../clock.ts';
import { SESSIONS, type SessionRecord } from '../../../domain/account-records.ts';
import { notFound } from '../../../domain/errors.ts';
import { checkQueryNames } from '../../../http/lists.ts';
import type { PortalContext, PortalRoute, Reply } from '../../../http/route.ts';
import type { RecordReader, WriteOp } from '../../../store/store.ts';
import { requestOrigin } from '../../../http/request-origin.ts';
import type { IncomingMessage } from 'node:http';
import { liveSessionsOf, publicSessionId, type PortalSessions } from '../sessions.ts';

export interface PortalSessionListRoutesDeps {
  store: RecordReader;
  clock: Clock;
  clientAddress: (req: IncomingMessage) => string;
  sessions: PortalSessions;
  audit: AuditLog;
}

/** One session as its user sees it. */
export function sessionView(session: SessionRecord, currentId: string | null) {
  return {
    id: publicSessionId(session.id),
    created_at: session.created_at,
    last_seen_at: session.last_seen_at,
    client_address: session.client_address ?? null,
    user_agent: session.user_agent ?? null,
    current: session.id === currentId,
  };
}

export function portalSessionListRoutes({ store, clock, sessions, audit, clientAddress }: PortalSessionListRoutesDeps): PortalRoute[] {
  const originOf = (context: PortalContext) => requestOrigin(context.req, clientAddress);

  function list(context: PortalContext): Reply {
    checkQueryNames(context.query, []);
    const currentId = context.signedIn?.sessionId ?? null;
    // At most 20 per user (sessions.ts), so one page holds them all.
    return { status: 200, body: { data: liveSessionsOf(store, context.user.id, clock.now()).map((session) => sessionView(session, currentId)) } };
  }

  function endOne(context: PortalContext): Promise<Reply> {
    const shownId = context.params.id!;
    return context.commit((tx, user) => {
      // Only among her own live sessions: another user's id (or an ended one) is not found.
      const session = liveSessionsOf(tx, user.id, clock.now()).find((candidate) => publicSessionId(candidate.id) === shownId);
      if (session === undefined) throw notFound('Session');
      const current = session.id === context.signedIn?.sessionId;
      return {
        ops: [
          { op: 'del', collection: SESSIONS, id: session.id },
          audit.entryOp(context.requestId, { action: 'portal.session_end', target_type: 'user', target_id: user.id, changes: { session: shownId, current }, actor: userActor(user.id), origin: originOf(context) }),
        ],
        // Ending this very session signs this browser out as well.
        result: current ? { status: 204, headers: { 'Set-Cookie': sessions.clearCookie(context.req) } } : { status: 204 },
      };
    });
  }

  function endOthers(context: PortalContext): Promise<Reply> {
    const currentId = context.signedIn?.sessionId ?? null;
    return context.commit((tx, user) => {
      const ended: WriteOp[] = liveSessionsOf(tx, user.id, clock.now())
        .filter((session) => session.id !== currentId)
        .map((session) => ({ op: 'del', collection: SESSIONS, id: session.id }));
      const entry = ended.length === 0 ? [] : [audit.entryOp(context.requestId, { action: 'portal.sessions_end', target_type: 'user', target_id: user.id, changes: { ended: ended.length }, actor: userActor(user.id), origin: originOf(context) })];
      return { ops: [...ended, ...entry], result: { status: 200, body: { data: { ended: ended.length } } } };
    });
  }

  return [
    { method: 'GET', pattern: '/portal/v1/sessions', summary: 'Your signed-in sessions, with where each came from', handle: list },
    { method: 'DELETE', pattern: '/portal/v1/sessions', summary: 'Sign out every other session of yours', handle: endOthers },
    { method: 'DELETE', pattern: '/portal/v1/sessions/:id', summary: 'Sign out one session of yours', handle: endOne },
  ];
}
