// What the portal shows when a password link (an invitation or a reset) arrives while someone is
// signed in. The page cannot tell whose account the link was made for (the token says nothing it
// can read), so it says who is signed in and lets the person choose: sign out first and go on
// with the link (for someone else's account), set a new password with it (for their own), or
// leave it and go back to their pages.

import { el } from './dom.js';

/** The choice for `user` (the one signed in); each callback is one of the three ways on. */
export function linkChoice(user, { onSignOutFirst, onContinue, onNotNow }) {
  return el(
    'section',
    { class: 'panel sign-in', id: 'invitation-choice', 'aria-labelledby': 'invitation-choice-title' },
    el('h2', { id: 'invitation-choice-title' }, 'A password link'),
    el('p', {}, 'You are signed in as ', el('strong', {}, user.name), ` (${user.email}).`),
    el('p', {}, 'This link sets the password of the account it was made for, and signs you in as that account. If it is for someone else\u2019s account, sign out first.'),
    el(
      'div',
      { class: 'actions link-choice' },
      el('button', { type: 'button', class: 'primary', id: 'invitation-sign-out', onclick: onSignOutFirst }, 'Sign out first'),
      el('button', { type: 'button', class: 'secondary', id: 'invitation-continue', onclick: onContinue }, 'It is for my account: set a new password'),
      el('button', { type: 'button', class: 'secondary', id: 'invitation-not-now', onclick: onNotNow }, 'Not now'),
    ),
  );
}
