// One user's API keys: the table, the one-time display of a new key, revoking (after a
// confirmation), changing the tier, and choosing the key whose usage is shown (with the
// top-up of its plan's quota count, quota-top-up.js).

import { copyOnceBox } from './copy-once.js';
import { api, fetchAll } from './api.js';
import { confirmDialog, tierDialog } from './dialog.js';
import { el, replaceChildren } from './dom.js';
import { tierFor } from './catalog.js';
import { formatCount, formatDay, formatRateLimit, formatRelative } from './format.js';
import { keyForm } from './key-form.js';
import { clearNotice, showError, showNotice } from './notice.js';
import { quotaTopUpButton } from './quota-top-up.js';
import { usagePanel } from './usage.js';

function keyLabel(key) {
  return `${key.prefix}…${key.last_four}`;
}

const LAST_USED_REFRESH_MS = 5_000;

function displayName(key) {
  return key.name ? `"${key.name}"` : keyLabel(key);
}

/** The keys section for `user`: an element that loads and redraws itself. */
export function keysSection(user) {
  const state = { keys: [], loaded: false, revealed: null, usageKeyId: null };
  const body = el('div', { class: 'keys-body' });
  const usageArea = el('div', { class: 'usage-area' });
  let usage = null;

  async function load() {
    try {
      state.keys = await fetchAll((page, limit) => api.listKeys(user.id, page, limit));
      state.loaded = true;
    } catch (error) {
      showError(error, 'Could not load the keys');
    }
    draw();
    const shown = state.keys.find((key) => key.id === state.usageKeyId);
    if (usage && shown) usage.reload(shown);
  }

  function showUsage(key) {
    state.usageKeyId = key.id;
    // Refreshing the usage refreshes the table too, so "Used …" and the tier stay in step.
    // A key whose plan has a quota gets the top-up beside it; after one, the table and usage redraw.
    usage = usagePanel(key, { onRefresh: load, quotaActions: (quota, shown) => quotaTopUpButton(shown, quota, { onChanged: load }) });
    replaceChildren(usageArea, usage.element);
    draw();
    usage.element.scrollIntoView({ block: 'nearest' });
  }

  async function revoke(key) {
    const confirmed = await confirmDialog({
      title: 'Revoke this key?',
      message: `Revoke ${displayName(key)} (${keyLabel(key)})? Every request made with it is refused from now on. This cannot be undone.`,
      confirmLabel: 'Revoke key',
      danger: true,
    });
    if (!confirmed) return;
    try {
      await api.revokeKey(key.id);
      showNotice(`Key ${displayName(key)} revoked.`);
    } catch (error) {
      showError(error, 'Could not revoke the key');
    }
    await load();
  }

  async function changeTier(key) {
    const rateLimit = await tierDialog({ title: `Change the plan of ${displayName(key)}`, current: key.rate_limit });
    if (rateLimit === null || rateLimit === key.rate_limit) return;
    try {
      await api.updateKey(key.id, { rate_limit: rateLimit });
      showNotice(`Key ${displayName(key)} now allows ${formatRateLimit(rateLimit)}.`);
    } catch (error) {
      showError(error, 'Could not change the plan');
    }
    await load();
  }

  function revealBox(created) {
    return copyOnceBox({
      id: 'new-key-secret',
      value: created.key,
      label: 'The new API key',
      noun: 'key',
      heading: `New key ${displayName(created)} — copy it now`,
      warning: 'This is the only time the full key is shown. The server keeps only a hash of it: once this box is closed it cannot be shown again. If it is lost, revoke it and create another.',
      hideLabel: 'I have stored it — hide the key',
      onHide: () => {
        state.revealed = null;
        clearNotice();
        draw();
      },
    });
  }


  function keyRow(key) {
    const revoked = Boolean(key.revoked_at);
    const showingUsage = state.usageKeyId === key.id;
    const tier = tierFor(key.rate_limit);
    return el(
      'tr',
      { class: revoked ? 'revoked' : null, dataset: { keyId: key.id } },
      el(
        'td',
        { class: 'key-cell' },
        el('div', { class: 'key-name' }, key.name ? key.name : el('span', { class: 'muted' }, 'unnamed')),
        el('code', { class: 'key-label' }, keyLabel(key)),
      ),
      el('td', { class: 'entries' }, (key.permissions ?? []).map((entry) => el('code', {}, entry))),
      el('td', { class: 'nowrap' }, el('div', { class: 'tier-name' }, tier ? tier.label : 'Custom'), el('div', { class: 'muted small' }, `${formatCount(key.rate_limit)}/min`)),
      el(
        'td',
        { class: 'nowrap small' },
        el('div', { title: key.created_at }, 'Created ', formatDay(key.created_at)),
        el('div', { class: 'last-used', title: key.last_used_at ?? '', dataset: { keyId: key.id } }, 'Used ', formatRelative(key.last_used_at)),
      ),
      el(
        'td',
        { class: 'nowrap' },
        revoked
          ? [el('span', { class: 'badge danger' }, 'Revoked'), el('div', { class: 'muted small', title: key.revoked_at }, formatDay(key.revoked_at))]
          : el('span', { class: 'badge ok' }, 'Active'),
      ),
      el(
        'td',
        {},
        el(
          'div',
          { class: 'row-actions' },
          el('button', { type: 'button', class: 'secondary small', 'aria-pressed': showingUsage ? 'true' : 'false', 'aria-label': `Usage of ${key.name || keyLabel(key)}`, onclick: () => showUsage(key) }, 'Usage'),
          revoked ? null : el('button', { type: 'button', class: 'secondary small', 'aria-label': `Change plan of ${key.name || keyLabel(key)}`, onclick: () => changeTier(key) }, 'Plan'),
          revoked ? null : el('button', { type: 'button', class: 'danger small', 'aria-label': `Revoke ${key.name || keyLabel(key)}`, onclick: () => revoke(key) }, 'Revoke'),
        ),
      ),
    );
  }

  function draw() {
    const table = state.keys.length === 0
      ? el('p', { class: 'empty' }, state.loaded ? 'This user has no keys yet.' : 'Loading keys…')
      : el(
          'div',
          { class: 'table-scroll' },
          el(
            'table',
            { class: 'keys-table' },
            el('caption', { class: 'visually-hidden' }, `API keys of ${user.name}`),
            el('thead', {}, el('tr', {}, ['Key', 'Permissions', 'Plan', 'Activity', 'Status', 'Actions'].map((heading) => el('th', { scope: 'col' }, heading)))),
            el('tbody', {}, state.keys.map(keyRow)),
          ),
        );
    replaceChildren(
      body,
      state.revealed ? revealBox(state.revealed) : null,
      table,
      keyForm(user, {
        // A user without keys is most likely here to get one.
        open: state.loaded && state.keys.length === 0,
        onCreated: (created) => {
          state.revealed = created;
          showNotice(`Key ${displayName(created)} created. Copy it now: it is shown only once.`);
          load().then(() => document.getElementById('new-key-secret')?.focus());
        },
      }),
    );
  }

  draw();
  load();
  const section = el('section', { class: 'keys', 'aria-labelledby': 'keys-title' }, el('h3', { id: 'keys-title' }, 'API keys'), body, usageArea);

  // "Used …" follows the keys' use while the section is shown: only those cells are updated,
  // so a form being filled in is left alone.
  async function refreshLastUsed() {
    if (!section.isConnected) {
      clearInterval(timer);
      return;
    }
    if (document.hidden) return;
    try {
      const keys = await fetchAll((page, limit) => api.listKeys(user.id, page, limit));
      for (const key of keys) {
        const kept = state.keys.find((known) => known.id === key.id);
        if (kept) kept.last_used_at = key.last_used_at;
        for (const cell of section.querySelectorAll('.last-used')) {
          if (cell.dataset.keyId !== key.id) continue;
          cell.title = key.last_used_at ?? '';
          cell.textContent = `Used ${formatRelative(key.last_used_at)}`;
        }
      }
    } catch {
      // A failed refresh is tried again at the next tick; the table stays as it was.
    }
  }
  const timer = setInterval(refreshLastUsed, LAST_USED_REFRESH_MS);
  return section;
}
