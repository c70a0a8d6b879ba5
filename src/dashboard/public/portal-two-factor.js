// Two-factor sign-in on the portal page: the second step of signing in (a 6-digit code from an
// authenticator app, or a recovery code), and the profile's panel to turn it on (the secret
// shown once as text and as an otpauth:// URI, confirmed with a first code, then the recovery
// codes shown once) and off (password and a code).

import { el, field, replaceChildren } from './dom.js';
import { fieldCheckedSubmit } from './field-errors.js';
import { showError, showNotice } from './notice.js';
import { portal } from './portal-api.js';

function codeInput(name) {
  return el('input', { type: 'text', name, inputmode: 'numeric', autocomplete: 'one-time-code', pattern: '[0-9]{6}', maxlength: 6, required: true, spellcheck: 'false' });
}

function passwordInput(name) {
  return el('input', { type: 'password', name, autocomplete: 'current-password', required: true });
}

/** The second step of signing in: `ticket` from the password step, then a code → `onSignedIn()`. */
export function secondFactorForm(ticket, { onSignedIn, onStartAgain }) {
  const code = codeInput('code');
  const recovery = el('input', { type: 'text', name: 'recovery-code', autocomplete: 'off', maxlength: 64, spellcheck: 'false' });
  const submit = el('button', { type: 'submit', class: 'primary', id: 'second-factor-button' }, 'Verify and sign in');
  const onsubmit = fieldCheckedSubmit(submit, { code, recovery_code: recovery }, '', async () => {
    const typedRecovery = recovery.value.trim();
    try {
      await portal.secondFactor(ticket, typedRecovery === '' ? { code: code.value.trim() } : { recovery_code: typedRecovery });
    } catch (error) {
      code.select();
      // An expired or used ticket means the password step must be done again.
      if (!(error.status === 401 && /Sign in again/.test(error.message))) throw error;
      onStartAgain(error.message);
      return;
    }
    onSignedIn();
  });
  return el(
    'section',
    { class: 'panel sign-in', id: 'second-factor', 'aria-labelledby': 'second-factor-title' },
    el('h2', { id: 'second-factor-title' }, 'Enter your code'),
    el('p', {}, 'Two-factor sign-in is on for this account: enter the 6-digit code your authenticator app shows now.'),
    el(
      'form',
      { id: 'second-factor-form', novalidate: true, onsubmit },
      field('Code', code),
      el('details', {}, el('summary', {}, 'Lost your phone? Use a recovery code'), field('Recovery code', recovery, 'Each recovery code works once.')),
      el('div', { class: 'actions' }, submit),
    ),
  );
}

/** The profile's two-factor panel; reads the state itself. */
export function twoFactorPanel() {
  const panel = el('div', { class: 'panel', id: 'two-factor-panel', 'aria-labelledby': 'two-factor-title' });
  const body = el('div', {});
  replaceChildren(panel, el('h3', { id: 'two-factor-title' }, 'Two-factor sign-in'), body);
  const refresh = async () => {
    try {
      const state = (await portal.twoFactorStatus()).data;
      replaceChildren(body, state.enabled ? disableForm(state, refresh) : enrolForm(body, refresh));
    } catch (error) {
      showError(error, 'Could not read the two-factor state');
    }
  };
  refresh();
  return panel;
}

function enrolForm(body, refresh) {
  const password = passwordInput('two-factor-password');
  const submit = el('button', { type: 'submit', class: 'primary', id: 'two-factor-enrol-button' }, 'Set up two-factor sign-in');
  const onsubmit = fieldCheckedSubmit(submit, { current_password: password }, 'Could not start two-factor sign-in', async () => {
    const { secret, otpauth_uri: uri } = (await portal.enrolTwoFactor(password.value)).data;
    password.value = '';
    replaceChildren(body, confirmForm(body, secret, uri, refresh));
    body.querySelector('#two-factor-code')?.focus();
  });
  return el(
    'form',
    { id: 'two-factor-enrol-form', novalidate: true, onsubmit },
    el('p', {}, 'Off. With it on, signing in also asks for a 6-digit code from an authenticator app on your phone.'),
    field('Current password', password),
    el('div', { class: 'actions' }, submit),
  );
}

function confirmForm(body, secret, uri, refresh) {
  const code = codeInput('two-factor-code');
  code.id = 'two-factor-code';
  const submit = el('button', { type: 'submit', class: 'primary', id: 'two-factor-confirm-button' }, 'Turn on');
  const onsubmit = fieldCheckedSubmit(submit, { code }, 'Could not turn it on', async () => {
    const codes = (await portal.confirmTwoFactor(code.value.trim())).data.recovery_codes;
    showNotice('Two-factor sign-in is on. Every other session of yours has been signed out.');
    replaceChildren(body, recoveryCodesBox(codes, refresh));
  });
  return el(
    'form',
    { id: 'two-factor-confirm-form', novalidate: true, onsubmit },
    el('p', { class: 'warning' }, 'Add this secret to your authenticator app now: it is shown only this once.'),
    field('Secret', el('input', { type: 'text', readonly: true, class: 'secret', id: 'two-factor-secret', value: secret, spellcheck: 'false' })),
    field('Or this otpauth:// address', el('input', { type: 'text', readonly: true, class: 'secret', id: 'two-factor-uri', value: uri, spellcheck: 'false' })),
    field('Code from the app', code, 'The 6 digits the app shows now, to check it has the secret.'),
    el('div', { class: 'actions' }, submit),
  );
}

function recoveryCodesBox(codes, refresh) {
  return el(
    'section',
    { class: 'secret-reveal', 'aria-labelledby': 'recovery-codes-title' },
    el('h4', { id: 'recovery-codes-title' }, 'Your recovery codes'),
    el('p', { class: 'warning' }, 'Keep these somewhere safe: each signs you in once if you lose your phone. They are shown only this once.'),
    el('ul', { class: 'recovery-codes', id: 'recovery-codes' }, codes.map((text) => el('li', {}, el('code', {}, text)))),
    el('button', { type: 'button', class: 'secondary', id: 'recovery-codes-hide', onclick: refresh }, 'I have saved them'),
  );
}

function disableForm(state, refresh) {
  const password = passwordInput('two-factor-off-password');
  const code = codeInput('two-factor-off-code');
  const submit = el('button', { type: 'submit', class: 'secondary', id: 'two-factor-disable-button' }, 'Turn off');
  const onsubmit = fieldCheckedSubmit(submit, { current_password: password, code }, 'Could not turn it off', async () => {
    await portal.disableTwoFactor(password.value, code.value.trim());
    showNotice('Two-factor sign-in is off.');
    refresh();
  });
  return el(
    'form',
    { id: 'two-factor-disable-form', novalidate: true, onsubmit },
    el('p', {}, `On. ${state.recovery_codes_left} unused recovery code${state.recovery_codes_left === 1 ? '' : 's'} left.`),
    field('Current password', password),
    field('Code from the app', code),
    el('div', { class: 'actions' }, submit),
  );
}
