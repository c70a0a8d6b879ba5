// Entry point of the operator dashboard: signing in and out with the operator token, the
// page navigation (Users, Listings, Plans, Audit), and the users column beside the chosen user.

import { api, checkToken, clearToken, getToken, onUnauthorized, setToken } from './api.js';
import { auditPage } from './audit.js';
import { el, replaceChildren } from './dom.js';
import { listingsPage } from './listings.js';
import { announcePending, plansPage } from './plans.js';
import { clearNotice, showError, showNotice } from './notice.js';
import { userDetail } from './user-detail.js';
import { usersPanel } from './users.js';

const signInSection = document.getElementById('sign-in');
const signInForm = document.getElementById('sign-in-form');
const tokenInput = document.getElementById('token');
const signInButton = document.getElementById('sign-in-button');
const workspace = document.getElementById('workspace');
const session = document.getElementById('session');

function showSignIn(message) {
  replaceChildren(workspace);
  replaceChildren(session);
  workspace.hidden = true;
  signInSection.hidden = false;
  if (message) showError(new Error(message));
  tokenInput.focus();
}

// The Plans tab carries the number of plan requests waiting, so the operator sees them from any
// page; plans.js announces the number each time it loads the requests.
const pendingCount = el('span', { class: 'tab-count', hidden: true });
document.addEventListener('pending-plan-requests', (event) => {
  pendingCount.hidden = event.detail === 0;
  replaceChildren(pendingCount, ` ${event.detail}`, el('span', { class: 'visually-hidden' }, ' pending'));
});

const PAGES = [
  { id: 'users', label: 'Users', build: usersView },
  { id: 'listings', label: 'Listings', build: listingsPage },
  { id: 'plans', label: 'Plans', build: plansPage },
  { id: 'audit', label: 'Audit', build: auditPage },
];

function showWorkspace() {
  signInSection.hidden = true;
  workspace.hidden = false;
  replaceChildren(session, el('button', { type: 'button', class: 'secondary small', id: 'sign-out', onclick: signOut }, 'Sign out'));
  const view = el('div', { class: 'view' });
  const links = PAGES.map((page) =>
    el('button', { type: 'button', class: 'tab', dataset: { page: page.id }, onclick: () => open(page) }, page.label, page.id === 'plans' ? pendingCount : null),
  );
  api.listPlanRequests({ status: 'pending', limit: 1 }).then((answer) => announcePending(answer.pagination?.total ?? 0), () => {});
  function open(page) {
    clearNotice();
    for (const link of links) {
      if (link.dataset.page === page.id) link.setAttribute('aria-current', 'page');
      else link.removeAttribute('aria-current');
    }
    replaceChildren(view, page.build());
  }
  replaceChildren(workspace, el('nav', { class: 'pages', 'aria-label': 'Dashboard pages' }, links), view);
  open(PAGES[0]);
}

function usersView() {

  const detailArea = el('div', { class: 'detail-area' }, el('section', { class: 'panel placeholder' }, el('p', {}, 'Choose a user on the left to see their keys, usage and webhooks.')));
  const users = usersPanel({
    onSelect(user) {
      clearNotice();
      const detail = userDetail(user, { onUserChanged: (changed) => users.update(changed) });
      replaceChildren(detailArea, detail);
      const heading = detail.querySelector('h2');
      heading.tabIndex = -1;
      heading.focus();
    },
  });
  return el('div', { class: 'users-view' }, users.element, detailArea);
}

function signOut() {
  clearToken();
  clearNotice();
  showSignIn();
  showNotice('Signed out. The token was removed from this tab.');
}

signInForm.addEventListener('submit', async (event) => {
  event.preventDefault();
  const token = tokenInput.value.trim();
  if (!token) {
    showError(new Error('Paste the operator token first.'));
    tokenInput.focus();
    return;
  }
  signInButton.disabled = true;
  try {
    await checkToken(token);
    setToken(token);
    tokenInput.value = '';
    clearNotice();
    showWorkspace();
  } catch (error) {
    showError(error.status === 401 ? new Error('The server refused that token. Check MARKETPLACE_ADMIN_TOKEN or DATA_DIR/admin-token.') : error);
    tokenInput.select();
  } finally {
    signInButton.disabled = false;
  }
});

onUnauthorized(() => {
  clearToken();
  showSignIn('The server no longer accepts the stored token. Sign in again.');
});

if (getToken()) showWorkspace();
else showSignIn();
