// A first request in one paste: beside a new or rolled key's secret, a ready `curl` line and a
// `fetch` line against the server's API address (MARKETPLACE_URL, else this page's origin),
// each with its own copy button.

import { el } from './dom.js';

/** The two lines for `secret` at `baseUrl` (no trailing slash). */
export function firstRequestLines(baseUrl, secret) {
  return {
    curl: `curl -H 'Authorization: Bearer ${secret}' ${baseUrl}/v1/listings`,
    fetch: `await fetch('${baseUrl}/v1/listings', { headers: { Authorization: 'Bearer ${secret}' } }).then((answer) => answer.json())`,
  };
}

function copyLine(label, text) {
  const status = el('span', { class: 'copy-status', 'aria-live': 'polite' });
  const code = el('code', {}, text);
  async function copy() {
    try {
      await navigator.clipboard.writeText(text);
      status.textContent = 'Copied.';
    } catch {
      // Clipboard access can be refused: select the line so Ctrl+C works.
      window.getSelection()?.selectAllChildren(code);
      status.textContent = 'Selected: press Ctrl+C (⌘C).';
    }
  }
  return el(
    'div',
    { class: 'snippet' },
    el('pre', { tabindex: '0', 'aria-label': label }, code),
    el('div', { class: 'snippet-actions' }, el('button', { type: 'button', class: 'secondary small', onclick: copy }, `Copy ${label}`), status),
  );
}

/** The section shown under a new secret. */
export function firstRequestBox(baseUrl, secret) {
  const lines = firstRequestLines(baseUrl, secret);
  return el(
    'section',
    { class: 'first-request', 'aria-label': 'Your first request' },
    el('h4', {}, 'Try it'),
    copyLine('curl line', lines.curl),
    copyLine('fetch line', lines.fetch),
  );
}
