// The portal's listings page, for creators: their listings in every status (removed ones with
// the operator's reason), a form to create or edit one, archive, and each one's figures.

import { confirmDialog } from './dialog.js';
import { el, field, replaceChildren } from './dom.js';
import { fieldCheckedSubmit } from './field-errors.js';
import { formatCount, formatDate } from './format.js';
import { showError, showNotice } from './notice.js';
import { listOf, portal } from './portal-api.js';

const TYPES = ['SKILL', 'AGENT', 'PROMPT', 'TEMPLATE', 'DATASET', 'TOOL'];

function listingForm(listing, { onSaved, onCancel }) {
  const title = el('input', { type: 'text', name: 'title', maxlength: 200, required: true, value: listing?.title ?? '' });
  const description = el('textarea', { name: 'description', rows: 3, maxlength: 5000 });
  description.value = listing?.description ?? '';
  const type = el('select', { name: 'type' }, TYPES.map((value) => el('option', { value }, value)));
  type.value = listing?.type ?? 'SKILL';
  const price = el('input', { type: 'text', name: 'price', inputmode: 'decimal', required: true, value: listing ? String(listing.price) : '0' });
  const tags = el('input', { type: 'text', name: 'tags', value: (listing?.tags ?? []).join(', '), placeholder: 'regex, text' });
  const submit = el('button', { type: 'submit', class: 'primary' }, listing ? 'Save listing' : 'Create listing');
  const onsubmit = fieldCheckedSubmit(submit, { title, description, type, price, tags }, 'Could not save the listing', async () => {
    const body = {
      title: title.value.trim(),
      description: description.value.trim(),
      type: type.value,
      price: Number(price.value),
      tags: tags.value.split(',').map((tag) => tag.trim()).filter(Boolean),
    };
    if (listing) await portal.updateListing(listing.id, body);
    else await portal.createListing(body);
    showNotice(listing ? 'Listing saved.' : 'Listing created.');
    onSaved();
  });
  return el(
    'form',
    { class: 'listing-form', id: 'listing-form', novalidate: true, onsubmit },
    field('Title', title),
    field('Description', description),
    field('Type', type),
    field('Price', price, 'In the marketplace\u2019s currency, up to 2 decimals.'),
    field('Tags', tags, 'Up to 10, separated by commas.'),
    el('div', { class: 'actions' }, onCancel ? el('button', { type: 'button', class: 'secondary', onclick: onCancel }, 'Cancel') : null, submit),
  );
}

export function listingsPage() {
  const state = { listings: [], editing: null };
  const formArea = el('div');
  const list = el('div', { class: 'listing-cards', 'aria-live': 'polite' });

  async function load() {
    try {
      state.listings = listOf(await portal.listListings({ limit: 100 }));
    } catch (error) {
      showError(error, 'Could not load your listings');
    }
    draw();
  }

  function draw() {
    replaceChildren(
      formArea,
      el(
        'details',
        { class: 'panel', open: state.editing !== null || state.listings.length === 0 },
        el('summary', {}, state.editing ? `Edit "${state.editing.title}"` : 'Create a listing'),
        listingForm(state.editing, { onSaved: () => { state.editing = null; load(); }, onCancel: state.editing ? () => { state.editing = null; draw(); } : null }),
      ),
    );
    replaceChildren(list, state.listings.length === 0 ? el('p', { class: 'empty' }, 'No listings yet.') : state.listings.map(card));
  }

  function card(listing) {
    const figures = listing.performance ?? listing.stats ?? null;
    async function archive() {
      const confirmed = await confirmDialog({ title: `Archive "${listing.title}"?`, message: 'It leaves the marketplace\u2019s lists; you keep it here.', confirmLabel: 'Archive', danger: true });
      if (!confirmed) return;
      try {
        await portal.archiveListing(listing.id);
        showNotice('Listing archived.');
      } catch (error) {
        showError(error, 'Could not archive the listing');
      }
      await load();
    }
    return el(
      'article',
      { class: `listing-card panel status-${listing.status}`, dataset: { listingId: listing.id } },
      el('header', { class: 'card-head' }, el('h3', {}, listing.title), el('span', { class: `badge ${listing.status === 'active' ? 'ok' : 'danger'}` }, listing.status)),
      el('p', { class: 'muted' }, `${listing.type} · ${listing.price} · updated ${formatDate(listing.updated_at)}`),
      listing.removal_reason ? el('p', { class: 'warning' }, `Removed by the operator: ${listing.removal_reason}`) : null,
      figures ? el('p', {}, Object.entries(figures).filter(([, value]) => typeof value === 'number').map(([name, value]) => `${name.replace(/_/g, ' ')}: ${formatCount(value)}`).join(' · ')) : null,
      listing.status === 'active'
        ? el(
            'div',
            { class: 'card-actions' },
            el('button', { type: 'button', class: 'secondary small', onclick: () => { state.editing = listing; draw(); formArea.scrollIntoView({ block: 'start' }); } }, 'Edit'),
            el('button', { type: 'button', class: 'danger small', onclick: archive }, 'Archive'),
          )
        : null,
    );
  }

  load();
  return el('section', { class: 'portal-listings', 'aria-labelledby': 'listings-title' }, el('h2', { id: 'listings-title' }, 'My listings'), formArea, list);
}
