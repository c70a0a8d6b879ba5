// The Audit page: what operators (and users, in the portal) did, newest first, filtered by action or target id.

import { api } from './api.js';
import { el, field, replaceChildren } from './dom.js';
import { formatDate } from './format.js';
import { showError } from './notice.js';

const PAGE_SIZE = 25;
const ACTIONS = ['user.create', 'user.update', 'user.suspend', 'user.unsuspend', 'user.erase', 'user.invite', 'key.create', 'key.update', 'key.revoke', 'key.roll', 'plans.replace', 'plan_request.approve', 'plan_request.decline', 'listing.remove', 'listing.restore', 'store.compact', 'portal.sign_in', 'portal.sign_out', 'portal.password_set', 'portal.password_change', 'portal.sign_up', 'portal.profile_update'];

export function auditPage() {
  const state = { page: 1, entries: [], pagination: null };
  const action = el('select', { name: 'action' }, el('option', { value: '' }, 'any action'), ACTIONS.map((value) => el('option', { value }, value)));
  const target = el('input', { type: 'text', name: 'target_id', autocomplete: 'off', spellcheck: 'false' });
  const results = el('div', { class: 'table-scroll', 'aria-live': 'polite' }, el('p', { class: 'empty' }, 'Loading the audit log…'));
  const pager = el('nav', { class: 'pager', 'aria-label': 'Audit pages' });

  async function load() {
    try {
      const answer = await api.listAudit({ action: action.value, target_id: target.value.trim(), page: state.page, limit: PAGE_SIZE });
      state.entries = answer.data ?? [];
      state.pagination = answer.pagination ?? null;
    } catch (error) {
      showError(error, 'Could not load the audit log');
    }
    draw();
  }

  function draw() {
    replaceChildren(
      results,
      state.entries.length === 0
        ? el('p', { class: 'empty' }, 'No entry matches.')
        : el(
            'table',
            { class: 'audit-table' },
            el('caption', { class: 'visually-hidden' }, 'Audit log'),
            el('thead', {}, el('tr', {}, ['When', 'Action', 'Target', 'Changes', 'Request'].map((name) => el('th', { scope: 'col' }, name)))),
            el(
              'tbody',
              {},
              state.entries.map((entry) =>
                el(
                  'tr',
                  {},
                  el('td', { title: entry.at }, formatDate(entry.at)),
                  el('td', {}, el('code', {}, entry.action), entry.actor?.type === 'user' ? el('span', { class: 'muted' }, ' by user ', el('code', {}, entry.actor.id)) : null),
                  el('td', {}, `${entry.target_type} `, el('code', {}, entry.target_id)),
                  el('td', {}, el('code', { class: 'changes' }, JSON.stringify(entry.changes))),
                  el('td', {}, el('code', { class: 'muted' }, entry.request_id)),
                ),
              ),
            ),
          ),
    );
    const totalPages = Math.max(1, state.pagination?.total_pages ?? 1);
    replaceChildren(
      pager,
      el('button', { type: 'button', class: 'secondary small', disabled: state.page <= 1, onclick: () => { state.page -= 1; load(); } }, '‹ Newer'),
      el('span', {}, `Page ${state.page} of ${totalPages}`),
      el('button', { type: 'button', class: 'secondary small', disabled: state.page >= totalPages, onclick: () => { state.page += 1; load(); } }, 'Older ›'),
    );
  }

  const form = el(
    'form',
    {
      class: 'filters',
      role: 'search',
      'aria-label': 'Filter the audit log',
      novalidate: true,
      onsubmit: (event) => {
        event.preventDefault();
        state.page = 1;
        load();
      },
    },
    field('Action', action),
    field('Target id', target),
    el('div', { class: 'actions' }, el('button', { type: 'submit', class: 'primary' }, 'Filter audit log')),
  );
  const element = el('section', { class: 'panel audit-page', 'aria-labelledby': 'audit-title' }, el('h2', { id: 'audit-title' }, 'Audit log'), form, results, pager);
  load();
  return element;
}
