// The operator's "Invite to the portal" in a user's view: asks the server for a single-use link
// (72 hours; a new one voids the previous one) and shows it once, to copy and hand to the user.
// The same link resets a forgotten password: this server sends no email.

import { api } from './api.js';
import { el, replaceChildren } from './dom.js';
import { formatDate } from './format.js';
import { showError, showNotice } from './notice.js';

export function invitationSection(user) {
  const box = el('div', { class: 'invitation-box' });
  const button = el('button', { type: 'button', class: 'secondary', onclick: invite }, 'Invite to the portal');

  async function invite() {
    button.disabled = true;
    try {
      const { data } = await api.inviteUser(user.id);
      showLink(data);
      showNotice(`Invitation link for "${user.name}" made. Copy it now: it is shown only once.`);
    } catch (error) {
      showError(error, 'Could not make an invitation');
    } finally {
      button.disabled = false;
    }
  }

  function showLink(invitation) {
    const link = el('input', { type: 'text', readonly: true, class: 'secret', value: invitation.url, 'aria-label': 'The invitation link', spellcheck: 'false' });
    const status = el('p', { class: 'copy-status', 'aria-live': 'polite' });
    async function copy() {
      try {
        await navigator.clipboard.writeText(invitation.url);
        status.textContent = 'Copied to the clipboard.';
      } catch {
        link.select();
        status.textContent = 'Could not copy automatically; the link is selected, press Ctrl+C (⌘C).';
      }
    }
    replaceChildren(
      box,
      el(
        'section',
        { class: 'secret-reveal', 'aria-label': 'Invitation link' },
        el('p', { class: 'warning' }, `Send this link to the user; it works once, until ${formatDate(invitation.expires_at)}, and replaces any earlier link. It is shown only now.`),
        el('div', { class: 'secret-row' }, link, el('button', { type: 'button', class: 'primary', onclick: copy }, 'Copy link')),
        status,
        el('button', { type: 'button', class: 'secondary', onclick: () => replaceChildren(box) }, 'Hide the link'),
      ),
    );
  }

  return el('div', { class: 'invitation' }, button, box);
}
