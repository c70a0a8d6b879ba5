// The CPU budget as a step of /v1 (step 2, before the rate limit): a key that used more than
// its share of the event loop in the last minute waits: 429, not counted by the rate limit.
// What each request's work costs is charged to its key by the request observer
// (src/pipeline/request-observer.ts), which hands the charges on to `chargeTimed`.

import type { Clock } from '../../clock.ts';
import type { KeyContext } from '../../http/key-context.ts';
import type { Reply } from '../../http/route.ts';
import type { KeyCpuBudget } from '../../pipeline/request-observer.ts';
import type { CpuBudget } from './cpu-budget.ts';

export class CpuBudgetStep implements KeyCpuBudget {
  private readonly budget: CpuBudget;
  private readonly clock: Clock;
  /** Told each refusal (the metrics module's counter, when it is loaded). */
  private readonly refused: () => void;

  constructor(budget: CpuBudget, clock: Clock, refused: () => void) {
    this.budget = budget;
    this.clock = clock;
    this.refused = refused;
  }

  /**
   * Step 2: null when the key may go on; else its 429. Its rate-limit headers say the same wait:
   * no room now (Remaining 0) until the budget admits again (Reset), so a client honouring
   * either header is admitted.
   */
  refusal(context: KeyContext, meterId: string, rateLimit: number): Reply | null {
    const waitSeconds = this.budget.waitSeconds(meterId, rateLimit);
    if (waitSeconds <= 0) return null;
    context.responseHeaders['X-RateLimit-Limit'] = rateLimit;
    context.responseHeaders['X-RateLimit-Remaining'] = 0;
    context.responseHeaders['X-RateLimit-Reset'] = Math.ceil(this.clock.now() / 1000) + waitSeconds;
    context.responseHeaders['Retry-After'] = waitSeconds;
    this.refused();
    return {
      status: 429,
      body: {
        error: `This key used its share of the server's CPU for the last minute (${Math.round(this.budget.budgetOf(rateLimit))} ms). Retry after ${waitSeconds} s.`,
        request_id: context.requestId,
      },
    };
  }

  chargeTimed(meterId: string, ms: number, now: number): void {
    this.budget.chargeTimed(meterId, ms, now);
  }
}
