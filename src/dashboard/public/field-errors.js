// A refused form shown where the person is looking: each problem the server names for a field
// goes under that field, in words, tied to it for screen readers (aria-invalid, and the
// problem's id added to aria-describedby), and focus moves to the first such field. What no
// field explains (a wrong password at sign-in, a conflict) goes under the form's fields, above
// its buttons, announced as an alert; never over the page. Request ids are left out of the
// words: only a server failure (5xx) adds a "Details" line with one, for whoever looks it up.

import { el } from './dom.js';

let formProblemCount = 0;

/** Removes the problems a previous attempt left on `form`, and the marks on its controls. */
export function clearFieldErrors(form) {
  for (const line of form.querySelectorAll('.form-problem.from-server')) line.remove();
  for (const line of form.querySelectorAll('.field-problem.from-server')) {
    const control = form.querySelector(`[aria-describedby~="${line.id}"]`);
    if (control) {
      const rest = control.getAttribute('aria-describedby').split(' ').filter((id) => id !== line.id);
      if (rest.length > 0) control.setAttribute('aria-describedby', rest.join(' '));
      else control.removeAttribute('aria-describedby');
      control.removeAttribute('aria-invalid');
    }
    line.remove();
  }
}

function sentence(text) {
  const trimmed = String(text).trim();
  const started = trimmed.charAt(0).toUpperCase() + trimmed.slice(1);
  return /[.!?]$/.test(started) ? started : `${started}.`;
}

/** What the field is called on the page: its label without a "(optional)" aside, or null. */
function labelOf(control) {
  // A control that stands for a group (the first of a fieldset's boxes) says the group's name.
  if (control.dataset && control.dataset.fieldLabel) return control.dataset.fieldLabel;
  const label = control.labels && control.labels[0] ? control.labels[0].textContent : '';
  const name = label.replace(/\s*\(.*?\)\s*/g, ' ').trim();
  return name === '' ? null : name;
}

/** 'is wrong' under "Current password" → 'Current password is wrong.'; 'Choose one' stays as it is. */
function inWords(problem, control) {
  const text = String(problem).trim();
  const label = labelOf(control);
  // The server's field problems are clauses ("is wrong", "must be in the future"): given their subject, they read as sentences.
  if (label && /^[a-z]/.test(text)) return sentence(`${label} ${text}`);
  return sentence(text);
}

/** The server's message for a person: without the ids it names in brackets (prq_…, key_…). */
function messageInWords(error, prefix) {
  if (error && error.status === 429 && error.retryAfter) return `Too many attempts. Try again in ${Math.max(1, Math.ceil(error.retryAfter / 60))} min.`;
  const message = error instanceof Error ? error.message : String(error && error.message ? error.message : error);
  const words = message.replace(/\s*\((?:[a-z]{2,4}_[A-Za-z0-9]+)\)/g, '');
  return prefix ? `${prefix}: ${words}` : words;
}

/** A line under the form's fields (above its buttons) for what belongs to no field. */
function showFormProblem(form, error, prefix) {
  formProblemCount += 1;
  const details = error && error.requestId && error.status >= 500 ? el('span', { class: 'request-id' }, `Details: request ${error.requestId}`) : null;
  const line = el('p', { class: 'form-problem from-server', id: `form-problem-${formProblemCount}`, role: 'alert' }, messageInWords(error, prefix), details);
  const actions = [...form.children].find((child) => child.classList.contains('actions'));
  if (actions) form.insertBefore(line, actions);
  else form.append(line);
}

/**
 * Shows `error` on `form`: `controls` maps the API's field names to the form's controls. Problems
 * for known fields appear under them; the error's message goes under the form's fields when some
 * part of it belongs to no field, or the server failed.
 */
export function showFormError(form, controls, error, prefix) {
  clearFieldErrors(form);
  if (error && error.handled) return;
  const details = error && error.details && typeof error.details === 'object' ? Object.entries(error.details) : [];
  const placed = details.filter(([name]) => controls[name]);
  if (placed.length === 0 || placed.length < details.length || (error && error.status >= 500)) showFormProblem(form, error, prefix);
  for (const [name, problem] of placed) {
    const control = controls[name];
    const line = el('p', { class: 'field-problem from-server', id: `${control.id}-problem` }, inWords(problem, control));
    (control.closest('.field') ?? control.closest('fieldset') ?? control.parentElement).append(line);
    const described = (control.getAttribute('aria-describedby') || '').split(' ').filter(Boolean);
    control.setAttribute('aria-describedby', [...described, line.id].join(' '));
    control.setAttribute('aria-invalid', 'true');
  }
  if (placed.length > 0) controls[placed[0][0]].focus();
}

/**
 * The submit handler of a form whose refusals are shown by field: clears the last attempt's
 * marks, runs `send` with `button` disabled, and shows what it throws on the form (`controls`
 * as for showFormError). A check made before sending throws its own `{status: 400, details}`.
 */
export function fieldCheckedSubmit(button, controls, prefix, send) {
  return async (event) => {
    event.preventDefault();
    const form = event.currentTarget;
    clearFieldErrors(form);
    button.disabled = true;
    try {
      await send();
    } catch (error) {
      showFormError(form, controls, error, prefix);
    } finally {
      button.disabled = false;
    }
  };
}
