// Entry point of the developer portal (/portal): the way in when there is no session, then the
// signed-in user's pages (keys, webhooks, listings for creators, security: sessions and activity,
// profile) and signing out.

import { el, replaceChildren } from './dom.js';
import { clearErrorNotice, clearNotice, showError, showNotice } from './notice.js';
import { onSignedOut, portal } from './portal-api.js';
import { invitationFromHash, showEntrance } from './portal-entrance.js';
import { linkChoice } from './portal-link-choice.js';
import { keysPage } from './portal-keys.js';
import { listingsPage } from './portal-listings.js';
import { profilePage } from './portal-profile.js';
import { securityPage } from './portal-security.js';
import { webhooksPage } from './portal-webhooks.js';

const entrance = document.getElementById('entrance');
const workspace = document.getElementById('workspace');
const session = document.getElementById('session');

function pagesFor(user) {
  return [
    { id: 'keys', label: 'Keys', build: () => keysPage(user) },
    { id: 'webhooks', label: 'Webhooks', build: () => webhooksPage() },
    user.role === 'creator' ? { id: 'listings', label: 'Listings', build: () => listingsPage() } : null,
    { id: 'security', label: 'Security', build: () => securityPage() },
    { id: 'profile', label: 'Profile', build: () => profilePage(user, { onUserChanged: (changed) => Object.assign(user, changed) }) },
  ].filter(Boolean);
}

function showWorkspace(user) {
  replaceChildren(entrance);
  entrance.hidden = true;
  workspace.hidden = false;
  replaceChildren(session, el('span', { class: 'who' }, user.name), el('button', { type: 'button', class: 'secondary small', id: 'sign-out', onclick: signOut }, 'Sign out'));
  const view = el('div', { class: 'view' });
  const pages = pagesFor(user);
  const tabs = pages.map((page) => el('button', { type: 'button', class: 'tab', dataset: { page: page.id }, onclick: () => open(page) }, page.label));
  function open(page, firstShown = false) {
    // Switching pages clears the message; the first page keeps a confirmation shown on the way
    // in (the welcome after choosing a password), though not an error from the sign-in form.
    if (firstShown) clearErrorNotice();
    else clearNotice();
    for (const tab of tabs) {
      if (tab.dataset.page === page.id) tab.setAttribute('aria-current', 'page');
      else tab.removeAttribute('aria-current');
    }
    replaceChildren(view, page.build());
  }
  replaceChildren(workspace, el('nav', { class: 'pages', 'aria-label': 'Portal pages' }, tabs), view);
  open(pages[0], true);
}

function showSignIn(message, invitation = null) {
  replaceChildren(workspace);
  replaceChildren(session);
  workspace.hidden = true;
  entrance.hidden = false;
  showEntrance(entrance, { onSignedIn: start, invitation });
  if (message) showError(new Error(message));
}

/**
 * The invitation (or password-reset) token in the address, taken out of the address bar and of
 * this history entry at once, so it is neither shown, bookmarked nor left behind; or null.
 */
function takeInvitation() {
  const token = invitationFromHash();
  if (token !== null) history.replaceState(null, '', window.location.pathname + window.location.search);
  return token;
}

/** The password form for the link's `token`, in place of whatever the page showed. */
function showLinkForm(token) {
  showSignIn(null, token);
  showNotice('This link sets the password of the account it was made for; setting it signs you in as that account.');
}

/**
 * Follows an invitation link whenever one arrives, also in a tab already on /portal: signed out,
 * its password form; signed in, first the choice of portal-link-choice.js (sign out first, use
 * it for this account, or not now). The token is already out of the address bar (takeInvitation).
 */
async function followInvitation(token) {
  let user = null;
  try {
    user = (await portal.me()).data;
  } catch {
    user = null;
  }
  if (user === null) {
    showSignIn(null, token);
    return;
  }
  replaceChildren(workspace);
  workspace.hidden = true;
  entrance.hidden = false;
  replaceChildren(
    entrance,
    linkChoice(user, {
      onSignOutFirst: async () => {
        try {
          await portal.signOut();
        } catch (error) {
          showError(error, 'Could not sign out');
          return;
        }
        showLinkForm(token);
      },
      onContinue: () => showLinkForm(token),
      onNotNow: () => showWorkspace(user),
    }),
  );
  entrance.querySelector('button')?.focus();
}

async function signOut() {
  try {
    await portal.signOut();
    showSignIn();
    showNotice('Signed out.');
  } catch (error) {
    showError(error, 'Could not sign out');
  }
}

async function start() {
  const invitation = takeInvitation();
  if (invitation !== null) {
    followInvitation(invitation);
    return;
  }
  try {
    const answer = await portal.me();
    showWorkspace(answer.data);
  } catch (error) {
    if (error.status === 401) showSignIn();
    else showError(error, 'Could not reach the portal');
  }
}

onSignedOut(() => showSignIn('Your session has ended. Sign in again.'));
window.addEventListener('hashchange', () => {
  const invitation = takeInvitation();
  if (invitation !== null) followInvitation(invitation);
});
start();
