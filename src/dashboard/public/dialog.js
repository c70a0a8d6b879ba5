// Modal dialogs built on <dialog>: a confirmation and the tier picker. Each resolves a promise
// with the operator's choice and removes itself; Escape or Cancel means "no".

import { el } from './dom.js';
import { fieldCheckedSubmit } from './field-errors.js';
import { tierPicker } from './tier-picker.js';

function openDialog(content, { labelledBy }) {
  const dialog = el('dialog', { class: 'dialog', 'aria-labelledby': labelledBy }, content);
  document.body.appendChild(dialog);
  dialog.showModal();
  return dialog;
}

/** Resolves true when the operator confirms, false otherwise. */
export function confirmDialog({ title, message, confirmLabel, danger = false }) {
  return new Promise((resolve) => {
    let confirmed = false;
    const cancel = el('button', { type: 'button', class: 'secondary', onclick: () => dialog.close() }, 'Cancel');
    const confirm = el(
      'button',
      { type: 'button', class: danger ? 'danger' : 'primary', onclick: () => { confirmed = true; dialog.close(); } },
      confirmLabel,
    );
    const dialog = openDialog(
      [el('h2', { id: 'dialog-title' }, title), el('p', {}, message), el('div', { class: 'actions' }, cancel, confirm)],
      { labelledBy: 'dialog-title' },
    );
    dialog.addEventListener('close', () => {
      dialog.remove();
      resolve(confirmed);
    });
    // The safe choice has the focus, so Enter alone never destroys anything.
    cancel.focus();
  });
}

/**
 * A dialog holding a small form (the portal uses it too): `read()` returns the value to resolve, or null after showing
 * what is missing (the dialog then stays open). Resolves that value, or null if cancelled.
 * With `send(value)`, the dialog stays open while it runs and closes only once it succeeds; what
 * it throws is shown in the dialog, under the field `controls` names for it, or under the fields
 * (after `errorPrefix`).
 */
export function formDialog({ title, fields, confirmLabel, confirmClass, read, focus, send = null, controls = {}, errorPrefix = '' }) {
  return new Promise((resolve) => {
    let chosen = null;
    const confirm = el('button', { type: 'submit', class: confirmClass }, confirmLabel);
    const submit = fieldCheckedSubmit(confirm, controls, errorPrefix, async () => {
      const value = read();
      if (value === null) return;
      if (send) await send(value);
      chosen = value;
      dialog.close();
    });
    const form = el(
      'form',
      { class: 'dialog-form', novalidate: true, onsubmit: submit },
      el('h2', { id: 'dialog-title' }, title),
      ...fields,
      el('div', { class: 'actions' }, el('button', { type: 'button', class: 'secondary', onclick: () => dialog.close() }, 'Cancel'), confirm),
    );
    const dialog = openDialog(form, { labelledBy: 'dialog-title' });
    dialog.addEventListener('close', () => {
      dialog.remove();
      resolve(chosen);
    });
    focus();
  });
}

/**
 * Asks for a reason (kept on the record and in the audit log) before a moderation action;
 * `message` says what will happen. Resolves the trimmed reason, or null if cancelled.
 */
export function reasonDialog({ title, message, confirmLabel }) {
  const input = el('textarea', { id: 'dialog-reason', name: 'reason', rows: 3, maxlength: 500, required: true });
  const problem = el('p', { class: 'hint error-text', id: 'dialog-reason-problem', hidden: true }, 'Give a reason (1 to 500 characters).');
  input.setAttribute('aria-describedby', 'dialog-message dialog-reason-problem');
  return formDialog({
    title,
    fields: [el('p', { id: 'dialog-message' }, message), el('div', { class: 'field' }, el('label', { for: 'dialog-reason' }, 'Reason'), input, problem)],
    confirmLabel,
    confirmClass: 'danger',
    read: () => {
      const value = input.value.trim();
      if (value) return value;
      problem.hidden = false;
      input.setAttribute('aria-invalid', 'true');
      input.focus();
      return null;
    },
    focus: () => input.focus(),
  });
}

/**
 * Resolves `{plan}` (one of `tiers`, the server's plans as `{id, label, rateLimit}`) or
 * `{rate_limit}` (a custom limit), or null if cancelled. `currentId` is the key's plan (null: a
 * limit of its own of `current` requests per minute).
 */
export function tierDialog({ title, current, tiers, currentId = null }) {
  const picker = tierPicker({ name: 'dialog-tier', initial: current, markCurrent: true, tiers, initialId: currentId });
  return formDialog({
    title,
    fields: [picker.element],
    confirmLabel: 'Change plan',
    confirmClass: 'primary',
    read: () => {
      const value = picker.choice();
      if (value === null) picker.focusProblem();
      return value;
    },
    focus: () => picker.focusFirst(),
  });
}
