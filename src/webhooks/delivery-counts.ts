// Counts of webhook delivery outcomes since the process started, for the operator's metrics:
// each attempt's result, and the pending deliveries dropped beyond a webhook's cap (failed).

export type CountedOutcome = 'delivered' | 'retrying' | 'failed';

/** Where a count came from: an attempt's result, or pending deliveries dropped past the cap. */
export type CountSource = 'attempt' | 'dropped';

export class DeliveryCounts {
  private readonly counts: Record<CountedOutcome, number> = { delivered: 0, retrying: 0, failed: 0 };
  private readonly onAdd: ((outcome: CountedOutcome, howMany: number, source: CountSource) => void) | undefined;

  /** `onAdd` hears every count as it is made (app.ts passes the drops on to GET /metrics). */
  constructor(onAdd?: (outcome: CountedOutcome, howMany: number, source: CountSource) => void) {
    this.onAdd = onAdd;
  }

  add(outcome: CountedOutcome, howMany = 1, source: CountSource = 'attempt'): void {
    this.counts[outcome] += howMany;
    this.onAdd?.(outcome, howMany, source);
  }

  snapshot(): Readonly<Record<CountedOutcome, number>> {
    return { ...this.counts };
  }
}
