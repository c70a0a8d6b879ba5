// The right-hand column for one user: who they are, their role (changeable), their standing
// (suspend, unsuspend, erase, each confirmed with what will happen), whether two-factor sign-in
// is on (reset with a reason, for someone who lost their phone and recovery codes), a portal
// invitation link, keys and webhooks.

import { api } from './api.js';
import { confirmDialog, reasonDialog } from './dialog.js';
import { el, field, replaceChildren } from './dom.js';
import { formatDate } from './format.js';
import { invitationSection } from './invitation.js';
import { keysSection } from './keys.js';
import { showError, showNotice } from './notice.js';
import { webhooksSection } from './webhooks.js';

/** `onUserChanged(user)` is called with the server's copy after an edit; keys and usage stay open. */
export function userDetail(user, { onUserChanged }) {
  let current = user;
  const roleBadge = el('span', { class: `badge role-${user.role === 'creator' ? 'creator' : 'member'}` }, String(user.role));
  const roleChoice = el('select', { name: 'role' }, el('option', { value: 'member' }, 'member'), el('option', { value: 'creator' }, 'creator'));
  roleChoice.value = user.role;
  const saveRole = el('button', { type: 'submit', class: 'secondary', disabled: true }, 'Change role');
  roleChoice.addEventListener('change', () => {
    saveRole.disabled = roleChoice.value === current.role;
  });

  async function changeRole(event) {
    event.preventDefault();
    if (roleChoice.value === current.role) return;
    saveRole.disabled = true;
    try {
      const answer = await api.updateUser(current.id, { role: roleChoice.value });
      current = answer.data;
      roleBadge.className = `badge role-${current.role === 'creator' ? 'creator' : 'member'}`;
      roleBadge.textContent = String(current.role);
      showNotice(`"${current.name}" is now a ${current.role}.`);
      onUserChanged(current);
    } catch (error) {
      roleChoice.value = current.role;
      showError(error, 'Could not change the role');
    }
  }

  const statusBadge = el('span', { class: 'badge' });
  const standing = el('div', { class: 'toolbar moderation-actions' });

  function drawStanding() {
    const status = current.status ?? 'active';
    statusBadge.className = `badge status-${status}`;
    statusBadge.textContent = status === 'active' ? 'Active' : status === 'suspended' ? 'Suspended' : 'Erased';
    statusBadge.title = current.suspension_reason ? `Reason: ${current.suspension_reason}` : '';
    replaceChildren(
      standing,
      status === 'active' ? el('button', { type: 'button', class: 'secondary', onclick: suspend }, 'Suspend user') : null,
      status === 'suspended' ? el('button', { type: 'button', class: 'secondary', onclick: unsuspend }, 'Unsuspend user') : null,
      status === 'suspended' && current.suspension_reason ? el('p', { class: 'muted suspension-reason' }, `Suspended: ${current.suspension_reason}`) : null,
      status !== 'erased' ? el('button', { type: 'button', class: 'danger', onclick: erase }, 'Delete user') : null,
    );
  }

  async function act(work, done) {
    try {
      current = (await work()).data;
      drawStanding();
      showNotice(done);
      onUserChanged(current);
    } catch (error) {
      showError(error);
    }
  }

  async function suspend() {
    const reason = await reasonDialog({
      title: `Suspend "${current.name}"?`,
      message:
        'Their API keys will be refused (403) on every request, their listings will disappear from the marketplace ' +
        '(404 to everyone else), and their webhooks will receive nothing while suspended. You can unsuspend them later.',
      confirmLabel: 'Suspend user',
    });
    if (reason === null) return;
    await act(() => api.suspendUser(current.id, reason), `"${current.name}" is suspended.`);
  }

  async function unsuspend() {
    const confirmed = await confirmDialog({
      title: `Unsuspend "${current.name}"?`,
      message: 'Their keys will work again from the next request and their active listings will reappear.',
      confirmLabel: 'Unsuspend user',
    });
    if (!confirmed) return;
    await act(() => api.unsuspendUser(current.id), `"${current.name}" is active again.`);
  }

  async function erase() {
    const name = current.name;
    const confirmed = await confirmDialog({
      title: `Delete "${name}" for good?`,
      message:
        'This erases the user: every key is revoked, every webhook removed, every listing taken down, and their name, email, bio, ' +
        'website and avatar are erased from the server, including its data files. Backups made before stay as they are. This cannot be undone.',
      confirmLabel: 'Delete user',
      danger: true,
    });
    if (!confirmed) return;
    await act(() => api.eraseUser(current.id), `"${name}" was erased.`);
    // The page must not keep showing what was erased: draw the user afresh from the answer.
    if ((current.status ?? 'active') === 'erased') section.replaceWith(userDetail(current, { onUserChanged }));
  }

  drawStanding();

  const twoFactorState = el('dd', { id: 'two-factor-state' });
  const twoFactorActions = el('div', { class: 'toolbar two-factor-actions' });
  function drawTwoFactor() {
    twoFactorState.textContent = current.two_factor ? 'On' : 'Off';
    replaceChildren(
      twoFactorActions,
      current.two_factor && (current.status ?? 'active') !== 'erased'
        ? el('button', { type: 'button', class: 'secondary', id: 'reset-two-factor', onclick: resetTwoFactor }, 'Reset two-factor')
        : null,
    );
  }

  async function resetTwoFactor() {
    const reason = await reasonDialog({
      title: `Reset two-factor sign-in of "${current.name}"?`,
      message:
        'Two-factor sign-in is turned off for this user (codes locked after wrong tries are unlocked too) and every session of theirs ends. ' +
        'Whoever has the password can then sign in with it alone, so do this only once you are sure the request comes from them. ' +
        'The reason is kept in the audit log.',
      confirmLabel: 'Reset two-factor',
    });
    if (reason === null) return;
    try {
      await api.resetTwoFactor(current.id, reason);
      current = (await api.getUser(current.id)).data;
      drawTwoFactor();
      showNotice(`Two-factor sign-in of "${current.name}" is off and their sessions have ended.`);
      onUserChanged(current);
    } catch (error) {
      showError(error, 'Could not reset two-factor sign-in');
    }
  }
  drawTwoFactor();

  const facts = el(
    'dl',
    { class: 'facts' },
    el('div', {}, el('dt', {}, 'Id'), el('dd', {}, el('code', {}, user.id))),
    el('div', {}, el('dt', {}, 'Email'), el('dd', {}, user.email || '—')),
    el('div', {}, el('dt', {}, 'Created'), el('dd', { title: user.created_at }, formatDate(user.created_at))),
    el('div', {}, el('dt', {}, 'Two-factor sign-in'), twoFactorState),
    user.bio ? el('div', {}, el('dt', {}, 'Bio'), el('dd', {}, user.bio)) : null,
  );

  const section = el(
    'section',
    { class: 'panel user-detail', 'aria-labelledby': 'user-title', dataset: { userId: user.id } },
    el('div', { class: 'section-head' }, el('h2', { id: 'user-title' }, user.name || '(erased user)'), el('div', { class: 'toolbar' }, roleBadge, statusBadge)),
    facts,
    el('form', { class: 'role-form inline', novalidate: true, onsubmit: changeRole }, field('Role of this user', roleChoice), saveRole),
    standing,
    twoFactorActions,
    (user.status ?? 'active') !== 'erased' ? invitationSection(user) : null,
    keysSection(user),
    webhooksSection(user),
  );
  return section;
}
