// The operator's top-up, beside a key's quota in its usage: POST /admin/v1/keys/:id/quota with
// `{add}` (give back that many requests: the count goes down) or `{used}` (set the count). The
// count is the user's on the key's plan, shared by all their keys on it, so the dialog says so.
// A refusal is shown under its field; once the server accepts, the page redraws with the count.

import { api } from './api.js';
import { formDialog } from './dialog.js';
import { el, uniqueId } from './dom.js';
import { formatCount } from './format.js';
import { showNotice } from './notice.js';
import { quotaLeftWords, quotaUsedWords } from './quota.js';

function keyName(key) {
  return key.name ? `"${key.name}"` : `${key.prefix}…${key.last_four}`;
}

/** A "Top up quota" button for `key`, whose usage shows `quota`; `onChanged()` redraws the page after a change. */
export function quotaTopUpButton(key, quota, { onChanged }) {
  return el('div', { class: 'quota-actions' }, el('button', { type: 'button', class: 'secondary small', 'aria-label': `Top up or set the quota count of ${keyName(key)}`, onclick: () => topUp(key, quota, onChanged) }, 'Top up quota'));
}

async function topUp(key, quota, onChanged) {
  const giveBack = el('input', { type: 'radio', name: 'quota-change', id: uniqueId('quota-add'), value: 'add', checked: true });
  const setCount = el('input', { type: 'radio', name: 'quota-change', id: uniqueId('quota-used'), value: 'used' });
  const add = el('input', { type: 'number', id: 'dialog-quota-add', name: 'add', inputmode: 'numeric', min: 1, step: 1, value: Math.max(1, Math.min(quota.used, quota.requests)) });
  const used = el('input', { type: 'number', id: 'dialog-quota-used', name: 'used', inputmode: 'numeric', min: 0, step: 1, value: 0 });
  add.addEventListener('input', () => (giveBack.checked = true));
  used.addEventListener('input', () => (setCount.checked = true));
  let after = null;
  const change = await formDialog({
    title: `Quota count of ${keyName(key)}`,
    fields: [
      el('p', {}, `${quotaUsedWords(quota)}; ${quotaLeftWords(quota)}. The count belongs to the user's plan: every key of theirs on it shares it.`),
      el(
        'fieldset',
        { class: 'quota-editor' },
        el('legend', {}, 'Change'),
        el('div', { class: 'choice' }, giveBack, el('label', { for: giveBack.id }, 'Top up: give back requests')),
        el('div', { class: 'field' }, el('label', { for: add.id }, 'Requests to give back'), add),
        el('div', { class: 'choice' }, setCount, el('label', { for: setCount.id }, 'Set the count used')),
        el('div', { class: 'field' }, el('label', { for: used.id }, 'Requests used'), used),
      ),
    ],
    confirmLabel: 'Save count',
    confirmClass: 'primary',
    // A number the server refuses (0 to give back, a negative count) is said under its field by the server.
    read: () => (giveBack.checked ? { add: add.value === '' ? null : Number(add.value) } : { used: used.value === '' ? null : Number(used.value) }),
    focus: () => add.select(),
    send: async (body) => {
      after = (await api.setKeyQuota(key.id, body)).data;
    },
    controls: { add, used },
    errorPrefix: 'Could not change the count',
  });
  if (change === null || after === null) return;
  showNotice(`Quota count of ${keyName(key)} and the user's other keys on its plan: ${formatCount(after.used)} of ${formatCount(after.requests)} used, ${formatCount(after.remaining)} left.`);
  onChanged();
}
