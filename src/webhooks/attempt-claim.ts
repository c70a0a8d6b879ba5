// With many instances on one database, every instance's dispatcher sees every pending delivery.
// Before sending an attempt an instance claims it in the store — a write decided on the
// delivery's current version, so of two instances claiming at once one wins and the other
// reads the winner's claim — and only the claimer sends it. A claim covers one attempt number
// and lapses after the send timeout plus a margin, so the attempt of an instance that died
// mid-send is taken over (at least once, as after a restart). Only an attempt that is due is
// claimed: a retry written by another instance since this one took the delivery waits for its
// delay. One instance needs no claims.

import { randomUUID } from 'node:crypto';
import { DELIVERIES } from '../domain/records.ts';
import type { Store } from '../store/store.ts';
import { isPendingDelivery, type DeliveryRecord } from './records.ts';

/** How long past the send timeout a claim holds before another instance may take the attempt over. */
const CLAIM_MARGIN_MS = 30_000;

export class AttemptClaims {
  /** This instance, as named in its claims. */
  readonly instanceId = randomUUID();
  private readonly store: Store;
  private readonly holdMs: number;

  constructor(store: Store, sendTimeoutMs: number) {
    this.store = store;
    this.holdMs = sendTimeoutMs + CLAIM_MARGIN_MS;
  }

  /** True when this instance may send the delivery's current attempt (it holds the claim now). */
  claim(deliveryId: string, now: number): Promise<boolean> {
    return this.store.commit((tx) => {
      const current = tx.get(DELIVERIES, deliveryId);
      if (current === undefined || !isPendingDelivery(current)) return { ops: [], result: false };
      if (this.heldElsewhereUntil(current, now) !== null) return { ops: [], result: false };
      // Another instance may have failed the attempt meanwhile and set a retry: not yet due, so
      // not claimed (the dispatcher schedules it again at its time).
      if (current.next_attempt_at > now) return { ops: [], result: false };
      const claimed: DeliveryRecord = { ...current, claim: { by: this.instanceId, attempt: current.attempts, until: now + this.holdMs } };
      return { ops: [{ op: 'put', collection: DELIVERIES, id: deliveryId, data: claimed }], result: true };
    });
  }

  /** When another instance holds the delivery's current attempt: the time its claim lapses; else null. */
  heldElsewhereUntil(delivery: DeliveryRecord, now: number): number | null {
    const claim = delivery.claim;
    if (claim === undefined || claim.by === this.instanceId || claim.attempt !== delivery.attempts || claim.until <= now) return null;
    return claim.until;
  }
}
