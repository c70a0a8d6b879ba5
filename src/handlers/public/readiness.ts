// GET /readyz, with no token, for load balancers and orchestrators: 200 when the instance can
// serve, 503 with its reasons when not (what is checked is health/readiness.ts).

import type { Readiness } from '../../health/readiness.ts';
import type { PublicRoute } from '../../http/route.ts';

export function readinessRoute(readiness: Readiness): PublicRoute {
  return {
    method: 'GET',
    pattern: '/readyz',
    summary: 'Readiness check',
    async handle() {
      const report = await readiness.check();
      if (report.ready) return { status: 200, body: { status: 'ready' } };
      return { status: 503, body: { status: 'not_ready', reasons: report.reasons }, headers: { 'Cache-Control': 'no-store' } };
    },
  };
}
