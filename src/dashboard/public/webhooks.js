// One user's webhook endpoints (read-only): URL, events, active state and the last delivery.

import { api, fetchAll } from './api.js';
import { el, replaceChildren } from './dom.js';
import { formatDate, formatDay } from './format.js';
import { showError } from './notice.js';

const DELIVERY_BADGES = { delivered: 'ok', retrying: 'warn', failed: 'danger' };

function lastDelivery(delivery) {
  if (!delivery) return el('span', { class: 'muted' }, 'none yet');
  const response = delivery.response_status ? `HTTP ${delivery.response_status}` : 'no response';
  const attempts = `${delivery.attempts} ${delivery.attempts === 1 ? 'attempt' : 'attempts'}`;
  return el(
    'div',
    { class: 'delivery' },
    el('span', { class: `badge ${DELIVERY_BADGES[delivery.status] ?? ''}` }, String(delivery.status)),
    ' ',
    el('code', {}, String(delivery.type)),
    el('div', { class: 'muted small', title: delivery.at }, `${formatDate(delivery.at)} · ${response} · ${attempts}`),
  );
}

/** The webhooks section for `user`: an element that loads itself. */
export function webhooksSection(user) {
  const body = el('div', {}, el('p', { class: 'empty' }, 'Loading webhooks…'));

  async function load() {
    let webhooks;
    try {
      webhooks = await fetchAll((page, limit) => api.listWebhooks(user.id, page, limit));
    } catch (error) {
      replaceChildren(body, el('p', { class: 'empty' }, 'Webhooks could not be loaded.'));
      showError(error, 'Could not load the webhooks');
      return;
    }
    if (webhooks.length === 0) {
      replaceChildren(body, el('p', { class: 'empty' }, 'No webhook endpoints. Users register them with POST /v1/webhooks.'));
      return;
    }
    replaceChildren(
      body,
      el(
        'div',
        { class: 'table-scroll' },
        el(
          'table',
          { class: 'webhooks-table' },
          el('caption', { class: 'visually-hidden' }, `Webhook endpoints of ${user.name}`),
          el('thead', {}, el('tr', {}, ['URL', 'Events', 'Description', 'State', 'Last delivery'].map((heading) => el('th', { scope: 'col' }, heading)))),
          el(
            'tbody',
            {},
            webhooks.map((webhook) =>
              el(
                'tr',
                { dataset: { webhookId: webhook.id } },
                el('td', { class: 'url' }, el('code', {}, webhook.url)),
                el('td', { class: 'entries' }, (webhook.events ?? []).map((event) => el('code', {}, event))),
                el('td', {}, webhook.description || el('span', { class: 'muted' }, '—')),
                el(
                  'td',
                  { class: 'nowrap' },
                  webhook.active ? el('span', { class: 'badge ok' }, 'Active') : el('span', { class: 'badge danger' }, 'Inactive'),
                  el('div', { class: 'muted small', title: webhook.created_at }, `since ${formatDay(webhook.created_at)}`),
                ),
                el('td', {}, lastDelivery(webhook.last_delivery)),
              ),
            ),
          ),
        ),
      ),
    );
  }

  load();
  return el('section', { class: 'webhooks', 'aria-labelledby': 'webhooks-title' }, el('h3', { id: 'webhooks-title' }, 'Webhook endpoints'), body);
}
