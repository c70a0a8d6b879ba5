// The users column: a search by part of the name or email, a paginated list to choose a user
// from (each with their role, standing and whether two-factor sign-in is on), and the form to
// create one.

import { api } from './api.js';
import { el, field, replaceChildren } from './dom.js';
import { showError, showNotice } from './notice.js';

const PAGE_SIZE = 20;

function roleSelect(name) {
  return el('select', { name }, el('option', { value: 'member' }, 'member'), el('option', { value: 'creator' }, 'creator'));
}

/** { element, reload(), select(id) }; `onSelect(user)` is called when a user is chosen. */
export function usersPanel({ onSelect }) {
  const state = { page: 1, users: [], pagination: null, selectedId: null, query: '' };
  // Answers to searches typed quickly one after another can arrive out of order: only the last counts.
  let latestLoad = 0;
  const count = el('span', { class: 'count' });
  const list = el('div', { class: 'users-list' }, el('p', { class: 'empty' }, 'Loading users…'));
  const pager = el('nav', { class: 'pager', 'aria-label': 'Users pages' });

  async function load() {
    const thisLoad = ++latestLoad;
    try {
      const answer = await api.listUsers(state.page, PAGE_SIZE, state.query);
      if (thisLoad !== latestLoad) return;
      state.users = answer.data ?? [];
      state.pagination = answer.pagination ?? null;
      if (state.users.length === 0 && state.page > 1) {
        state.page = Math.max(1, state.pagination?.total_pages ?? 1);
        return load();
      }
    } catch (error) {
      showError(error, 'Could not load the users');
    }
    draw();
  }

  function draw() {
    const total = state.pagination?.total ?? state.users.length;
    count.textContent = `${total}`;
    replaceChildren(
      list,
      state.users.length === 0
        ? el('p', { class: 'empty' }, state.query ? `No user's name or email contains "${state.query}".` : 'No users yet. Create the first one below.')
        : el(
            'table',
            { class: 'users-table' },
            el('caption', { class: 'visually-hidden' }, 'Users'),
            el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'User'), el('th', { scope: 'col' }, 'Role'))),
            el(
              'tbody',
              {},
              state.users.map((user) => {
                const selected = user.id === state.selectedId;
                return el(
                  'tr',
                  { class: selected ? 'selected' : null, dataset: { userId: user.id } },
                  el(
                    'td',
                    {},
                    el('button', { type: 'button', class: 'link user-choice', 'aria-current': selected ? 'true' : null, onclick: () => choose(user) }, user.name || `(erased ${user.id})`),
                    el('div', { class: 'email' }, user.email || el('span', { class: 'muted' }, 'no email')),
                  ),
                  el(
                    'td',
                    {},
                    el('span', { class: `badge role-${user.role === 'creator' ? 'creator' : 'member'}` }, String(user.role)),
                    user.status && user.status !== 'active' ? el('span', { class: `badge status-${user.status}` }, user.status) : null,
                    user.two_factor ? el('span', { class: 'badge ok two-factor-badge', title: 'Two-factor sign-in is on' }, '2FA') : null,
                  ),
                );
              }),
            ),
          ),
    );
    const totalPages = Math.max(1, state.pagination?.total_pages ?? 1);
    replaceChildren(
      pager,
      el('button', { type: 'button', class: 'secondary small', disabled: state.page <= 1, onclick: () => { state.page -= 1; load(); } }, '‹ Previous'),
      el('span', {}, `Page ${state.page} of ${totalPages}`),
      el('button', { type: 'button', class: 'secondary small', disabled: state.page >= totalPages, onclick: () => { state.page += 1; load(); } }, 'Next ›'),
    );
  }

  function choose(user) {
    state.selectedId = user.id;
    draw();
    onSelect(user);
  }

  const searchInput = el('input', { type: 'search', name: 'q', id: 'users-search', maxlength: 200, autocomplete: 'off', spellcheck: 'false', placeholder: 'Part of a name or email' });
  function search(event) {
    event?.preventDefault();
    state.query = searchInput.value.trim();
    state.page = 1;
    load();
  }
  searchInput.addEventListener('input', () => search());
  const searchForm = el('form', { class: 'users-search', role: 'search', novalidate: true, onsubmit: search }, field('Find a user', searchInput));

  const nameInput = el('input', { type: 'text', name: 'name', required: true, maxlength: 200, autocomplete: 'off' });
  const emailInput = el('input', { type: 'email', name: 'email', autocomplete: 'off' });
  const newRole = roleSelect('role');
  const createButton = el('button', { type: 'submit', class: 'primary' }, 'Create user');

  async function create(event) {
    event.preventDefault();
    const name = nameInput.value.trim();
    if (!name) {
      nameInput.focus();
      showError(new Error('A user needs a name.'));
      return;
    }
    const body = { name, role: newRole.value };
    const email = emailInput.value.trim();
    if (email) body.email = email;
    createButton.disabled = true;
    try {
      const answer = await api.createUser(body);
      createForm.reset();
      showNotice(`User "${answer.data.name}" created.`);
      // The new user opens at once, whichever page of the list it falls on.
      await load();
      choose(answer.data);
    } catch (error) {
      showError(error, 'Could not create the user');
    } finally {
      createButton.disabled = false;
    }
  }

  const createForm = el(
    'form',
    { class: 'create-user', novalidate: true, onsubmit: create },
    el('h3', {}, 'New user'),
    field('Name', nameInput),
    field('Email (optional)', emailInput),
    field("New user's role", newRole, 'Creators may publish listings; members may not.'),
    el('div', { class: 'actions' }, createButton),
  );

  const element = el(
    'section',
    { class: 'panel users-panel', 'aria-labelledby': 'users-title' },
    el('h2', { id: 'users-title' }, 'Users ', count),
    searchForm,
    list,
    pager,
    createForm,
  );
  load();
  return {
    element,
    reload: load,
    /** Marks `user` chosen and replaces its row with the newer copy. */
    update(user) {
      state.users = state.users.map((existing) => (existing.id === user.id ? user : existing));
      state.selectedId = user.id;
      draw();
    },
  };
}
