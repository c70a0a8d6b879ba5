// The noisy neighbour's figures for `npm run bench:timings`: the quiet key's p99 while another
// key hammers costly searches at its rate limit, with the CPU budget (KEY_CPU_BUDGET_MS=100)
// and without it (0), on the scenario of test/listings/cpu-budget-neighbour.test.ts (which
// asserts who is refused; the latencies are measured here). Each setting gets a fresh server.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { percentile } from '../test/helpers/cluster.ts';
import { hammer, quietPages, seed, startNeighbours } from '../test/helpers/noisy-neighbour.ts';

export interface NeighbourFigures {
  budget_ms: number;
  quiet_alone_p99_ms: number;
  quiet_hammered_p99_ms: number;
  quiet_requests: number;
  quiet_refused: number;
  hammering_served: number;
  hammering_refused_for_cpu: number;
}

export async function measureNeighbours(log: (line: string) => void): Promise<NeighbourFigures[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'marketplace-bench-neighbour-'));
  try {
    log('Noisy neighbour: seeding 30,000 listings…');
    await seed(dataDir);
    const figures: NeighbourFigures[] = [];
    for (const budgetMs of [100, 0]) {
      const server = await startNeighbours(dataDir, budgetMs);
      try {
        const alone = await quietPages(server.url, server.quietKey, null);
        const hammering = hammer(server.url, server.hammeringKey);
        const hammered = await quietPages(server.url, server.quietKey, hammering);
        const held = await hammering;
        const row: NeighbourFigures = {
          budget_ms: budgetMs,
          quiet_alone_p99_ms: percentile(alone.latencies, 0.99),
          quiet_hammered_p99_ms: percentile(hammered.latencies, 0.99),
          quiet_requests: alone.latencies.length + hammered.latencies.length,
          quiet_refused: alone.refusals.length + hammered.refusals.length,
          hammering_served: held.served,
          hammering_refused_for_cpu: held.refusedForCpu,
        };
        log(`  budget ${budgetMs === 0 ? 'off' : `${budgetMs} ms`}: quiet key p99 ${row.quiet_alone_p99_ms.toFixed(1)} ms alone, ${row.quiet_hammered_p99_ms.toFixed(1)} ms hammered; hammering key served ${row.hammering_served}, refused ${row.hammering_refused_for_cpu}`);
        figures.push(row);
      } finally {
        server.stop();
      }
    }
    return figures;
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
