// The usage panel for one key: totals, the current rate-limit window (shared by the account's
// keys on a plan), the plan's quota used and its reset, a chart of requests per hour over the
// last day or week (429s marked), and the per-endpoint table — one compact row per endpoint at
// any width — with, where the page gives it somewhere to return to, a Close button.

import { api } from './api.js';
import { DEFAULT_SIZE, renderUsageChart } from './chart.js';
import { el, replaceChildren } from './dom.js';
import { formatCount } from './format.js';
import { showError } from './notice.js';
import { quotaLeftWords, quotaUsedWords } from './quota.js';

const HOUR_MS = 3600000;
const RANGES = [
  { id: 'day', label: 'Last 24 hours', hours: 24 },
  { id: 'week', label: 'Last 7 days', hours: 24 * 7 },
];

/** The query for the last `hours` whole hours, the current (partial) hour included. */
export function usageQuery(hours, now = Date.now()) {
  const end = Math.floor(now / HOUR_MS) * HOUR_MS + HOUR_MS;
  return { granularity: 'hour', from: new Date(end - hours * HOUR_MS).toISOString(), to: new Date(end).toISOString() };
}

/** '/v1/listings/:id' with a line-break chance after each '/', so a narrow cell wraps between its parts. */
function routeBreakingAtSlashes(route) {
  return String(route).split('/').flatMap((part, index) => (index === 0 ? [part] : [el('wbr'), `/${part}`]));
}

function statusCells(byStatus) {
  return ['2xx', '3xx', '4xx', '5xx'].map((status) => el('td', { class: 'number' }, formatCount(byStatus?.[status])));
}

/**
 * { element, reload(key) }. `onRefresh`, when given, is what the Refresh button does instead of
 * reloading the usage alone (the keys section reloads its table too, then calls reload(key)).
 * `loadUsage(keyId, query)` fetches the usage: the operator API's by default, the portal's there.
 * `onClose`, when given, adds a "Close usage" button that calls it.
 * `quotaActions(quota, key)`, when given, returns what goes beside a quota (the operator's
 * top-up); it is asked only for a key whose plan has one.
 */
