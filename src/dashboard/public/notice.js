// The page's one message area: confirmations and errors, announced to screen readers.

import { el, replaceChildren } from './dom.js';

let hideTimer = null;

function area() {
  return document.getElementById('notice');
}

/** Shows `message` (kind 'ok' or 'error'); confirmations fade after a few seconds, errors stay. */
export function showNotice(message, kind = 'ok', extra = []) {
  const notice = area();
  clearTimeout(hideTimer);
  notice.className = `notice ${kind}`;
  // Errors interrupt a screen reader; confirmations wait their turn.
  notice.setAttribute('role', kind === 'error' ? 'alert' : 'status');
  notice.setAttribute('aria-live', kind === 'error' ? 'assertive' : 'polite');
  replaceChildren(
    notice,
    el('p', {}, message, ...extra),
    el('button', { type: 'button', class: 'link', 'aria-label': 'Dismiss message', onclick: clearNotice }, '×'),
  );
  notice.hidden = false;
  if (kind === 'ok') hideTimer = setTimeout(clearNotice, 6000);
}

/** Shows an ApiError (or any error) with the server's details, as text; the request id on a 5xx only. */
export function showError(error, prefix = '') {
  if (error && error.handled) return;
  const extra = [];
  if (error && error.details && typeof error.details === 'object') {
    const items = Object.entries(error.details).map(([name, problem]) => el('li', {}, el('code', {}, name), `: ${String(problem)}`));
    if (items.length > 0) extra.push(el('ul', { class: 'details' }, items));
  }
  // A request id helps only when the server failed (5xx) and someone must look it up: it is then
  // a details line of its own; a refusal a person can fix is said in words alone.
  if (error && error.requestId && error.status >= 500) extra.push(el('span', { class: 'request-id' }, `Details: request ${error.requestId}`));
  const message = error instanceof Error ? error.message : String(error);
  showNotice(prefix ? `${prefix}: ${message}` : message, 'error', extra);
}

export function clearNotice() {
  clearTimeout(hideTimer);
  const notice = area();
  notice.hidden = true;
  replaceChildren(notice);
}

/** Clears the message only when it is an error: a confirmation (a welcome) is left to be read. */
export function clearErrorNotice() {
  if (area().classList.contains('error')) clearNotice();
}
