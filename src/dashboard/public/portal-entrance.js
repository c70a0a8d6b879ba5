// The ways into the portal: sign in, set a password from an invitation link (also how a
// forgotten password is reset), and sign up where the marketplace allows it. Each resolves by
// calling `onSignedIn()` once the server has set the session cookie (after the code step when
// two-factor sign-in is on: portal-two-factor.js).

import { el, field, replaceChildren } from './dom.js';
import { fieldCheckedSubmit } from './field-errors.js';
import { showError, showNotice } from './notice.js';
import { portal } from './portal-api.js';
import { secondFactorForm } from './portal-two-factor.js';

const PASSWORD_HINT = '12 to 128 characters; a common password is refused.';

/** The invitation token in the page's address (`/portal#invitation=…`), or null. */
export function invitationFromHash(hash = window.location.hash) {
  const match = /(?:^#|&)invitation=([^&]+)/.exec(hash);
  return match ? decodeURIComponent(match[1]) : null;
}

function passwordInput(name, autocomplete) {
  return el('input', { type: 'password', name, autocomplete, minlength: 12, maxlength: 128, required: true, spellcheck: 'false' });
}

function signInForm({ onSignedIn, showSignUp, showSecondFactor }) {
  const email = el('input', { type: 'email', name: 'email', autocomplete: 'username', required: true, spellcheck: 'false' });
  const password = passwordInput('password', 'current-password');
  const submit = el('button', { type: 'submit', class: 'primary', id: 'sign-in-button' }, 'Sign in');
  const onsubmit = fieldCheckedSubmit(submit, { email, password }, '', async () => {
    let answer;
    try {
      answer = await portal.signIn(email.value.trim(), password.value);
    } catch (error) {
      password.select();
      throw error;
    }
    password.value = '';
    // With two-factor sign-in on, the password earns a ticket for the code step (202).
    if (answer?.data?.second_factor) showSecondFactor(answer.data.ticket);
    else onSignedIn();
  });
  return el(
    'section',
    { class: 'panel sign-in', id: 'sign-in', 'aria-labelledby': 'sign-in-title' },
    el('h2', { id: 'sign-in-title' }, 'Sign in'),
    el('p', {}, 'Sign in to make and manage your API keys, watch your usage, test your webhooks and look after your listings.'),
    el('form', { id: 'sign-in-form', novalidate: true, onsubmit }, field('Email', email), field('Password', password), el('div', { class: 'actions' }, submit)),
    el(
      'p',
      { class: 'hint' },
      'No password yet, or forgot it? Ask the marketplace\u2019s operator for an invitation link. ',
      // Offered only where anyone may sign up (PORTAL_SIGNUP=open), never to fail after three fields.
      showSignUp ? el('button', { type: 'button', class: 'link', onclick: showSignUp }, 'Create an account') : null,
    ),
  );
}

function setPasswordForm(invitation, { onSignedIn }) {
  const password = passwordInput('new-password', 'new-password');
  const repeat = passwordInput('repeat-password', 'new-password');
  const submit = el('button', { type: 'submit', class: 'primary', id: 'set-password-button' }, 'Set password and sign in');
  const onsubmit = fieldCheckedSubmit(submit, { password, repeat }, 'Could not set the password', async () => {
    // Checked before sending, and said under the second field.
    if (password.value !== repeat.value) throw { status: 400, details: { repeat: 'The two passwords differ.' } };
    await portal.acceptInvitation(invitation, password.value);
    // The link is used up: take it out of the address bar and the history entry.
    history.replaceState(null, '', window.location.pathname);
    showNotice('Your password is set. Welcome!');
    onSignedIn();
  });
  return el(
    'section',
    { class: 'panel sign-in', id: 'set-password', 'aria-labelledby': 'set-password-title' },
    el('h2', { id: 'set-password-title' }, 'Choose your password'),
    el('p', {}, 'This invitation link works once and for 72 hours.'),
    el('form', { id: 'set-password-form', novalidate: true, onsubmit }, field('New password', password, PASSWORD_HINT), field('Repeat it', repeat), el('div', { class: 'actions' }, submit)),
  );
}

function signUpForm({ onSignedIn, showSignIn }) {
  const name = el('input', { type: 'text', name: 'name', autocomplete: 'name', maxlength: 100, required: true });
  const email = el('input', { type: 'email', name: 'email', autocomplete: 'email', required: true, spellcheck: 'false' });
  const password = passwordInput('new-password', 'new-password');
  const submit = el('button', { type: 'submit', class: 'primary' }, 'Create account');
  const onsubmit = fieldCheckedSubmit(submit, { name, email, password }, 'Could not create the account', async () => {
    try {
      await portal.signUp(name.value.trim(), email.value.trim(), password.value);
    } catch (error) {
      if (error.status === 404) throw new Error('This marketplace opens accounts by invitation only: ask its operator for a link.');
      throw error;
    }
    onSignedIn();
  });
  return el(
    'section',
    { class: 'panel sign-in', id: 'sign-up', 'aria-labelledby': 'sign-up-title' },
    el('h2', { id: 'sign-up-title' }, 'Create an account'),
    el('form', { novalidate: true, onsubmit }, field('Name', name), field('Email', email), field('Password', password, PASSWORD_HINT), el('div', { class: 'actions' }, submit)),
    el('p', { class: 'hint' }, el('button', { type: 'button', class: 'link', onclick: showSignIn }, 'I have an account: sign in')),
  );
}

/** Whether anyone may sign up here; asked of the server before the sign-in form is shown. */
async function signupIsOpen() {
  try {
    return (await portal.settings()).data.signup === 'open';
  } catch {
    return false;
  }
}

/** Fills `area` with the right way in: the invitation's password form when given one (or one is in the address). */
export async function showEntrance(area, { onSignedIn, invitation: given = null }) {
  const invitation = given ?? invitationFromHash();
  const open = invitation ? false : await signupIsOpen();
  const showSignIn = () => {
    replaceChildren(area, signInForm({ onSignedIn, showSignUp: open ? showSignUp : null, showSecondFactor }));
    area.querySelector('input')?.focus();
  };
  const showSecondFactor = (ticket) => {
    const onStartAgain = (message) => {
      showSignIn();
      showError(new Error(message));
    };
    replaceChildren(area, secondFactorForm(ticket, { onSignedIn, onStartAgain }));
    area.querySelector('input')?.focus();
  };
  const showSignUp = () => {
    replaceChildren(area, signUpForm({ onSignedIn, showSignIn }));
    area.querySelector('input')?.focus();
  };
  if (invitation) {
    replaceChildren(area, setPasswordForm(invitation, { onSignedIn }));
    area.querySelector('input')?.focus();
  } else {
    showSignIn();
  }
}
