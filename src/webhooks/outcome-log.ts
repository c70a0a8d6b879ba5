// The last delivery outcomes of each webhook, for its owner in the portal (contract section 20:
// time, event, status, attempts, duration — never a body). One record per webhook in the
// `delivery_outcomes` collection, rewritten in the same write as the attempt's outcome, holding
// at most the 50 newest, so it stays small however many events a webhook receives.

import { DELIVERY_OUTCOMES } from '../domain/records.ts';
import type { WriteOp } from '../store/format.ts';
import type { EventType } from './events.ts';

export const MAX_OUTCOMES_PER_WEBHOOK = 50;

export interface DeliveryOutcome {
  /** When the attempt's outcome was known. */
  readonly at: string;
  readonly event_id: string;
  readonly event: EventType;
  /** `retrying`: this attempt failed and another is scheduled. */
  readonly status: 'delivered' | 'retrying' | 'failed';
  /** Which attempt this was (1 for the first). */
  readonly attempts: number;
  /** The receiver's HTTP status, or null when none arrived (timeout, refused connection). */
  readonly response_status: number | null;
  /** From dialling to the end of the receiver's answer (or the failure), in milliseconds. */
  readonly duration_ms: number;
}

export interface DeliveryOutcomeLogRecord {
  /** The webhook's id. */
  readonly id: string;
  readonly user_id: string;
  /** Newest first, at most MAX_OUTCOMES_PER_WEBHOOK. */
  readonly outcomes: readonly DeliveryOutcome[];
}

/** The op writing `outcome` at the head of the webhook's log (the oldest beyond 50 dropped). */
export function outcomeLoggedOp(log: DeliveryOutcomeLogRecord | undefined, webhookId: string, userId: string, outcome: DeliveryOutcome): WriteOp {
  const outcomes = [outcome, ...(log?.outcomes ?? [])].slice(0, MAX_OUTCOMES_PER_WEBHOOK);
  const record: DeliveryOutcomeLogRecord = { id: webhookId, user_id: userId, outcomes };
  return { op: 'put', collection: DELIVERY_OUTCOMES, id: webhookId, data: record };
}
