// GET /admin/v1/audit: what operators did, newest first, filtered by action or target.

import { auditView, type AuditLog } from '../../audit/audit-log.ts';
import { checkQueryNames, pageOf, readPageRequest } from '../../http/lists.ts';
import type { AdminRoute, Reply, RequestContext } from '../../http/route.ts';

export function auditRoutes(audit: AuditLog): AdminRoute[] {
  function list(context: RequestContext): Reply {
    checkQueryNames(context.query, ['action', 'target_id', 'page', 'limit']);
    const request = readPageRequest(context.query);
    const entries = audit.find({ action: context.query.get('action'), targetId: context.query.get('target_id') });
    const page = pageOf(entries, request);
    return { status: 200, body: { data: page.data.map(auditView), pagination: page.pagination } };
  }
  return [{ method: 'GET', pattern: '/admin/v1/audit', summary: 'The audit log of operator actions, newest first', handle: list }];
}
