// The portal's profile page: name, bio, website and avatar (the rules of PUT /v1/users/me), the
// sign-in email (changed with the current password, and a code when two-factor sign-in is on),
// the password change (typed twice; it signs out every other session) and two-factor sign-in
// (portal-two-factor.js).

import { el, field } from './dom.js';
import { fieldCheckedSubmit } from './field-errors.js';
import { showNotice } from './notice.js';
import { portal } from './portal-api.js';
import { twoFactorPanel } from './portal-two-factor.js';

export function profilePage(user, { onUserChanged }) {
  const name = el('input', { type: 'text', name: 'name', maxlength: 100, value: user.name ?? '' });
  const bio = el('textarea', { name: 'bio', rows: 3, maxlength: 500 });
  bio.value = user.bio ?? '';
  const website = el('input', { type: 'url', name: 'website', value: user.website ?? '', placeholder: 'https://' });
  const save = el('button', { type: 'submit', class: 'primary' }, 'Save profile');
  const saveProfile = fieldCheckedSubmit(save, { name, bio, website }, 'Could not save the profile', async () => {
    const answer = await portal.updateProfile({ name: name.value.trim(), bio: bio.value.trim(), website: website.value.trim() });
    showNotice('Profile saved.');
    onUserChanged(answer.data);
  });

  const newEmail = el('input', { type: 'email', name: 'email', autocomplete: 'email', required: true, value: user.email ?? '' });
  const emailPassword = el('input', { type: 'password', name: 'email-current-password', autocomplete: 'current-password', required: true });
  const emailCode = el('input', { type: 'text', name: 'email-code', inputmode: 'numeric', autocomplete: 'one-time-code', maxlength: 64 });
  const changeEmail = el('button', { type: 'submit', class: 'primary' }, 'Change email');
  const saveEmail = fieldCheckedSubmit(changeEmail, { email: newEmail, current_password: emailPassword, code: emailCode }, 'Could not change the email', async () => {
    const code = emailCode.value.trim();
    const answer = await portal.updateProfile({ email: newEmail.value.trim(), current_password: emailPassword.value, ...(code === '' ? {} : { code }) });
    emailPassword.value = '';
    emailCode.value = '';
    showNotice('Email changed: sign in with it from now on. Every other session of yours has been signed out.');
    onUserChanged(answer.data);
  });

  const current = el('input', { type: 'password', name: 'current-password', autocomplete: 'current-password', required: true });
  const next = el('input', { type: 'password', name: 'new-password', autocomplete: 'new-password', minlength: 12, maxlength: 128, required: true });
  const repeat = el('input', { type: 'password', name: 'repeat-password', autocomplete: 'new-password', maxlength: 128, required: true });
  const change = el('button', { type: 'submit', class: 'primary' }, 'Change password');
  const changePassword = fieldCheckedSubmit(change, { current_password: current, password: next, repeat }, 'Could not change the password', async () => {
    // A mistyped new password would lock its owner out: both must match before anything is sent.
    if (next.value !== repeat.value) throw { status: 400, details: { repeat: 'Does not match the new password.' } };
    await portal.changePassword(current.value, next.value);
    current.value = '';
    next.value = '';
    repeat.value = '';
    showNotice('Password changed. Every other session of yours has been signed out.');
  });

  return el(
    'section',
    { class: 'portal-profile', 'aria-labelledby': 'profile-title' },
    el('h2', { id: 'profile-title' }, 'Profile'),
    el(
      'div',
      { class: 'panel' },
      el('p', {}, `Signed in as ${user.email} (${user.role}).`),
      el('form', { id: 'profile-form', novalidate: true, onsubmit: saveProfile }, field('Name', name), field('Bio', bio), field('Website', website), el('div', { class: 'actions' }, save)),
    ),
    el(
      'div',
      { class: 'panel' },
      el('h3', {}, 'Sign-in email'),
      el(
        'form',
        { id: 'email-form', novalidate: true, onsubmit: saveEmail },
        field('Email', newEmail, 'What you sign in with. Changing it signs out your other sessions.'),
        field('Current password', emailPassword),
        field('Two-factor code', emailCode, 'Only when two-factor sign-in is on: the 6-digit code from your app.'),
        el('div', { class: 'actions' }, changeEmail),
      ),
    ),
    el(
      'div',
      { class: 'panel' },
      el('h3', {}, 'Password'),
      el('form', { id: 'password-form', novalidate: true, onsubmit: changePassword }, field('Current password', current), field('New password', next, '12 to 128 characters; a common password is refused.'), field('New password again', repeat), el('div', { class: 'actions' }, change)),
    ),
    twoFactorPanel(user),
  );
}
