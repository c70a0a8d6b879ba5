// The right-hand column for one user: who they are, their role (changeable), keys and webhooks.

import { api } from './api.js';
import { el, field } from './dom.js';
import { formatDate } from './format.js';
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

  const facts = el(
    'dl',
    { class: 'facts' },
    el('div', {}, el('dt', {}, 'Id'), el('dd', {}, el('code', {}, user.id))),
    el('div', {}, el('dt', {}, 'Email'), el('dd', {}, user.email || '—')),
    el('div', {}, el('dt', {}, 'Created'), el('dd', { title: user.created_at }, formatDate(user.created_at))),
    user.bio ? el('div', {}, el('dt', {}, 'Bio'), el('dd', {}, user.bio)) : null,
  );

  return el(
    'section',
    { class: 'panel user-detail', 'aria-labelledby': 'user-title', dataset: { userId: user.id } },
    el('div', { class: 'section-head' }, el('h2', { id: 'user-title' }, user.name), roleBadge),
    facts,
    el('form', { class: 'role-form inline', novalidate: true, onsubmit: changeRole }, field('Role', roleChoice), saveRole),
    keysSection(user),
    webhooksSection(user),
  );
}
