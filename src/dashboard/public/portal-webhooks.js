// The portal's webhooks page: the user's endpoints, a form to register one (its signing secret
// shown once), and per endpoint: its last delivery, send a signed test ping, see the last 50
// deliveries coloured by state (the receiver's HTTP status or "no answer", the next retry) and
// send any of them again, remove.

import { copyOnceBox } from './copy-once.js';
import { confirmDialog } from './dialog.js';
import { el, field, focusCardHeading, replaceChildren, uniqueId } from './dom.js';
import { fieldCheckedSubmit } from './field-errors.js';
import { formatDate } from './format.js';
import { showError, showNotice } from './notice.js';
import { listOf, portal } from './portal-api.js';

const EVENTS = ['listing.created', 'listing.updated', 'listing.archived', 'listing.removed', 'user.updated', 'ping'];

const STATE_WORDS = { delivered: 'delivered', retrying: 'retrying', failed: 'failed' };

/** "HTTP 204", or "no answer" when none arrived (timeout, refused connection). */
function answerWords(responseStatus) {
  return responseStatus === null || responseStatus === undefined ? 'no answer' : `HTTP ${responseStatus}`;
}

/** One line for a webhook's most recent attempt. */
function lastDeliveryLine(last) {
  if (!last) return el('p', { class: 'last-delivery muted' }, 'Last delivery: none yet.');
  return el(
    'p',
    { class: 'last-delivery', dataset: { state: last.status } },
    'Last delivery: ',
    el('strong', {}, STATE_WORDS[last.status] ?? last.status),
    ` · ${answerWords(last.response_status)} · ${last.type} · ${formatDate(last.at)}`,
  );
}

/** The outcomes, newest first, each coloured by its state, with a button to send that event again. */
function deliveriesList(deliveries, onRedeliver) {
  if (deliveries.length === 0) return el('p', { class: 'empty' }, 'No deliveries yet.');
  return el(
    'ol',
    { class: 'deliveries' },
    deliveries.map((delivery) =>
      el(
        'li',
        { dataset: { state: delivery.status } },
        el('span', { class: 'delivery-state' }, STATE_WORDS[delivery.status] ?? delivery.status),
        el('span', { class: 'delivery-event' }, el('code', {}, delivery.event)),
        el('span', {}, answerWords(delivery.response_status)),
        el('span', {}, formatDate(delivery.at)),
        el('span', {}, `attempt ${delivery.attempts}`),
        el('span', {}, `${delivery.duration_ms} ms`),
        delivery.status === 'retrying' && delivery.next_attempt_at ? el('span', {}, `next try ${formatDate(delivery.next_attempt_at)}`) : null,
        el('button', { type: 'button', class: 'secondary small', onclick: () => onRedeliver(delivery) }, 'Send again'),
      ),
    ),
  );
}

/** Waits (a few seconds at most) until the webhook has an outcome newer than `since`. */
async function untilNewOutcome(webhookId, since) {
  for (let tries = 0; tries < 20; tries += 1) {
    await new Promise((resolve) => setTimeout(resolve, 300));
    const newest = listOf(await portal.webhookDeliveries(webhookId))[0];
    if (newest && newest.at > since) return;
  }
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
    // A problem with the events is said in their fieldset, tied to the first box.
    boxes[0].box.dataset.fieldLabel = 'Events';
    const onsubmit = fieldCheckedSubmit(submit, { url, events: boxes[0].box }, 'Could not register the webhook', async () => {
      const events = boxes.filter(({ box }) => box.checked).map(({ box }) => box.value);
      const answer = await portal.createWebhook({ url: url.value.trim(), events });
      state.secret = answer.data;
      await load();
    });
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
        focusCardHeading(`[data-webhook-id="${webhook.id}"]`);
      },
    });
  }

  function card(webhook) {
    const deliveries = el('div', { class: 'deliveries-area' });
    async function showDeliveries() {
      try {
        replaceChildren(deliveries, el('h4', {}, 'Last deliveries'), deliveriesList(listOf(await portal.webhookDeliveries(webhook.id)), redeliver));
      } catch (error) {
        showError(error, 'Could not load the deliveries');
      }
    }
    async function redeliver(delivery) {
      try {
        await portal.redeliver(webhook.id, delivery.event_id);
        showNotice(`The ${delivery.event} event is on its way again, freshly signed.`);
        await untilNewOutcome(webhook.id, delivery.at);
        await showDeliveries();
      } catch (error) {
        showError(error, 'Could not send it again');
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
      lastDeliveryLine(webhook.last_delivery),
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