export function usagePanel(initialKey, { onRefresh, onClose, loadUsage = api.keyUsage, quotaActions = null } = {}) {
  let key = initialKey;
  let range = RANGES[0];
  // Only the latest request may draw, so a slow answer for an old range never wins.
  let latest = 0;
  const title = el('h3', { id: 'usage-title' });
  const rangeButtons = RANGES.map((option) =>
    el('button', { type: 'button', class: 'secondary small', dataset: { range: option.id }, onclick: () => { range = option; load(); } }, option.label),
  );
  const refreshButton = el('button', { type: 'button', class: 'secondary small', onclick: refresh }, 'Refresh');
  const closeButton = onClose ? el('button', { type: 'button', class: 'secondary small', onclick: onClose }, 'Close usage') : null;
  const summary = el('div', { class: 'usage-summary' });
  const chartArea = el('div', { class: 'chart-area' });
  const endpoints = el('div', { class: 'usage-endpoints' });
  const status = el('p', { class: 'muted', 'aria-live': 'polite' });

  function chartWidth() {
    const shown = chartArea.clientWidth;
    return shown > 0 ? Math.max(320, Math.min(DEFAULT_SIZE.width, Math.round(shown))) : DEFAULT_SIZE.width;
  }

  function drawTitle() {
    replaceChildren(title, 'Usage of ', key.name ? `"${key.name}"` : 'key', ' ', el('code', {}, `${key.prefix}…${key.last_four}`));
    for (const button of rangeButtons) button.setAttribute('aria-pressed', button.dataset.range === range.id ? 'true' : 'false');
  }

  function draw(usage) {
    const totals = usage.totals ?? {};
    const window = usage.window ?? {};
    const byStatus = totals.by_status ?? {};
    const stat = (label, value, className, note) =>
      el('div', { class: `stat ${className ?? ''}` }, el('dt', {}, label), el('dd', {}, value, note ? el('span', { class: 'note' }, note) : null));
    replaceChildren(
      summary,
      el(
        'dl',
        { class: 'stats' },
        stat('Requests', formatCount(totals.requests), 'total'),
        stat('2xx', formatCount(byStatus['2xx'])),
        stat('3xx', formatCount(byStatus['3xx'])),
        stat('4xx', formatCount(byStatus['4xx'])),
        stat('5xx', formatCount(byStatus['5xx'])),
        stat('Rate-limited (429)', formatCount(totals.rate_limited), totals.rate_limited > 0 ? 'warn' : ''),
        stat(
          'Window now',
          `${formatCount(window.remaining)} of ${formatCount(window.limit)} left`,
          '',
          [
            window.reset ? `resets ${new Date(Number(window.reset) * 1000).toLocaleTimeString()}` : null,
            // A plan's window is the account's, not the key's (contract section 23).
            key.plan ? "shared by the account's keys on this plan" : null,
          ].filter(Boolean).join('; '),
        ),
        usage.quota ? stat('Quota', quotaUsedWords(usage.quota), `quota ${usage.quota.remaining === 0 ? 'warn' : ''}`, quotaLeftWords(usage.quota)) : null,
      ),
      usage.quota && quotaActions ? quotaActions(usage.quota, key) : null,
    );

    const series = usage.series ?? { granularity: 'hour', points: [] };
    replaceChildren(
      chartArea,
      el(
        'figure',
        { class: 'chart' },
        // Drawn at the width it is shown at, so its labels keep their size on a phone.
        renderUsageChart(document, series, { size: { width: chartWidth() } }),
        el(
          'figcaption',
          {},
          `Requests per ${series.granularity === 'day' ? 'day' : 'hour'}, ${range.label.toLowerCase()} (your time zone). `,
          el('span', { class: 'legend requests' }, 'requests'),
          ' ',
          el('span', { class: 'legend limited' }, 'rate-limited (429), also marked ▼'),
        ),
      ),
    );

    // Method and route share a cell, so a row stays one line of cells on a phone.
    const rows = (usage.endpoints ?? []).map((endpoint) =>
      el(
        'tr',
        {},
        el('td', { class: 'endpoint' }, el('code', {}, `${endpoint.method} `, routeBreakingAtSlashes(endpoint.route))),
        el('td', { class: 'number' }, formatCount(endpoint.requests)),
        statusCells(endpoint.by_status),
        el('td', { class: `number ${endpoint.rate_limited > 0 ? 'warn' : ''}` }, formatCount(endpoint.rate_limited)),
      ),
    );
    replaceChildren(
      endpoints,
      el('h4', {}, 'By endpoint'),
      rows.length === 0
        ? el('p', { class: 'empty' }, 'No requests recorded for this key yet.')
        : el(
            'table',
            { class: 'endpoints-table compact-table' },
            el('thead', {}, el('tr', {}, ['Endpoint', 'Total', '2xx', '3xx', '4xx', '5xx', '429'].map((heading) => el('th', { scope: 'col', class: heading === 'Endpoint' ? '' : 'number' }, heading)))),
            el('tbody', {}, rows),
          ),
    );
  }

  // aria-busy is set before any request leaves, so "busy, then not" always means fresh numbers.
  function markLoading() {
    element.setAttribute('aria-busy', 'true');
    status.textContent = 'Loading usage…';
  }

  async function load() {
    drawTitle();
    latest += 1;
    const request = latest;
    markLoading();
    try {
      const answer = await loadUsage(key.id, usageQuery(range.hours));
      if (request !== latest) return;
      draw(answer.data ?? {});
      status.textContent = `Updated ${new Date().toLocaleTimeString()}.`;
    } catch (error) {
      if (request !== latest) return;
      status.textContent = '';
      showError(error, 'Could not load the usage');
    }
    element.setAttribute('aria-busy', 'false');
  }

  function refresh() {
    markLoading();
    if (onRefresh) onRefresh();
    else load();
  }

  const element = el(
    'section',
    { class: 'usage', 'aria-labelledby': 'usage-title' },
    el('div', { class: 'section-head' }, title, el('div', { class: 'toolbar', role: 'group', 'aria-label': 'Time range' }, rangeButtons, refreshButton), closeButton),
    status,
    summary,
    chartArea,
    endpoints,
  );
  load();
  return {
    element,
    reload(nextKey) {
      key = nextKey;
      load();
    },
  };
}
