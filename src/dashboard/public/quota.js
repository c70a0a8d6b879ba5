// A plan's quota in words, for the pages that show one (a key's usage, the portal's plans, the
// operator's plan editor): the quota as the server answers it — `{requests, period}` on a plan,
// `{requests, used, remaining, period, resets_at}` in a usage read — turned into short text, and
// the start of the period it counts, so a page can ask for the usage of that period alone.

import { formatCount, formatDate } from './format.js';

const PERIOD_WORDS = { day: 'a day', month: 'a month' };
const THIS_PERIOD = { day: 'today (UTC)', month: 'this month (UTC)' };

/** "1,000 a day", or "no quota" for a plan without one. */
export function quotaLabel(quota) {
  return quota ? `${formatCount(quota.requests)} ${PERIOD_WORDS[quota.period] ?? `a ${quota.period}`}` : 'no quota';
}

/** "today (UTC)" or "this month (UTC)": the period a count is for. */
export function thisPeriod(period) {
  return THIS_PERIOD[period] ?? `this ${period}`;
}

/** "3 of 5 used today (UTC)". */
export function quotaUsedWords(quota) {
  return `${formatCount(quota.used)} of ${formatCount(quota.requests)} used ${thisPeriod(quota.period)}`;
}

/** "2 left; resets 11 Mar 2026, 01:00" (the reset in the viewer's time zone). */
export function quotaLeftWords(quota) {
  return `${formatCount(quota.remaining)} left; resets ${formatDate(quota.resets_at)}`;
}

/**
 * The ISO start of the UTC day or month that ends at `quota.resets_at`: a period ends where the
 * next begins, so the start is one day, or one calendar month, before it.
 */
export function quotaPeriodStart(quota) {
  const end = new Date(quota.resets_at);
  const start = quota.period === 'month' ? Date.UTC(end.getUTCFullYear(), end.getUTCMonth() - 1, 1) : end.getTime() - 24 * 60 * 60 * 1000;
  return new Date(start).toISOString();
}
