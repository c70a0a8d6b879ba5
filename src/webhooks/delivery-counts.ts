// Counts of webhook delivery outcomes since the process started, for the operator's metrics:
// each attempt's result, and the pending deliveries dropped beyond a webhook's cap (failed).

export type CountedOutcome = 'delivered' | 'retrying' | 'failed';

export class DeliveryCounts {
  private readonly counts: Record<CountedOutcome, number> = { delivered: 0, retrying: 0, failed: 0 };

  add(outcome: CountedOutcome, howMany = 1): void {
    this.counts[outcome] += howMany;
  }

  snapshot(): Readonly<Record<CountedOutcome, number>> {
    return { ...this.counts };
  }
}
