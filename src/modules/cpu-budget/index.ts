// Each key's share of the server's CPU (KEY_CPU_BUDGET_MS): a key that used more than its share
// of the event loop in the last minute is refused with 429 at the /v1 gate's step 2, before the
// rate limit (src/modules/cpu-budget/step.ts). Installed by src/app.ts when MARKETPLACE_MODULES
// names `cpu-budget`; the request observer charges each request's work to the budget the module
// gives it (src/pipeline/request-observer.ts `KeyCpuBudget`). Without it, or with
// KEY_CPU_BUDGET_MS=0, a key is held to its rate limit alone.

import type { MarketplaceModule } from '../../module.ts';
import { CpuBudget } from './cpu-budget.ts';
import { CpuBudgetStep } from './step.ts';

export const cpuBudgetModule: MarketplaceModule = {
  name: 'cpu-budget',
  install(host) {
    const { config, clock, measures } = host;
    if (config.keyCpuBudgetMs === 0) return;
    // Per instance: each process holds keys to the share of its own event loop.
    const budget = new CpuBudget({ budgetMs: config.keyCpuBudgetMs, monotonicNow: () => clock.monotonic() });
    host.useCpuBudget(new CpuBudgetStep(budget, clock, () => measures.requests?.countCpuBudgetRefusal?.()));
  },
};
