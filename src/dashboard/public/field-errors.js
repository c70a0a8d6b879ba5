// A refused form shown where the person is looking: each problem the server names for a field
// goes under that field, in words, tied to it for screen readers (aria-invalid, and the
// problem's id added to aria-describedby), and focus moves to the first such field. Only what no
// field of the form explains goes to the page's message area.

import { el } from './dom.js';
import { showError } from './notice.js';

/** Removes the problems a previous attempt left on `form`, and the marks on its controls. */
export function clearFieldErrors(form) {
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

/** 'must be in the future' → 'Must be in the future.' */
function inWords(problem) {
  const text = String(problem).trim();
  const sentence = text.charAt(0).toUpperCase() + text.slice(1);
  return /[.!?]$/.test(sentence) ? sentence : `${sentence}.`;
}

/**
 * Shows `error` on `form`: `controls` maps the API's field names to the form's controls. Problems
 * for known fields appear under them; the error goes to the message area (with its request id,
 * which a 5xx needs for support) only when some part of it belongs to no field.
 */
export function showFormError(form, controls, error, prefix) {
  clearFieldErrors(form);
  const details = error && error.details && typeof error.details === 'object' ? Object.entries(error.details) : [];
  const placed = details.filter(([name]) => controls[name]);
  if (placed.length === 0 || placed.length < details.length || (error && error.status >= 500)) showError(error, prefix);
  for (const [name, problem] of placed) {
    const control = controls[name];
    const line = el('p', { class: 'field-problem from-server', id: `${control.id}-problem` }, inWords(problem));
    control.closest('.field').append(line);
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
