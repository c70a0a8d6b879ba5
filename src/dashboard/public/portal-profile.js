// The portal's profile page: name, bio, website and avatar (the rules of PUT /v1/users/me), the
// password change (which signs out every other session), two-factor sign-in
// (portal-two-factor.js), and the email, which only the operator changes.

import { el, field } from './dom.js';
import { clearFieldErrors, showFormError } from './field-errors.js';
import { showError, showNotice } from './notice.js';
import { portal } from './portal-api.js';
import { twoFactorPanel } from './portal-two-factor.js';

export function profilePage(user, { onUserChanged }) {
  const name = el('input', { type: 'text', name: 'name', maxlength: 100, value: user.name ?? '' });
  const bio = el('textarea', { name: 'bio', rows: 3, maxlength: 500 });
  bio.value = user.bio ?? '';
  const website = el('input', { type: 'url', name: 'website', value: user.website ?? '', placeholder: 'https://' });
  const save = el('button', { type: 'submit', class: 'primary' }, 'Save profile');
  async function saveProfile(event) {
    event.preventDefault();
    const form = event.currentTarget;
    clearFieldErrors(form);
    save.disabled = true;
    try {
      const answer = await portal.updateProfile({ name: name.value.trim(), bio: bio.value.trim(), website: website.value.trim() });
      showNotice('Profile saved.');
      onUserChanged(answer.data);
    } catch (error) {
      showFormError(form, { name, bio, website }, error, 'Could not save the profile');
    } finally {
      save.disabled = false;
    }
  }

  const current = el('input', { type: 'password', name: 'current-password', autocomplete: 'current-password', required: true });
  const next = el('input', { type: 'password', name: 'new-password', autocomplete: 'new-password', minlength: 12, maxlength: 128, required: true });
  const change = el('button', { type: 'submit', class: 'primary' }, 'Change password');
  async function changePassword(event) {
    event.preventDefault();
    change.disabled = true;
    try {
      await portal.changePassword(current.value, next.value);
      current.value = '';
      next.value = '';
      showNotice('Password changed. Every other session of yours has been signed out.');
    } catch (error) {
      showError(error, 'Could not change the password');
    } finally {
      change.disabled = false;
    }
  }

  return el(
    'section',
    { class: 'portal-profile', 'aria-labelledby': 'profile-title' },
    el('h2', { id: 'profile-title' }, 'Profile'),
    el(
      'div',
      { class: 'panel' },
      el('p', {}, `Signed in as ${user.email} (${user.role}). Ask the operator to change your email.`),
      el('form', { id: 'profile-form', novalidate: true, onsubmit: saveProfile }, field('Name', name), field('Bio', bio), field('Website', website), el('div', { class: 'actions' }, save)),
    ),
    el(
      'div',
      { class: 'panel' },
      el('h3', {}, 'Password'),
      el('form', { id: 'password-form', novalidate: true, onsubmit: changePassword }, field('Current password', current), field('New password', next, '12 to 128 characters; a common password is refused.'), el('div', { class: 'actions' }, change)),
    ),
    twoFactorPanel(),
  );
}
