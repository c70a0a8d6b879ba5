// Putting a key on a plan: the plan a body names (400 when there is none by that id) and the plan
// a new key gets when it asks for neither plan nor rate_limit. Shared by the operator's key rules
// (through the plans module, which gives them to the core as Metering.plans) and the portal's own
// keys and plan requests; a server without the plans module never loads it.

import { currentPlans, entryPlan, planById } from '../auth/plans.ts';
import type { KeyPlans } from '../analytics/quota-counters.ts';
import { badRequest } from '../domain/errors.ts';
import type { Plan } from '../domain/records.ts';
import type { RecordReader } from '../store/collections.ts';

/** The plan `planId` names now, or a 400 naming the plans there are. */
export function existingPlan(reader: RecordReader, planId: string): Plan {
  const plan = planById(reader, planId);
  if (!plan) throw badRequest(`The request body is invalid: plan ${JSON.stringify(planId)} is not a plan (see the plans list).`, { plan: 'is not a plan' });
  return plan;
}

/** The plans' rules as the key rules ask for them (src/resources/keys.ts). */
export const keyPlans: KeyPlans = {
  existing: existingPlan,
  entry: (reader) => entryPlan(currentPlans(reader)),
};
