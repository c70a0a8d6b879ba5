// Two-factor sign-in on the portal page: the second step of signing in (a 6-digit code from an
// authenticator app, or a recovery code), and the profile's panel to turn it on (the secret
// shown once as a QR code drawn here, as text in groups of four with a copy button and as its
// otpauth:// URI, confirmed with a first code, then the recovery codes shown once, to copy or
// download as a .txt), to make new recovery codes (password and a code) and to turn it off.

import { el, field, replaceChildren } from './dom.js';
import { fieldCheckedSubmit } from './field-errors.js';
import { showError, showNotice } from './notice.js';
import { portal } from './portal-api.js';
import { qrSvg } from './qr-svg.js';

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

/** The profile's two-factor panel for `user`; reads the state itself. */
export function twoFactorPanel(user = null) {
  const panel = el('div', { class: 'panel', id: 'two-factor-panel', 'aria-labelledby': 'two-factor-title' });
  const body = el('div', {});
  replaceChildren(panel, el('h3', { id: 'two-factor-title' }, 'Two-factor sign-in'), body);
  const refresh = async () => {
    try {
      const state = (await portal.twoFactorStatus()).data;
      replaceChildren(body, state.enabled ? enabledForms(body, state, refresh, user) : enrolForm(body, refresh, user));
    } catch (error) {
      showError(error, 'Could not read the two-factor state');
    }
  };
  refresh();
  return panel;
}

