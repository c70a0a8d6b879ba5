// Routes for whoever runs the server: GET /readyz (no token, for load balancers and
// orchestrators) and GET /metrics (operator token, for Prometheus).

import type { Readiness } from '../../health/readiness.ts';
import type { OperatorRoute, PublicRoute } from '../../http/route.ts';
import type { ServerMetrics } from '../../metrics/server-metrics.ts';

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

export function metricsRoute(metrics: ServerMetrics): OperatorRoute {
  return {
    method: 'GET',
    pattern: '/metrics',
    summary: 'Prometheus metrics',
    handle: () => ({
      status: 200,
      bytes: Buffer.from(metrics.render()),
      headers: { 'Content-Type': 'text/plain; version=0.0.4; charset=utf-8', 'Cache-Control': 'no-store' },
    }),
  };
}
