// The portal's webhooks page: the user's endpoints, a form to register one (its signing secret
// shown once), and per endpoint: its state (active, paused, or switched off and why, with a way
// to resume), its last delivery, send a signed test ping, see the last 50 deliveries coloured by
// state and send any of them again, edit, pause and resume, rotate the secret (the new one shown
// once), recover what was not delivered since a time, remove.
//
// The last delivery is kept current by asking GET /portal/v1/webhooks again every few seconds
// while the page is shown (and the tab visible): deliveries happen in the background, after the
// page was drawn, so a line drawn once would say "none yet" beside deliveries made since. Only
// the lines (and an open deliveries list) are redrawn, so a poll never moves the focus.

import { copyOnceBox } from './copy-once.js';
import { confirmDialog } from './dialog.js';
import { el, field, focusCardHeading, replaceChildren } from './dom.js';
import { fieldCheckedSubmit } from './field-errors.js';
import { formatDate } from './format.js';
import { showError, showNotice } from './notice.js';
import { listOf, portal } from './portal-api.js';
import { editWebhookDialog, eventBoxes, recoverDialog, rotateSecretDialog, WEBHOOK_EVENTS } from './portal-webhook-dialogs.js';

/** How often the page asks for the webhooks again, for their last delivery. */
const POLL_MS = 3000;

const STATE_WORDS = { delivered: 'delivered', retrying: 'retrying', failed: 'failed', skipped: 'skipped (paused)' };

/** Why a webhook is not sending, in words, by its disabled_reason. */
const DISABLED_WORDS = {
  paused: 'Paused: nothing is sent. Events meanwhile are kept as skipped; after resuming, Recover sends them.',
  gone: 'Switched off: your endpoint answered 410 Gone, which asks for no more events. Resume it once it accepts them again.',
  failing: 'Switched off: every delivery failed for 5 days. Resume it once your endpoint works; Recover then sends what it missed.',
};

/** "HTTP 204", or "no answer" when none arrived (timeout, refused connection). */
function answerWords(responseStatus) {
  return responseStatus === null || responseStatus === undefined ? 'no answer' : `HTTP ${responseStatus}`;
}

/** The badge of a webhook's state. */
function stateBadge(webhook) {
  if (webhook.enabled !== false) return el('span', { class: 'badge ok' }, 'active');
  if (webhook.disabled_reason === 'paused') return el('span', { class: 'badge warn' }, 'paused');
  return el('span', { class: 'badge danger' }, 'switched off');
}

/** One line for a webhook's most recent attempt. */
function lastDeliveryLine(last) {
  if (!last) return el('p', { class: 'last-delivery muted' }, 'Last delivery: none yet.');
  return el(
    'p',
    { class: 'last-delivery', dataset: { state: last.status, eventId: last.event_id, at: last.at } },
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
        { dataset: { state: delivery.status, eventId: delivery.event_id } },
        el('span', { class: 'delivery-state' }, STATE_WORDS[delivery.status] ?? delivery.status),
        el('span', { class: 'delivery-event' }, el('code', {}, delivery.event)),
        delivery.status === 'skipped' ? null : el('span', {}, answerWords(delivery.response_status)),
        el('span', {}, formatDate(delivery.at)),
        delivery.status === 'skipped' ? null : el('span', {}, `attempt ${delivery.attempts}`),
        delivery.status === 'skipped' ? null : el('span', {}, `${delivery.duration_ms} ms`),
        delivery.status === 'retrying' && delivery.next_attempt_at ? el('span', {}, `next try ${formatDate(delivery.next_attempt_at)}`) : null,
        el('button', { type: 'button', class: 'secondary small', onclick: () => onRedeliver(delivery) }, 'Send again'),
      ),
    ),
  );
}

/** What a poll compares to tell whether a card must be drawn again (anything but the last delivery). */
function shapeOf(webhook) {
  return JSON.stringify([webhook.url, webhook.events, webhook.description, webhook.enabled, webhook.disabled_reason]);
}

