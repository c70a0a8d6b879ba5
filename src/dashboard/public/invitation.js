// The operator's "Invite to the portal" in a user's view: asks the server for a single-use link
// (72 hours; a new one voids the previous one) and shows it once, to copy and hand to the user.
// The same link resets a forgotten password: this server sends no email.

import { copyOnceBox } from './copy-once.js';
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
    replaceChildren(
      box,
      copyOnceBox({
        id: `invitation-${user.id}`,
        value: invitation.url,
        label: 'The invitation link',
        noun: 'link',
        warning: `Send this link to the user; it works once, until ${formatDate(invitation.expires_at)}, and replaces any earlier link. It is shown only now.`,
        hideLabel: 'Hide the link',
        onHide: () => replaceChildren(box),
      }),
    );
  }

  return el('div', { class: 'invitation' }, button, box);
}
