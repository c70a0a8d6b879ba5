// The portal's "Your plans" panel on the keys page: for each plan the user's keys are on, what
// that plan meters for the whole account (contract section 23) — the per-minute window all those
// keys share, the quota used in its day or month and when it resets, and each key's share of the
// count. Cards and lists, no table, so it fits a 390 px screen without sideways scrolling.
//
// The window and quota come from one key's usage (they are the account's, the same on each of
// its keys on the plan); a key's share is its requests answered in the quota's period (those a
// 429 refused count against nothing), read from that key's usage for the period. An operator's
// top-up changes the count but no key's share, so the shares may not add up to it: said so.

import { el, replaceChildren } from './dom.js';
import { formatCount } from './format.js';
import { quotaLabel, quotaLeftWords, quotaPeriodStart, quotaUsedWords, thisPeriod } from './quota.js';

function keyName(key) {
  return key.name ? `"${key.name}"` : `${key.prefix}…${key.last_four}`;
}

function isLive(key, now = Date.now()) {
  return !key.revoked_at && !(key.expires_at && Date.parse(key.expires_at) <= now);
}

/** When a key stopped working (revoked or expired), in ms; Infinity while it works. */
function endOf(key) {
  const ends = [key.revoked_at, key.expires_at].filter(Boolean).map((time) => Date.parse(time));
  return ends.length === 0 ? Infinity : Math.min(...ends);
}

/** Requests of one key that counted against the quota: answered, not refused with 429. */
function countedRequests(usage) {
  const totals = usage?.totals ?? {};
  return Math.max(0, Number(totals.requests ?? 0) - Number(totals.rate_limited ?? 0));
}

/** The share of the quota used as a bar; its width set through the CSSOM, which the page's CSP allows (a style attribute it would not). */
function quotaBar(used, requests) {
  const fill = el('span');
  fill.style.width = `${requests > 0 ? Math.round((used / requests) * 100) : 0}%`;
  return el('div', { class: 'quota-bar', 'aria-hidden': 'true' }, fill);
}

/**
 * { element, show(keys, plans) }: `loadUsage(keyId, query)` is the portal's usage read. show()
 * draws the plans of `keys` afresh (each call replaces an earlier one still loading).
 */
export function planMeters({ loadUsage }) {
  const body = el('div', { class: 'plan-meter-cards' });
  const status = el('p', { class: 'visually-hidden', 'aria-live': 'polite' });
  const element = el(
    'section',
    { class: 'plan-meters', 'aria-labelledby': 'plan-meters-title', 'aria-busy': 'true' },
    el('h3', { id: 'plan-meters-title' }, 'Your plans'),
    el('p', { class: 'hint' }, "A plan's limits are your account's: all your keys on one plan share its requests per minute and its quota."),
    status,
    body,
  );
  let latest = 0;

  async function meterOf(plan, keys) {
    const live = keys.filter((key) => isLive(key));
    // Any live key of the plan reads the account's window and quota; the last hour is enough.
    const now = Date.now();
    const lastHour = { granularity: 'hour', from: new Date(now - 3_600_000).toISOString(), to: new Date(now + 3_600_000).toISOString() };
    const shared = (await loadUsage(live[0].id, lastHour)).data ?? {};
    const quota = shared.quota ?? null;
    let shares = [];
    if (quota) {
      const period = { granularity: 'day', from: quotaPeriodStart(quota), to: quota.resets_at };
      // Keys of the plan revoked or expired during the period may have counted in it too; those
      // that ended before it cannot have, and are not asked about.
      const periodStart = Date.parse(period.from);
      const counting = keys.filter((key) => isLive(key) || endOf(key) > periodStart);
      shares = await Promise.all(counting.map(async (key) => ({ key, counted: countedRequests((await loadUsage(key.id, period)).data) })));
      shares = shares.filter((share) => isLive(share.key) || share.counted > 0);
    }
    return { plan, live, window: shared.window ?? null, quota, shares };
  }

  function meterCard({ plan, live, window, quota, shares }) {
    const facts = [
      ['Per minute', `${formatCount(plan.rate_limit)} requests, shared by your ${live.length === 1 ? 'key' : `${live.length} keys`} on ${plan.name}`],
      window ? ['Window now', `${formatCount(window.remaining)} of ${formatCount(window.limit)} left; resets ${new Date(Number(window.reset) * 1000).toLocaleTimeString()}`] : null,
      ['Quota', quota ? `${quotaLabel(quota)}: ${quotaUsedWords(quota)}` : quotaLabel(plan.quota)],
      quota ? ['Left', quotaLeftWords(quota)] : null,
    ].filter(Boolean);
    const sum = shares.reduce((total, share) => total + share.counted, 0);
    const used = quota ? Math.min(quota.used, quota.requests) : 0;
    return el(
      'article',
      { class: 'plan-meter panel', dataset: { planId: plan.id } },
      el('header', { class: 'card-head' }, el('h4', {}, plan.name), quota && quota.remaining === 0 ? el('span', { class: 'badge danger' }, 'quota used up') : null),
      el('dl', { class: 'key-facts' }, facts.map(([term, value]) => [el('dt', {}, term), el('dd', {}, value)])),
      // The bar repeats the words above for the eye; screen readers have the words.
      quota ? quotaBar(used, quota.requests) : null,
      quota
        ? [
            el('p', { class: 'quota-shares-title' }, `Each key's share of the ${formatCount(quota.used)} used ${thisPeriod(quota.period)}:`),
            el(
              'ul',
              { class: 'quota-shares' },
              shares.map((share) =>
                el('li', { dataset: { keyId: share.key.id } }, el('span', { class: 'share-key' }, keyName(share.key), isLive(share.key) ? '' : ' (no longer active)'), el('span', { class: 'share-count' }, formatCount(share.counted))),
              ),
            ),
            sum !== quota.used ? el('p', { class: 'hint' }, `Your keys' shares add up to ${formatCount(sum)}: the operator set or topped up the count, or a key moved plans during the ${quota.period}.`) : null,
          ]
        : null,
    );
  }

  async function show(keys, plans) {
    latest += 1;
    const drawing = latest;
    element.setAttribute('aria-busy', 'true');
    // The plans the user's live keys are on, in the operator's order.
    const inUse = plans.filter((plan) => keys.some((key) => key.plan === plan.id && isLive(key)));
    try {
      const meters = await Promise.all(inUse.map((plan) => meterOf(plan, keys.filter((key) => key.plan === plan.id))));
      if (drawing !== latest) return;
      replaceChildren(body, meters.length === 0 ? el('p', { class: 'empty' }, 'None of your live keys is on a plan yet.') : meters.map(meterCard));
      status.textContent = 'Plans updated.';
    } catch {
      if (drawing !== latest) return;
      replaceChildren(body, el('p', { class: 'empty' }, 'Could not load what your plans have used. Try again in a moment.'));
    }
    element.setAttribute('aria-busy', 'false');
  }

  return { element, show };
}