function enrolForm(body, refresh, user) {
  const password = passwordInput('two-factor-password');
  const submit = el('button', { type: 'submit', class: 'primary', id: 'two-factor-enrol-button' }, 'Set up two-factor sign-in');
  const onsubmit = fieldCheckedSubmit(submit, { current_password: password }, 'Could not start two-factor sign-in', async () => {
    const { secret, otpauth_uri: uri } = (await portal.enrolTwoFactor(password.value)).data;
    password.value = '';
    replaceChildren(body, confirmForm(body, secret, uri, refresh, user));
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

/** "JBSW Y3DP EHPK 3PXP": easier to type into an app and to check by eye. */
export function groupedSecret(secret) {
  return (secret.match(/.{1,4}/g) ?? []).join(' ');
}

/** A button that copies `text()`; where the clipboard is refused, `fallback()` selects the text instead. */
function copyButton(label, text, { id = null, fallback = () => {} } = {}) {
  const status = el('span', { class: 'copy-status', 'aria-live': 'polite' });
  async function copy() {
    try {
      await navigator.clipboard.writeText(text());
      status.textContent = 'Copied.';
    } catch {
      fallback();
      status.textContent = 'Selected: press Ctrl+C (⌘C).';
    }
  }
  return el('span', { class: 'copy-control' }, el('button', { type: 'button', class: 'secondary small', id, onclick: copy }, label), status);
}

function confirmForm(body, secret, uri, refresh, user) {
  const code = codeInput('two-factor-code');
  code.id = 'two-factor-code';
  const secretField = el('input', { type: 'text', readonly: true, class: 'secret', id: 'two-factor-secret', value: groupedSecret(secret), spellcheck: 'false' });
  const submit = el('button', { type: 'submit', class: 'primary', id: 'two-factor-confirm-button' }, 'Turn on');
  const onsubmit = fieldCheckedSubmit(submit, { code }, 'Could not turn it on', async () => {
    const codes = (await portal.confirmTwoFactor(code.value.trim())).data.recovery_codes;
    showNotice('Two-factor sign-in is on. Every other session of yours has been signed out.');
    replaceChildren(body, recoveryCodesBox(codes, refresh, user));
    body.querySelector('#recovery-codes-title')?.focus();
  });
  return el(
    'form',
    { id: 'two-factor-confirm-form', novalidate: true, onsubmit },
    el('p', { class: 'warning' }, 'Add this secret to your authenticator app now: it is shown only this once.'),
    el(
      'figure',
      { class: 'qr-figure' },
      qrSvg(uri, { id: 'two-factor-qr', label: 'QR code for your authenticator app: it holds the otpauth:// address below' }),
      el('figcaption', { class: 'hint' }, 'Scan this with your authenticator app (the code is drawn by this page; nothing is sent anywhere).'),
    ),
    el(
      'div',
      { class: 'field' },
      el('label', { for: 'two-factor-secret' }, 'Or type this secret into the app (spaces are optional)'),
      el('div', { class: 'secret-row' }, secretField, copyButton('Copy secret', () => secret, { id: 'two-factor-secret-copy', fallback: () => secretField.select() })),
    ),
    el('details', {}, el('summary', {}, 'Show the otpauth:// address'), field('The otpauth:// address', el('input', { type: 'text', readonly: true, class: 'secret', id: 'two-factor-uri', value: uri, spellcheck: 'false' }))),
    field('Code from the app', code, 'The 6 digits the app shows now, to check it has the secret.'),
    el('div', { class: 'actions' }, submit),
  );
}

/** The text of the downloaded recovery codes: what they are, for which account, one code a line. */
function recoveryCodesText(codes, user) {
  const account = user?.email ? ` for ${user.email}` : '';
  return [
    `Marketplace developer portal: two-factor recovery codes${account} (${window.location.origin})`,
    `Made ${new Date().toISOString()}. Each code signs in once, in place of a code from your app; making new codes voids these.`,
    '',
    ...codes,
    '',
  ].join('\n');
}

function recoveryCodesBox(codes, refresh, user) {
  const list = el('ul', { class: 'recovery-codes', id: 'recovery-codes' }, codes.map((text) => el('li', {}, el('code', {}, text))));
  // A link made for this box alone, forgotten (and its object URL freed) when the box closes.
  const fileUrl = URL.createObjectURL(new Blob([recoveryCodesText(codes, user)], { type: 'text/plain;charset=utf-8' }));
  const download = () => {
    const link = el('a', { href: fileUrl, download: 'marketplace-recovery-codes.txt', hidden: true });
    document.body.append(link);
    link.click();
    link.remove();
  };
  const done = () => {
    URL.revokeObjectURL(fileUrl);
    refresh();
  };
  return el(
    'section',
    { class: 'secret-reveal', 'aria-labelledby': 'recovery-codes-title' },
    el('h4', { id: 'recovery-codes-title', tabindex: '-1' }, 'Your recovery codes'),
    el('p', { class: 'warning' }, 'Keep these somewhere safe: each signs you in once if you lose your phone. They are shown only this once.'),
    list,
    el(
      'div',
      { class: 'actions recovery-actions' },
      copyButton('Copy codes', () => codes.join('\n'), { id: 'recovery-codes-copy', fallback: () => window.getSelection()?.selectAllChildren(list) }),
      el('button', { type: 'button', class: 'secondary small', id: 'recovery-codes-download', onclick: download }, 'Download (.txt)'),
    ),
    el('button', { type: 'button', class: 'secondary', id: 'recovery-codes-hide', onclick: done }, 'I have saved them'),
  );
}

/** With two-factor sign-in on: how many recovery codes are left, new ones, and turning it off. */
function enabledForms(body, state, refresh, user) {
  return [
    el('p', { id: 'two-factor-state' }, `On. ${state.recovery_codes_left} unused recovery code${state.recovery_codes_left === 1 ? '' : 's'} left.`),
    newCodesForm(body, refresh, user),
    disableForm(refresh),
  ];
}

function newCodesForm(body, refresh, user) {
  const password = passwordInput('new-codes-password');
  const code = codeInput('new-codes-code');
  const submit = el('button', { type: 'submit', class: 'secondary', id: 'new-codes-button' }, 'Make new codes');
  const onsubmit = fieldCheckedSubmit(submit, { current_password: password, code }, 'Could not make new codes', async () => {
    const codes = (await portal.newRecoveryCodes(password.value, code.value.trim())).data.recovery_codes;
    showNotice('New recovery codes made: the old ones no longer work.');
    replaceChildren(body, recoveryCodesBox(codes, refresh, user));
    body.querySelector('#recovery-codes-title')?.focus();
  });
  return el(
    'details',
    { class: 'new-codes' },
    el('summary', {}, 'Make new recovery codes'),
    el(
      'form',
      { id: 'new-codes-form', novalidate: true, onsubmit },
      el('p', {}, 'Ten new codes replace every earlier one (used or not): do this when codes ran low or a copy may have been seen.'),
      field('Current password', password),
      field('Code from the app', code),
      el('div', { class: 'actions' }, submit),
    ),
  );
}

function disableForm(refresh) {
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
    el('h4', {}, 'Turn it off'),
    field('Current password', password),
    field('Code from the app', code),
    el('div', { class: 'actions' }, submit),
  );
}
