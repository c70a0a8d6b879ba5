// What the core asks of a meter, with no plan in sight (types only: nothing here runs). A key is
// metered alone by default, against its own rate_limit; the plans module (src/modules/plans/)
// fills `Metering` at its install, so that a key on a plan shares its user's meter on that plan
// (one window, one CPU budget, one quota) and the /v1 gate counts the plan's quota. The Redis
// back-end keeps shared quota counts behind `SharedQuotaCounts`.

import type { KeyRecord, Plan, PlanQuota, QuotaPeriod } from '../domain/records.ts';
import type { RecordReader } from '../store/collections.ts';

/** One meter's count in its current period. Mutated in place on the request path. */
export interface QuotaCounter {
  period: QuotaPeriod;
  /** The period's bounds, wall-clock ms (UTC). */
  start: number;
  end: number;
  used: number;
  dirty: boolean;
  /** Whether this period's quota.warning (80 %) and quota.exhausted were told, on this instance. */
  warned: boolean;
  exhaustedTold: boolean;
}

/** A quota as the usage reads and the operator's top-up show it. */
export interface QuotaView {
  requests: number;
  used: number;
  remaining: number;
  period: QuotaPeriod;
  resets_at: string;
}

/** Counts kept where every instance reads them (Redis): take is atomic there. */
export interface SharedQuotaCounts {
  /** Counts one request if fewer than `limit` are counted for the period starting at `start`. */
  take(meterId: string, start: number, end: number, limit: number): Promise<{ admitted: boolean; used: number }>;
  giveBack(meterId: string, start: number): Promise<void>;
  set(meterId: string, start: number, end: number, used: number): Promise<void>;
  read(meterId: string, start: number): Promise<number>;
}

/** The /v1 gate's and the usage reads' view of the plans' quota counts (src/modules/plans/quota-counters.ts). */
export interface KeyQuotas {
  /** The quota of `key`'s plan, or undefined (a key with a limit of its own, or a plan with none). */
  quotaOf(key: KeyRecord): PlanQuota | undefined;
  /** `meterId`'s counter for the period now. */
  counter(meterId: string, quota: PlanQuota): QuotaCounter;
  /** Whether the meter's quota is used up, as this process knows it. */
  exhausted(meterId: string, quota: PlanQuota): boolean;
  /** Counts one request if the quota has room: the counter, or null when it is used up. */
  take(meterId: string, quota: PlanQuota): QuotaCounter | null | Promise<QuotaCounter | null>;
  /** Takes back one request counted by take(). */
  giveBack(meterId: string, counter: QuotaCounter): void;
  /** What the usage reads show for `key`, or null when its plan has no quota. */
  viewOf(key: KeyRecord, meterId: string): Promise<QuotaView | null>;
}

/** The plans a key may be put on (src/resources/key-plans.ts), which the plans module gives. */
export interface KeyPlans {
  /** The plan `planId` names now, or a 400 naming the plans there are. */
  existing(reader: RecordReader, planId: string): Plan;
  /** The plan a new key gets when neither plan nor rate_limit is asked for (Free by default), if any. */
  entry(reader: RecordReader): Plan | undefined;
}

/** How keys are metered and which plans they may be on: made by the core, filled by the plans module when it is loaded. */
export interface Metering {
  /** What `key` is counted as in the rate limiter, the CPU budget and the quota: the key's id unless the plans module says otherwise. */
  meterOf(key: KeyRecord): string;
  /** The plans' quotas, or null: without the plans module no key has a quota. */
  quotas: KeyQuotas | null;
  /** The plans keys are put on, or null: without the plans module a key has its own rate_limit and no plan. */
  plans: KeyPlans | null;
}

