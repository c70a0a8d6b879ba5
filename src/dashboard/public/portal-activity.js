// The portal's Activity page: the signed-in user's own account and security events (sign-ins
// with their address and browser, failed sign-ins, keys, plans, webhooks, password and email
// changes), newest first, 20 at a time with a button for older ones.

import { el, replaceChildren } from './dom.js';
import { formatDate } from './format.js';
import { showError } from './notice.js';
import { listOf, portal } from './portal-api.js';

const WORDS = {
  sign_in: 'Signed in',
  sign_in_failed: 'Failed sign-in (wrong password)',
  sign_in_recovery_code: 'Signed in with a recovery code',
  sign_in_wrong_code: 'Right password, wrong code',
  wrong_code: 'Wrong code for an account change',
  two_factor_locked: 'Codes locked after too many wrong ones',
  two_factor_enrol: 'Two-factor setup started',
  two_factor_on: 'Two-factor sign-in turned on',
  two_factor_off: 'Two-factor sign-in turned off',
  two_factor_recovery_codes: 'New recovery codes made',
  'user.two_factor_reset': 'Two-factor sign-in reset by the operator',
  sign_out: 'Signed out',
  'session.ended': 'A session signed out',
  'sessions.ended': 'Every other session signed out',
  'account.created': 'Account created',
  'account.invited': 'Invitation made by the operator',
  'account.suspended': 'Account suspended by the operator',
  'account.unsuspended': 'Account restored by the operator',
  'password.set': 'Password set from an invitation',
  'password.changed': 'Password changed',
  'email.changed': 'Email changed',
  'role.changed': 'Role changed',
  'key.created': 'Key created',
  'key.rolled': 'Key rolled',
  'key.revoked': 'Key revoked',
  'key.expired': 'Key expired',
  'key.updated': 'Key changed',
  'key.plan_changed': 'Key moved to another plan',
  'plan.requested': 'Plan requested',
  'plan.request_cancelled': 'Plan request cancelled',
  'plan.request_approved': 'Plan request approved',
  'plan.request_declined': 'Plan request declined',
  'webhook.created': 'Webhook registered',
  'webhook.deleted': 'Webhook removed',
};

/** Entries shown in red: someone tried and failed, or was stopped. */
const FAILURES = new Set(['sign_in_failed', 'sign_in_wrong_code', 'wrong_code', 'two_factor_locked']);

const PAGE_SIZE = 20;

function entryItem(entry) {
  const where = [entry.client_address, entry.user_agent].filter(Boolean).join(' · ');
  return el(
    'li',
    { class: FAILURES.has(entry.action) ? 'failed' : '' },
    el('span', { class: 'activity-what' }, WORDS[entry.action] ?? entry.action.replace(/[._]/g, ' ')),
    el('span', { class: 'activity-when' }, formatDate(entry.at)),
    where ? el('span', { class: 'activity-where' }, where) : null,
    entry.target.type === 'user' ? null : el('code', { class: 'activity-target' }, entry.target.id),
  );
}

export function activityPage() {
  const list = el('ol', { class: 'activity' });
  const more = el('button', { type: 'button', class: 'secondary', hidden: true, onclick: () => load() }, 'Show older');
  let page = 0;

  async function load() {
    more.disabled = true;
    try {
      const answer = await portal.activity({ page: page + 1, limit: PAGE_SIZE });
      page += 1;
      list.append(...listOf(answer).map(entryItem));
      more.hidden = page >= (answer.pagination?.total_pages ?? 0);
      if (list.children.length === 0) replaceChildren(list, el('li', { class: 'empty' }, 'Nothing yet.'));
    } catch (error) {
      showError(error, 'Could not load your activity');
    } finally {
      more.disabled = false;
    }
  }

  load();
  return el(
    'section',
    { class: 'portal-activity', 'aria-labelledby': 'activity-title' },
    el('h2', { id: 'activity-title' }, 'Activity'),
    el('p', { class: 'hint' }, 'What happened on your account, newest first: sign-ins with the address and browser they came from, and changes to your keys, plans, webhooks and password. If you do not recognise something, change your password and roll your keys.'),
    list,
    more,
  );
}
