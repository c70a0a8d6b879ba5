// The portal's dialogs that change one webhook: edit its URL, events and description; rotate
// its secret with a chosen grace; recover (send again) what was not delivered since a time.
// Each sends its request from the dialog and stays open on a refusal, showing the server's
// problem under the field it names (a bad URL under the URL, a too-old time under "Since"),
// so a person fixes it where they are looking. Each resolves the server's answer, or null
// when cancelled.

import { formDialog } from './dialog.js';
import { el, field } from './dom.js';
import { portal } from './portal-api.js';

/** Every event a webhook may subscribe to (src/domain/events.ts), in the server's order. */
export const WEBHOOK_EVENTS = ['listing.created', 'listing.updated', 'listing.archived', 'listing.removed', 'user.updated', 'ping', 'quota.warning', 'quota.exhausted', 'key.expiring', 'plan_request.decided'];

/** How long the replaced secret keeps signing, as the rotation offers it (the server allows 0 to 7 days). */
const GRACE_CHOICES = [
  { seconds: 0, label: 'End the old secret now' },
  { seconds: 3600, label: 'Keep the old secret 1 hour' },
  { seconds: 86400, label: 'Keep the old secret 1 day' },
  { seconds: 604800, label: 'Keep the old secret 7 days' },
];
const DEFAULT_GRACE_SECONDS = 86400;
/** A recovery's proposed start: an hour back, the usual length of an outage someone just fixed. */
const DEFAULT_RECOVERY_MS = 60 * 60 * 1000;

/** Checkboxes for the events, `chosen` ticked; the first stands for the group when the server names `events`. */
export function eventBoxes(chosen, prefix) {
  const boxes = WEBHOOK_EVENTS.map((event) => {
    const box = el('input', { type: 'checkbox', id: `${prefix}-${event.replace(/[._]/g, '-')}`, value: event, checked: chosen.includes(event) });
    return { box, row: el('div', { class: 'choice' }, box, el('label', { for: box.id }, el('code', {}, event))) };
  });
  boxes[0].box.dataset.fieldLabel = 'Events';
  return { boxes, fieldset: el('fieldset', {}, el('legend', {}, 'Events'), boxes.map(({ row }) => row)), chosen: () => boxes.filter(({ box }) => box.checked).map(({ box }) => box.value) };
}

/** The value a datetime-local control shows for `ms`, in the viewer's time zone (minutes). */
function localInputValue(ms) {
  const date = new Date(ms - new Date(ms).getTimezoneOffset() * 60_000);
  return date.toISOString().slice(0, 16);
}

/** Edits URL, events and description; resolves the webhook as the server now has it. */
export async function editWebhookDialog(webhook) {
  const url = el('input', { type: 'url', id: 'dialog-webhook-url', name: 'webhook-url', value: webhook.url, required: true, spellcheck: 'false' });
  const description = el('input', { type: 'text', id: 'dialog-webhook-description', name: 'webhook-description', value: webhook.description ?? '', maxlength: 500 });
  const events = eventBoxes(webhook.events ?? [], 'dialog-event');
  let saved = null;
  const sent = await formDialog({
    title: 'Edit webhook',
    fields: [field('Endpoint URL', url), field('Description (optional)', description), events.fieldset],
    confirmLabel: 'Save changes',
    confirmClass: 'primary',
    read: () => ({ url: url.value.trim(), description: description.value.trim(), events: events.chosen() }),
    focus: () => url.focus(),
    send: async (changes) => {
      saved = (await portal.updateWebhook(webhook.id, changes)).data;
    },
    controls: { url, description, events: events.boxes[0].box },
    errorPrefix: 'Could not save the webhook',
  });
  return sent === null ? null : saved;
}

/** Rotates the secret; resolves `{secret, previous_secret_expires_at}` (the new secret, shown once). */
export async function rotateSecretDialog(webhook) {
  const select = el('select', { id: 'dialog-grace' }, GRACE_CHOICES.map((choice) => el('option', { value: String(choice.seconds) }, choice.label)));
  select.value = String(DEFAULT_GRACE_SECONDS);
  let rotated = null;
  const sent = await formDialog({
    title: 'Rotate the signing secret',
    fields: [
      el('p', {}, 'A new secret signs every delivery from now on. During the time you choose, each delivery also carries a signature made with the old secret, so your endpoint keeps accepting them while you switch it over.'),
      el('div', { class: 'field' }, el('label', { for: 'dialog-grace' }, 'Old secret'), select),
    ],
    confirmLabel: 'Rotate secret',
    confirmClass: 'danger',
    read: () => Number(select.value),
    focus: () => select.focus(),
    send: async (graceSeconds) => {
      rotated = (await portal.rotateWebhookSecret(webhook.id, graceSeconds)).data;
    },
    controls: { grace_seconds: select },
    errorPrefix: 'Could not rotate the secret',
  });
  return sent === null ? null : rotated;
}

/** Sends again every event not delivered since a chosen time; resolves `{events: N}`. */
export async function recoverDialog(webhook) {
  const since = el('input', { type: 'datetime-local', id: 'dialog-since', name: 'since', required: true, value: localInputValue(Date.now() - DEFAULT_RECOVERY_MS) });
  let recovered = null;
  const sent = await formDialog({
    title: 'Recover failed deliveries',
    fields: [
      el('p', {}, `Every event since this time that ${webhook.url} did not get (failed, still retrying, or skipped while paused) is sent again now, oldest first, with its own webhook-id, so your endpoint can drop any it already had.`),
      field('Since', since, 'Your local time. Events are kept for a limited number of days.'),
    ],
    confirmLabel: 'Send them again',
    confirmClass: 'primary',
    read: () => {
      const chosen = new Date(since.value);
      // Checked here too: an empty or partly typed time would otherwise reach the server as "Invalid Date".
      if (since.value === '' || Number.isNaN(chosen.getTime())) throw Object.assign(new Error('Choose a time.'), { status: 400, details: { since: 'choose a date and time' } });
      return chosen.toISOString();
    },
    focus: () => since.focus(),
    send: async (sinceIso) => {
      recovered = await portal.recoverWebhook(webhook.id, sinceIso);
    },
    controls: { since },
    errorPrefix: 'Could not recover the deliveries',
  });
  return sent === null ? null : recovered;
}
