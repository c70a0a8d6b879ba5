// The portal's webhooks page: the user's endpoints, a form to register one (its signing secret
// shown once), and per endpoint: send a signed test ping, see the last 50 deliveries, remove.

import { copyOnceBox } from './copy-once.js';
import { confirmDialog } from './dialog.js';
import { el, field, replaceChildren, uniqueId } from './dom.js';
import { formatDate } from './format.js';
import { showError, showNotice } from './notice.js';
import { listOf, portal } from './portal-api.js';

const EVENTS = ['listing.created', 'listing.updated', 'listing.archived', 'listing.removed', 'user.updated', 'ping'];

function deliveriesList(deliveries) {
  if (deliveries.length === 0) return el('p', { class: 'empty' }, 'No deliveries yet.');
  return el(
    'ol',
    { class: 'deliveries' },
    deliveries.map((delivery) => {
      const ok = typeof delivery.status === 'number' ? delivery.status >= 200 && delivery.status < 300 : delivery.outcome === 'delivered';
      return el(
        'li',
        { class: ok ? 'good' : 'bad' },
        el('span', { class: 'delivery-event' }, el('code', {}, delivery.event ?? delivery.type ?? 'event')),
        el('span', {}, formatDate(delivery.at ?? delivery.time ?? delivery.delivered_at ?? delivery.created_at)),
        el('span', {}, `status ${delivery.status ?? delivery.outcome ?? '—'}`),
        el('span', {}, `${delivery.attempts ?? 1} attempt${(delivery.attempts ?? 1) === 1 ? '' : 's'}`),
        delivery.duration_ms !== undefined ? el('span', {}, `${delivery.duration_ms} ms`) : null,
      );
    }),
  );
}

export function webhooksPage() {
  const state = { webhooks: [], secret: null, open: null };
  const list = el('div', { class: 'webhook-cards', 'aria-live': 'polite' });
  const formArea = el('div');

  async function load() {
    try {
      state.webhooks = listOf(await portal.listWebhooks());
    } catch (error) {
      showError(error, 'Could not load your webhooks');
    }
    draw();
  }

  function draw() {
    replaceChildren(formArea, state.secret ? secretBox(state.secret) : registerForm());
    replaceChildren(list, state.webhooks.length === 0 ? el('p', { class: 'empty' }, 'No webhooks yet.') : state.webhooks.map(card));
  }

  function registerForm() {
    const url = el('input', { type: 'url', name: 'webhook-url', required: true, placeholder: 'https://example.com/hooks/marketplace', spellcheck: 'false' });
    const boxes = EVENTS.map((event) => {
      const id = uniqueId('event');
      const box = el('input', { type: 'checkbox', id, value: event, checked: true });
      return { box, row: el('div', { class: 'choice' }, box, el('label', { for: id }, el('code', {}, event))) };
    });
    const submit = el('button', { type: 'submit', class: 'primary' }, 'Register webhook');
    async function onsubmit(event) {
      event.preventDefault();
      const events = boxes.filter(({ box }) => box.checked).map(({ box }) => box.value);
      submit.disabled = true;
      try {
        const answer = await portal.createWebhook({ url: url.value.trim(), events });
        state.secret = answer.data;
        await load();
      } catch (error) {
        showError(error, 'Could not register the webhook');
      } finally {
        submit.disabled = false;
      }
    }
    return el(
      'details',
      { class: 'panel', open: state.webhooks.length === 0 },
      el('summary', {}, 'Register a webhook'),
      el('form', { id: 'webhook-form', novalidate: true, onsubmit }, field('Endpoint URL', url, 'Events are POSTed here, signed with the webhook\u2019s secret (Standard Webhooks).'), el('fieldset', {}, el('legend', {}, 'Events'), boxes.map(({ row }) => row)), el('div', { class: 'actions' }, submit)),
    );
  }

  function secretBox(webhook) {
    return copyOnceBox({
      id: 'webhook-secret',
      value: webhook.secret,
      label: 'The webhook signing secret',
      noun: 'secret',
      heading: 'Signing secret: copy it now',
      warning: 'Your endpoint checks each delivery\u2019s signature with this secret. It is shown only now.',
      hideLabel: 'I have stored it: hide the secret',
      onHide: () => {
        state.secret = null;
        draw();
      },
    });
  }

  function card(webhook) {
    const deliveries = el('div', { class: 'deliveries-area' });
    async function showDeliveries() {
      try {
        replaceChildren(deliveries, el('h4', {}, 'Last deliveries'), deliveriesList(listOf(await portal.webhookDeliveries(webhook.id))));
      } catch (error) {
        showError(error, 'Could not load the deliveries');
      }
    }
    async function test() {
      try {
        await portal.testWebhook(webhook.id);
        showNotice('A signed ping is on its way to your endpoint.');
        setTimeout(showDeliveries, 1500);
      } catch (error) {
        showError(error, 'Could not send the test');
      }
    }
    async function remove() {
      const confirmed = await confirmDialog({ title: 'Remove this webhook?', message: `${webhook.url} gets no more events; events waiting for it are dropped.`, confirmLabel: 'Remove webhook', danger: true });
      if (!confirmed) return;
      try {
        await portal.removeWebhook(webhook.id);
        showNotice('Webhook removed.');
      } catch (error) {
        showError(error, 'Could not remove the webhook');
      }
      await load();
    }
    return el(
      'article',
      { class: 'webhook-card panel', dataset: { webhookId: webhook.id } },
      el('header', { class: 'card-head' }, el('h3', { class: 'url' }, webhook.url), el('span', { class: `badge ${webhook.active === false ? 'danger' : 'ok'}` }, webhook.active === false ? 'switched off' : 'active')),
      el('p', { class: 'entries' }, (webhook.events ?? []).map((event) => el('code', {}, event))),
      el('p', { class: 'muted' }, `Registered ${formatDate(webhook.created_at)}`),
      el(
        'div',
        { class: 'card-actions' },
        el('button', { type: 'button', class: 'secondary small', onclick: test }, 'Send test ping'),
        el('button', { type: 'button', class: 'secondary small', onclick: showDeliveries }, 'Deliveries'),
        el('button', { type: 'button', class: 'danger small', onclick: remove }, 'Remove'),
      ),
      deliveries,
    );
  }

  load();
  return el('section', { class: 'portal-webhooks', 'aria-labelledby': 'webhooks-title' }, el('h2', { id: 'webhooks-title' }, 'Webhooks'), formArea, list);
}