export function webhooksPage() {
  const state = { webhooks: [], secret: null };
  /** Each drawn card's parts a poll updates in place, by webhook id. */
  const cards = new Map();
  const list = el('div', { class: 'webhook-cards', 'aria-live': 'polite' });
  const formArea = el('div');
  const section = el('section', { class: 'portal-webhooks', 'aria-labelledby': 'webhooks-title' }, el('h2', { id: 'webhooks-title' }, 'Webhooks'), formArea, list);

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
    drawCards();
  }

  function drawCards() {
    cards.clear();
    replaceChildren(list, state.webhooks.length === 0 ? el('p', { class: 'empty' }, 'No webhooks yet.') : state.webhooks.map(card));
  }

  /** Asks for the webhooks again and brings each card's last delivery up to date; redraws a card whose settings changed. */
  async function refresh() {
    let fresh;
    try {
      fresh = listOf(await portal.listWebhooks());
    } catch {
      return; // The next poll tries again; a signed-out session is handled by the portal.
    }
    const known = new Set(state.webhooks.map((webhook) => webhook.id));
    if (fresh.length !== state.webhooks.length || fresh.some((webhook) => !known.has(webhook.id))) {
      state.webhooks = fresh;
      return drawCards(); // Not the form above: what is being typed there stays.
    }
    state.webhooks = fresh;
    for (const webhook of fresh) {
      const drawn = cards.get(webhook.id);
      if (!drawn) continue;
      if (drawn.shape !== shapeOf(webhook)) {
        const replacement = card(webhook);
        drawn.element.replaceWith(replacement);
        continue;
      }
      const last = webhook.last_delivery;
      const changed = (last?.at ?? null) !== drawn.lastAt || (last?.status ?? null) !== drawn.lastStatus;
      if (!changed) continue;
      const line = lastDeliveryLine(last);
      drawn.line.replaceWith(line);
      drawn.line = line;
      drawn.lastAt = last?.at ?? null;
      drawn.lastStatus = last?.status ?? null;
      // An open deliveries list shows the new attempt too.
      if (drawn.deliveriesOpen()) await drawn.showDeliveries();
    }
  }

  /** Polls while the page is in the document; stops once another page replaced it. */
  function poll() {
    setTimeout(async () => {
      if (!section.isConnected) return;
      if (document.visibilityState !== 'hidden') await refresh();
      poll();
    }, POLL_MS);
  }

  function registerForm() {
    const url = el('input', { type: 'url', name: 'webhook-url', required: true, placeholder: 'https://example.com/hooks/marketplace', spellcheck: 'false' });
    const description = el('input', { type: 'text', name: 'webhook-description', maxlength: 500 });
    const events = eventBoxes(WEBHOOK_EVENTS.slice(0, 6), 'event');
    const submit = el('button', { type: 'submit', class: 'primary' }, 'Register webhook');
    const onsubmit = fieldCheckedSubmit(submit, { url, description, events: events.boxes[0].box }, 'Could not register the webhook', async () => {
      const body = { url: url.value.trim(), events: events.chosen() };
      if (description.value.trim() !== '') body.description = description.value.trim();
      const answer = await portal.createWebhook(body);
      state.secret = { webhookId: answer.data.id, secret: answer.data.secret, heading: 'Signing secret: copy it now', extra: null };
      await load();
    });
    return el(
      'details',
      { class: 'panel', open: state.webhooks.length === 0 },
      el('summary', {}, 'Register a webhook'),
      el(
        'form',
        { id: 'webhook-form', novalidate: true, onsubmit },
        field('Endpoint URL', url, 'Events are POSTed here, signed with the webhook\u2019s secret (Standard Webhooks).'),
        field('Description (optional)', description),
        events.fieldset,
        el('div', { class: 'actions' }, submit),
      ),
    );
  }

  /** The secret just made (registration or rotation), shown once with a copy button. */
  function secretBox({ webhookId, secret, heading, extra }) {
    return copyOnceBox({
      id: 'webhook-secret',
      value: secret,
      label: 'The webhook signing secret',
      noun: 'secret',
      heading,
      warning: 'Your endpoint checks each delivery\u2019s signature with this secret. It is shown only now.',
      extra,
      hideLabel: 'I have stored it: hide the secret',
      onHide: () => {
        state.secret = null;
        draw();
        focusCardHeading(`[data-webhook-id="${webhookId}"]`);
      },
    });
  }

  function card(webhook) {
    const deliveries = el('div', { class: 'deliveries-area' });
    const paused = webhook.enabled === false;
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
      } catch (error) {
        showError(error, 'Could not send it again');
      }
    }
    async function test() {
      try {
        await portal.testWebhook(webhook.id);
        showNotice('A signed ping is on its way to your endpoint; its outcome shows here once it has one.');
      } catch (error) {
        showError(error, 'Could not send the test');
      }
    }
    async function edit() {
      const saved = await editWebhookDialog(webhook);
      if (saved === null) return;
      showNotice('Webhook saved.');
      await load();
      focusCardHeading(`[data-webhook-id="${webhook.id}"]`);
    }
    async function setEnabled(enabled) {
      try {
        await portal.updateWebhook(webhook.id, { enabled });
        showNotice(enabled ? 'Webhook resumed: new events are sent again.' : 'Webhook paused: events are kept as skipped until you resume it.');
      } catch (error) {
        showError(error, enabled ? 'Could not resume the webhook' : 'Could not pause the webhook');
      }
      await load();
      focusCardHeading(`[data-webhook-id="${webhook.id}"]`);
    }
    async function rotate() {
      const rotated = await rotateSecretDialog(webhook);
      if (rotated === null) return;
      const until = rotated.previous_secret_expires_at;
      const extra =
        until && Date.parse(until) > Date.now()
          ? el('p', { class: 'grace' }, `Until ${formatDate(until)} every delivery carries two signatures, this secret\u2019s first and the old one\u2019s second; then only this one.`)
          : el('p', { class: 'grace' }, 'The old secret no longer signs anything.');
      state.secret = { webhookId: webhook.id, secret: rotated.secret, heading: 'New signing secret: copy it now', extra };
      await load();
      document.getElementById('webhook-secret')?.focus();
    }
    async function recover() {
      const recovered = await recoverDialog(webhook);
      if (recovered === null) return;
      showNotice(recovered.events === 0 ? 'Nothing to send again: every event since then was delivered.' : `${recovered.events} ${recovered.events === 1 ? 'event is' : 'events are'} on their way again, oldest first.`);
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
    const line = lastDeliveryLine(webhook.last_delivery);
    const element = el(
      'article',
      { class: `webhook-card panel${paused ? ' paused' : ''}`, dataset: { webhookId: webhook.id } },
      el('header', { class: 'card-head' }, el('h3', { class: 'url' }, webhook.url), stateBadge(webhook)),
      webhook.description ? el('p', { class: 'webhook-description' }, webhook.description) : null,
      paused ? el('p', { class: 'disabled-reason', dataset: { reason: webhook.disabled_reason ?? 'gone' } }, DISABLED_WORDS[webhook.disabled_reason] ?? DISABLED_WORDS.gone) : null,
      el('p', { class: 'entries' }, (webhook.events ?? []).map((event) => el('code', {}, event))),
      el('p', { class: 'muted' }, `Registered ${formatDate(webhook.created_at)}`),
      line,
      el(
        'div',
        { class: 'card-actions' },
        paused
          ? el('button', { type: 'button', class: 'primary small', onclick: () => setEnabled(true) }, 'Resume')
          : el('button', { type: 'button', class: 'secondary small', onclick: () => setEnabled(false) }, 'Pause'),
        el('button', { type: 'button', class: 'secondary small', onclick: test }, 'Send test ping'),
        el('button', { type: 'button', class: 'secondary small', onclick: showDeliveries }, 'Deliveries'),
        el('button', { type: 'button', class: 'secondary small', onclick: edit }, 'Edit'),
        el('button', { type: 'button', class: 'secondary small', onclick: rotate }, 'Rotate secret'),
        // A paused or switched-off webhook is resumed first (the server refuses a recovery with 409).
        paused ? null : el('button', { type: 'button', class: 'secondary small', onclick: recover }, 'Recover failed\u2026'),
        el('button', { type: 'button', class: 'danger small', onclick: remove }, 'Remove'),
      ),
      deliveries,
    );
    cards.set(webhook.id, {
      element,
      line,
      shape: shapeOf(webhook),
      lastAt: webhook.last_delivery?.at ?? null,
      lastStatus: webhook.last_delivery?.status ?? null,
      deliveriesOpen: () => deliveries.firstChild !== null,
      showDeliveries,
    });
    return element;
  }

  load();
  poll();
  return section;
}
