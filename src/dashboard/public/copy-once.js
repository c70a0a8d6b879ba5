// The box that shows a secret once (an API key, a webhook's signing secret, an invitation link):
// the value in a read-only field, a Copy button (selecting the value where the clipboard is
// refused), and a button to hide it. Used by the operator dashboard and the developer portal.

import { el } from './dom.js';

/**
 * { id, value, noun ('key', 'link', 'secret'), label (the field's accessible name), heading?, warning, extra?, hideLabel, onHide }
 * → a <section class="secret-reveal">; the field gets `id`, so a caller can focus it.
 */
export function copyOnceBox({ id, value, noun, label, heading, warning, extra = null, hideLabel, onHide }) {
  const field = el('input', { type: 'text', readonly: true, class: 'secret', id, value, 'aria-label': label, spellcheck: 'false' });
  const status = el('p', { class: 'copy-status', 'aria-live': 'polite' });
  async function copy() {
    try {
      await navigator.clipboard.writeText(value);
      status.textContent = 'Copied to the clipboard.';
    } catch {
      // Clipboard access can be refused; leave the value selected so Ctrl+C works.
      field.select();
      status.textContent = `Could not copy automatically; the ${noun} is selected, press Ctrl+C (⌘C).`;
    }
  }
  const headingId = `${id}-title`;
  return el(
    'section',
    heading ? { class: 'secret-reveal', 'aria-labelledby': headingId } : { class: 'secret-reveal', 'aria-label': `Copy the ${noun} now` },
    heading ? el('h3', { id: headingId }, heading) : null,
    el('p', { class: 'warning' }, warning),
    extra,
    el('div', { class: 'secret-row' }, field, el('button', { type: 'button', class: 'primary', onclick: copy }, `Copy ${noun}`)),
    status,
    el('button', { type: 'button', class: 'secondary', id: `${id}-hide`, onclick: onHide }, hideLabel),
  );
}
