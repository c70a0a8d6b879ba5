// The operator's plans (the spec's "higher tiers"): one record in the `plans` collection holds
// the whole list, so replacing it is one write and every instance reads the same list. Until
// the operator first saves a list, the defaults apply. A key's plan sets its rate_limit.

import { MAX_RATE_LIMIT, MIN_RATE_LIMIT } from './key-rules.ts';
import { badRequest } from '../domain/errors.ts';
import type { RecordReader } from '../store/collections.ts';
import { PLANS, QUOTA_PERIODS, type Plan, type PlanQuota, type QuotaPeriod } from '../domain/records.ts';

/** The id of the one record in PLANS. */
export const PLAN_LIST_ID = 'current';

export const DEFAULT_PLANS: readonly Plan[] = [
  { id: 'free', name: 'Free', rate_limit: 100, self_service: true, quota: null },
  { id: 'pro', name: 'Pro', rate_limit: 1_000, self_service: true, quota: null },
  { id: 'business', name: 'Business', rate_limit: 10_000, self_service: false, quota: null },
];

/** The most requests a quota may allow in its period. */
export const MAX_QUOTA_REQUESTS = 1_000_000_000;
const QUOTA_FIELDS = new Set(['requests', 'period']);

export const MAX_PLANS = 20;
const PLAN_ID = /^[a-z0-9][a-z0-9_-]{0,39}$/;
const PLAN_FIELDS = new Set(['id', 'name', 'rate_limit', 'self_service', 'quota']);

/** The plans in force (the saved list, or the defaults); a plan saved before quotas existed has `quota: null`. */
export function currentPlans(reader: RecordReader): readonly Plan[] {
  const list = reader.get(PLANS, PLAN_LIST_ID);
  if (list === undefined) return DEFAULT_PLANS;
  return list.plans.every((plan) => plan.quota !== undefined) ? list.plans : list.plans.map((plan) => ({ ...plan, quota: plan.quota ?? null }));
}

export function planById(reader: RecordReader, id: string): Plan | undefined {
  return currentPlans(reader).find((plan) => plan.id === id);
}

/**
 * The plan a new self-service key gets when none is asked for: the self-service plan with the
 * lowest limit (Free by default).
 */
export function entryPlan(plans: readonly Plan[]): Plan | undefined {
  let lowest: Plan | undefined;
  for (const plan of plans) if (plan.self_service && (lowest === undefined || plan.rate_limit < lowest.rate_limit)) lowest = plan;
  return lowest;
}

/** Checks a whole list as sent to PUT /admin/v1/plans; throws one 400 naming every problem. */
export function readPlanList(body: unknown): Plan[] {
  const list = body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>).plans : undefined;
  const extra = body !== null && typeof body === 'object' && !Array.isArray(body) ? Object.keys(body).filter((name) => name !== 'plans') : [];
  if (extra.length > 0) throw badRequest(`The request body is invalid: unknown field ${extra[0]}; send {"plans": [...]}.`, { [extra[0]!]: 'is not a field' });
  if (!Array.isArray(list)) throw badRequest('The request body is invalid: plans must be an array of {id, name, rate_limit, self_service, quota}.', { plans: 'must be an array' });
  if (list.length === 0 || list.length > MAX_PLANS) throw badRequest(`The request body is invalid: plans must hold 1 to ${MAX_PLANS} plans.`, { plans: `must hold 1 to ${MAX_PLANS} plans` });
  const problems: Record<string, string> = {};
  const plans: Plan[] = [];
  const seen = new Set<string>();
  list.forEach((item: unknown, index) => {
    const at = `plans[${index}]`;
    if (item === null || typeof item !== 'object' || Array.isArray(item)) {
      problems[at] = 'must be an object';
      return;
    }
    const fields = item as Record<string, unknown>;
    const unknown = Object.keys(fields).find((name) => !PLAN_FIELDS.has(name));
    const { id, name, rate_limit: rateLimit, self_service: selfService } = fields;
    if (unknown !== undefined) problems[`${at}.${unknown}`] = 'is not a field';
    else if (typeof id !== 'string' || !PLAN_ID.test(id)) problems[`${at}.id`] = 'must be 1-40 characters of a-z, 0-9, _ and -, starting with a letter or digit';
    else if (seen.has(id)) problems[`${at}.id`] = 'repeats an earlier plan id';
    // Characters as people count them (code points), as the document's maxLength does.
    else if (typeof name !== 'string' || name.trim() === '' || [...name.trim()].length > 60) problems[`${at}.name`] = 'must be a non-empty string of at most 60 characters';
    else if (typeof rateLimit !== 'number' || !Number.isInteger(rateLimit) || rateLimit < MIN_RATE_LIMIT || rateLimit > MAX_RATE_LIMIT) {
      problems[`${at}.rate_limit`] = `must be an integer from ${MIN_RATE_LIMIT} to ${MAX_RATE_LIMIT}`;
    } else if (typeof selfService !== 'boolean') problems[`${at}.self_service`] = 'must be true or false';
    else {
      const quota = readQuota(fields.quota, `${at}.quota`, problems);
      if (quota === undefined) return;
      seen.add(id);
      plans.push({ id, name: name.trim(), rate_limit: rateLimit, self_service: selfService, quota });
    }
  });
  const fields = Object.keys(problems);
  if (fields.length > 0) throw badRequest(`The request body is invalid: ${fields.map((field) => `${field} ${problems[field]}`).join('; ')}.`, problems);
  return plans;
}

/** A plan's `quota` (absent means null); undefined after recording the problem under `at`. */
function readQuota(value: unknown, at: string, problems: Record<string, string>): PlanQuota | null | undefined {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value)) {
    problems[at] = 'must be null or {requests, period}';
    return undefined;
  }
  const fields = value as Record<string, unknown>;
  const unknown = Object.keys(fields).find((name) => !QUOTA_FIELDS.has(name));
  const { requests, period } = fields;
  if (unknown !== undefined) problems[`${at}.${unknown}`] = 'is not a field';
  else if (typeof requests !== 'number' || !Number.isInteger(requests) || requests < 1 || requests > MAX_QUOTA_REQUESTS) problems[`${at}.requests`] = `must be an integer from 1 to ${MAX_QUOTA_REQUESTS}`;
  else if (typeof period !== 'string' || !QUOTA_PERIODS.includes(period as QuotaPeriod)) problems[`${at}.period`] = `must be one of ${QUOTA_PERIODS.join(', ')}`;
  else return { requests, period: period as QuotaPeriod };
  return undefined;
}
