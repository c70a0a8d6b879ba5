// The CPU budget, as a step of /v1 (step 2, before the rate limit) and as the charge each key's
// requests leave behind. A key that used more than its share of the event loop in the last
// minute waits: 429, not counted by the rate limit. What a request's own work costs is charged
// to its key's meter afterwards (the user's keys on one plan share one, auth/plans.ts meterIdOf): its synchronous work on the event loop (the steps, the handler, the
// answer's bytes; again when a waiting handler's answer is sent) and the time a thread-pool job
// spent compressing its answer. The time is read on the clock and charged as the CPU time it
// used (CpuBudget.chargeTimed scales it by src/limits/on-cpu-share.ts), not the time the
// process waited for a processor meanwhile. With no budget configured every part is a no-op.

import type { Clock } from '../clock.ts';
import type { BaseContext } from '../http/context.ts';
import type { ApiKeyContext } from '../http/key-context.ts';
import type { Reply } from '../http/route.ts';
import type { CpuBudget } from '../limits/cpu-budget.ts';
import type { PipelineDeps } from './deps.ts';

export class CpuBudgetStep {
  private readonly budget: CpuBudget | null;
  private readonly clock: Clock;
  private readonly metrics: PipelineDeps['metrics'];

  constructor(deps: Pick<PipelineDeps, 'cpuBudget' | 'clock' | 'metrics'>) {
    this.budget = deps.cpuBudget ?? null;
    this.clock = deps.clock;
    this.metrics = deps.metrics;
  }

  /** For a new /v1 context: a large answer's compression off the main thread is charged too. */
  watch(context: ApiKeyContext): void {
    if (this.budget !== null) context.chargeBackgroundWork = this.chargeBackgroundWork;
  }

  /**
   * Step 2: null when the key may go on; else its 429. Its rate-limit headers say the same wait:
   * no room now (Remaining 0) until the budget admits again (Reset), so a client honouring
   * either header is admitted.
   */
  refusal(context: ApiKeyContext, meterId: string, rateLimit: number): Reply | null {
    if (this.budget === null) return null;
    const waitSeconds = this.budget.waitSeconds(meterId, rateLimit);
    if (waitSeconds <= 0) return null;
    context.responseHeaders['X-RateLimit-Limit'] = rateLimit;
    context.responseHeaders['X-RateLimit-Remaining'] = 0;
    context.responseHeaders['X-RateLimit-Reset'] = Math.ceil(this.clock.now() / 1000) + waitSeconds;
    context.responseHeaders['Retry-After'] = waitSeconds;
    this.metrics?.countCpuBudgetRefusal?.();
    return {
      status: 429,
      body: {
        error: `This key used its share of the server's CPU for the last minute (${Math.round(this.budget.budgetOf(rateLimit))} ms). Retry after ${waitSeconds} s.`,
        request_id: context.requestId,
      },
    };
  }

  /** When a piece of a request's work on the event loop begins (0 when nothing is charged). */
  workBegins(): number {
    return this.budget === null ? 0 : performance.now();
  }

  /** Charges the event-loop work since `began` to the request's key, if it has one. */
  chargeSince(context: BaseContext, began: number): void {
    const { budget } = this;
    if (budget === null) return;
    const keyId = context.chargedMeterId;
    if (keyId === null) return;
    const now = performance.now();
    budget.chargeTimed(keyId, now - began, now);
  }

  /** Charges a thread-pool job's time (a large answer compressed) to the request's key, if it has one. */
  private readonly chargeBackgroundWork = (context: BaseContext, ms: number): void => {
    const keyId = context.chargedMeterId;
    if (keyId !== null) this.budget?.chargeTimed(keyId, ms, performance.now());
  };
}
