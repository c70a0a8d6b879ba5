// GET /metrics, behind the operator token, for Prometheus: the server's counters, gauges and
// histograms in the text format (what they are is server-metrics.ts). The path is the one
// Prometheus scrapes by default, outside /admin; its router and its gate are the operator's.

import type { AdminRoute } from '../../http/route.ts';
import type { ServerMetrics } from './server-metrics.ts';

export function metricsRoute(metrics: ServerMetrics): AdminRoute {
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
