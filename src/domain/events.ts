// Events a change produces. A handler asks for the ops that record an event's deliveries and
// writes them in the same atomic write as the change itself, so an acknowledged change never
// loses its event, even in a crash.

import type { WriteOp } from '../store/format.ts';
import type { DecisionReader } from '../store/store.ts';

export const EVENT_TYPES = [
  'listing.created',
  'listing.updated',
  'listing.archived',
  'listing.removed',
  'user.updated',
  'ping',
  'quota.warning',
  'quota.exhausted',
  'key.expiring',
  'plan_request.decided',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export interface EventOutbox {
  /** The ops that queue `type` for delivery to the owner's subscribed, active webhooks, decided in `tx` (the write's transaction). */
  eventOps(tx: DecisionReader, type: EventType, ownerId: string, data: object): WriteOp[];
  /** The ops that drop, unsent, every delivery still waiting for the owner's webhooks (a suspension). */
  dropPendingOps(tx: DecisionReader, ownerId: string): WriteOp[];
}
