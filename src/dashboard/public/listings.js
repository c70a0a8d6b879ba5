// The Listings page: every listing whatever its status, searched by status, owner and text;
// remove one (with a reason, after saying what happens) or restore a removed one.

import { api } from './api.js';
import { reasonDialog, confirmDialog } from './dialog.js';
import { el, field, replaceChildren } from './dom.js';
import { formatDate } from './format.js';
import { showError, showNotice } from './notice.js';

const PAGE_SIZE = 20;

export function listingsPage() {
  const state = { page: 1, listings: [], pagination: null };
  const status = el('select', { name: 'status' }, el('option', { value: '' }, 'any status'), ['active', 'archived', 'removed'].map((value) => el('option', { value }, value)));
  const owner = el('input', { type: 'text', name: 'owner_id', autocomplete: 'off', spellcheck: 'false', placeholder: 'usr_…' });
  const text = el('input', { type: 'search', name: 'q', autocomplete: 'off', maxlength: 200 });
  const results = el('div', { class: 'table-scroll', 'aria-live': 'polite' }, el('p', { class: 'empty' }, 'Loading listings…'));
  const pager = el('nav', { class: 'pager', 'aria-label': 'Listings pages' });

  async function load() {
    results.setAttribute('aria-busy', 'true');
    try {
      const answer = await api.listListings({ status: status.value, owner_id: owner.value.trim(), q: text.value.trim(), page: state.page, limit: PAGE_SIZE });
      state.listings = answer.data ?? [];
      state.pagination = answer.pagination ?? null;
    } catch (error) {
      showError(error, 'Could not load the listings');
    }
    results.setAttribute('aria-busy', 'false');
    draw();
  }

  function draw() {
    replaceChildren(
      results,
      state.listings.length === 0
        ? el('p', { class: 'empty' }, 'No listing matches.')
        : el(
            'table',
            { class: 'listings-table' },
            el('caption', { class: 'visually-hidden' }, 'Listings'),
            el('thead', {}, el('tr', {}, ['Listing', 'Owner', 'Status', 'Created', 'Action'].map((name) => el('th', { scope: 'col' }, name)))),
            el('tbody', {}, state.listings.map(row)),
          ),
    );
    const totalPages = Math.max(1, state.pagination?.total_pages ?? 1);
    replaceChildren(
      pager,
      el('button', { type: 'button', class: 'secondary small', disabled: state.page <= 1, onclick: () => { state.page -= 1; load(); } }, '‹ Previous'),
      el('span', {}, `Page ${state.page} of ${totalPages} · ${state.pagination?.total ?? 0} listings`),
      el('button', { type: 'button', class: 'secondary small', disabled: state.page >= totalPages, onclick: () => { state.page += 1; load(); } }, 'Next ›'),
    );
  }

  function row(listing) {
    const action =
      listing.status === 'removed'
        ? el('button', { type: 'button', class: 'secondary small', 'aria-label': `Restore ${listing.title}`, onclick: () => restore(listing) }, 'Restore')
        : el('button', { type: 'button', class: 'danger small', 'aria-label': `Remove ${listing.title}`, onclick: () => remove(listing) }, 'Remove');
    return el(
      'tr',
      { dataset: { listingId: listing.id } },
      el('td', {}, el('div', { class: 'listing-title' }, listing.title), el('code', { class: 'muted' }, listing.id)),
      el('td', {}, el('code', {}, listing.owner_id)),
      el(
        'td',
        {},
        el('span', { class: `badge status-${listing.status}` }, listing.status),
        listing.removal_reason ? el('div', { class: 'muted removal-reason' }, listing.removal_reason) : null,
      ),
      el('td', { title: listing.created_at }, formatDate(listing.created_at)),
      el('td', {}, action),
    );
  }

  async function remove(listing) {
    const reason = await reasonDialog({
      title: `Remove "${listing.title}"?`,
      message:
        'The listing leaves every list and answers 404 to everyone but its owner, who can no longer change it; ' +
        "the owner's webhooks get a listing.removed event. You can restore it later.",
      confirmLabel: 'Remove listing',
    });
    if (reason === null) return;
    try {
      await api.removeListing(listing.id, reason);
      showNotice(`"${listing.title}" was removed.`);
    } catch (error) {
      showError(error, 'Could not remove the listing');
    }
    await load();
  }

  async function restore(listing) {
    const confirmed = await confirmDialog({
      title: `Restore "${listing.title}"?`,
      message: 'It becomes active again and appears in the marketplace.',
      confirmLabel: 'Restore listing',
    });
    if (!confirmed) return;
    try {
      await api.restoreListing(listing.id);
      showNotice(`"${listing.title}" is active again.`);
    } catch (error) {
      showError(error, 'Could not restore the listing');
    }
    await load();
  }

  const form = el(
    'form',
    {
      class: 'filters',
      role: 'search',
      'aria-label': 'Search listings',
      novalidate: true,
      onsubmit: (event) => {
        event.preventDefault();
        state.page = 1;
        load();
      },
    },
    field('Listing status', status),
    field('Owner id', owner),
    field('Text in title, description or tags', text),
    el('div', { class: 'actions' }, el('button', { type: 'submit', class: 'primary' }, 'Search listings')),
  );

  const element = el('section', { class: 'panel listings-page', 'aria-labelledby': 'listings-title' }, el('h2', { id: 'listings-title' }, 'Listings'), form, results, pager);
  load();
  return element;
}
