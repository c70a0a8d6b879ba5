// The portal's keys page: the user's keys as cards (no table, so nothing scrolls sideways on a
// phone), a form that makes a key at the least privilege with a preview of what it may do, the
// copy-once box for a new secret with a ready first request, and per key: its plan request
// (state, the operator's note, cancel while pending), usage (opened inside its card, so on a
// phone it is right under the key, and closed back to its button), rename, permissions, plan,
// roll, revoke; above the cards, what each plan meters for the account (portal-plan-meters.js).

import { copyOnceBox } from './copy-once.js';
import { fieldCheckedSubmit } from './field-errors.js';
import { firstRequestBox } from './first-request.js';
import { confirmDialog, formDialog } from './dialog.js';
import { el, field, focusCardHeading, replaceChildren, uniqueId } from './dom.js';
import { formatCount, formatDate, formatRelative } from './format.js';
import { clearNotice, showError, showNotice } from './notice.js';
import { listOf, portal } from './portal-api.js';
import { describePermission, permissionsOf, presetsFor, presetsHeldBy } from './portal-catalog.js';
import { planMeters } from './portal-plan-meters.js';
import { quotaLabel } from './quota.js';
import { usagePanel } from './usage.js';

const GRACE_CHOICES = [
  { seconds: 0, label: 'Stop the old secret at once' },
  { seconds: 60, label: 'Keep the old secret 1 minute' },
  { seconds: 3600, label: 'Keep the old secret 1 hour' },
  { seconds: 86400, label: 'Keep the old secret 1 day' },
  { seconds: 604800, label: 'Keep the old secret 7 days' },
];

function keyLabel(key) {
  return `${key.prefix}…${key.last_four}`;
}

function displayName(key) {
  return key.name ? `"${key.name}"` : keyLabel(key);
}

function isExpired(key, now = Date.now()) {
  return Boolean(key.expires_at) && Date.parse(key.expires_at) <= now;
}

function planOf(key, plans) {
  return plans.find((plan) => plan.id === key.plan) ?? plans.find((plan) => plan.rate_limit === key.rate_limit) ?? null;
}

function planLabel(plan) {
  return `${plan.name} · ${formatCount(plan.rate_limit)} requests/min${plan.quota ? ` · ${quotaLabel(plan.quota)}` : ''}${plan.self_service ? '' : ' (on request)'}`;
}

/** Checkboxes for the presets of `role`, with a live preview of what the key may do. */
function permissionPicker(role, initial) {
  const presets = presetsFor(role);
  const boxes = presets.map((preset) => {
    const id = uniqueId(`portal-preset-${preset.id}`);
    const box = el('input', { type: 'checkbox', id, value: preset.id, checked: initial.includes(preset.id), dataset: { preset: preset.id } });
    return { box, row: el('div', { class: 'choice preset' }, box, el('label', { for: id }, el('span', { class: 'preset-label' }, preset.label), el('span', { class: 'entries' }, preset.permissions.map(describePermission).join('; ')))) };
  });
  const preview = el('div', { class: 'permission-preview', 'aria-live': 'polite' });
  const value = () => permissionsOf(boxes.filter(({ box }) => box.checked).map(({ box }) => box.value));
  function refresh() {
    const permissions = value();
    replaceChildren(
      preview,
      permissions.length === 0
        ? el('p', { class: 'field-problem' }, 'Choose at least one.')
        : [el('p', {}, 'A key with these permissions may:'), el('ul', { class: 'may-do' }, permissions.map((entry) => el('li', {}, describePermission(entry))))],
    );
  }
  for (const { box } of boxes) box.addEventListener('change', refresh);
  if (boxes[0]) boxes[0].box.dataset.fieldLabel = 'Permissions';
  refresh();
  return {
    element: el('fieldset', { class: 'presets' }, el('legend', {}, 'Permissions'), el('p', { class: 'hint' }, 'Give a key only what its program needs.'), boxes.map(({ row }) => row), preview),
    value,
    focus: () => boxes[0]?.box.focus(),
    // Where a refusal of the permissions is marked (the fieldset holds the words).
    firstBox: boxes[0]?.box,
  };
}

const REQUEST_WORDS = { pending: 'pending', approved: 'approved', declined: 'declined', cancelled: 'cancelled' };

/** The key's open or most recent plan request (`requests` are newest first), or null. */
function latestRequest(key, requests) {
  return requests.find((request) => request.key_id === key.id) ?? null;
}

function planSelect(plans, current, pendingPlanId = null) {
  const select = el('select', { name: 'plan' }, plans.map((plan) => el('option', { value: plan.id }, `${planLabel(plan)}${plan.id === pendingPlanId ? ' — requested, waiting' : ''}`)));
  if (current) select.value = current.id;
  return select;
}

/** The keys page for `user`; `plans` are the operator's plans. */
export function keysPage(user) {
  const state = { keys: [], plans: [], requests: [], apiBase: window.location.origin, revealed: null, usageKeyId: null };
  const list = el('div', { class: 'key-cards', 'aria-live': 'polite' });
  const formArea = el('div');
  // Says where programs send their requests, once the server has said its address.
  const baseHint = el('p', { class: 'hint' });
  let usage = null;
  // What each plan meters for the account, redrawn with the keys.
  const meters = planMeters({ loadUsage: portal.keyUsage });

  async function load() {
    try {
      const [keys, plans, requests, settings] = await Promise.all([portal.listKeys(), portal.listPlans(), portal.listPlanRequests(), portal.settings().catch(() => null)]);
      state.keys = listOf(keys);
      state.plans = listOf(plans);
      state.requests = listOf(requests);
      if (settings?.data?.api_base_url) state.apiBase = settings.data.api_base_url;
    } catch (error) {
      showError(error, 'Could not load your keys');
    }
    draw();
    meters.show(state.keys, state.plans);
  }

  function draw() {
    baseHint.textContent = `Send a key as "Authorization: Bearer <key>" to ${state.apiBase}/v1. Up to 20 keys at a time.`;
    replaceChildren(formArea, state.revealed ? revealBox(state.revealed) : createForm());
    drawCards();
  }

  // The cards alone, so opening or closing usage leaves a half-filled new-key form as it is.
  function drawCards() {
    const active = state.keys.filter((key) => !key.revoked_at);
    const revoked = state.keys.filter((key) => key.revoked_at);
    replaceChildren(
      list,
      state.keys.length === 0 ? el('p', { class: 'empty' }, 'You have no keys yet. Make one above.') : [...active, ...revoked].map(keyCard),
    );
  }

  function createForm() {
    const name = el('input', { type: 'text', name: 'key-name', maxlength: 100, autocomplete: 'off', placeholder: 'e.g. My shop' });
    const picker = permissionPicker(user.role, ['browse']);
    const selfService = state.plans.filter((plan) => plan.self_service);
    const plan = planSelect(selfService, selfService[0]);
    const expires = el('input', { type: 'datetime-local', name: 'expires-at' });
    const submit = el('button', { type: 'submit', class: 'primary', id: 'create-key-button' }, 'Create key');
    const onsubmit = fieldCheckedSubmit(submit, { name, plan, expires_at: expires, permissions: picker.firstBox }, 'Could not create the key', async () => {
      const permissions = picker.value();
      // Said under the permissions (where "Choose at least one." already shows), before sending.
      if (permissions.length === 0) throw { status: 400, details: { permissions: 'A key needs at least one permission.' } };
      const body = { permissions };
      if (name.value.trim()) body.name = name.value.trim();
      if (plan.value) body.plan = plan.value;
      if (expires.value) body.expires_at = new Date(expires.value).toISOString();
      const answer = await portal.createKey(body);
      state.revealed = answer.data;
      await load();
      document.getElementById('new-key-secret')?.focus();
    });
    return el(
      'details',
      { class: 'create-key panel', open: state.keys.length === 0 },
      el('summary', {}, 'Create a key'),
      el(
        'form',
        { class: 'key-form', id: 'create-key-form', novalidate: true, onsubmit },
        field('Name (optional)', name, 'To tell your keys apart.'),
        picker.element,
        field('Plan', plan, 'Other plans can be asked for once the key exists.'),
        field('Expires (optional)', expires, 'After this the key is refused. Leave empty for a key that does not expire.'),
        el('div', { class: 'actions' }, submit),
      ),
    );
  }

  function revealBox(created) {
    const graceUntil = created.previous_secret_expires_at;
    return copyOnceBox({
      id: 'new-key-secret',
      value: created.key,
      label: 'The new API key',
      noun: 'key',
      heading: `Your key ${displayName(created)}: copy it now`,
      warning: 'This is the only time the whole key is shown; the server keeps only a hash of it. If you lose it, roll the key to get a new secret.',
      extra: [
        graceUntil && Date.parse(graceUntil) > Date.now() ? el('p', { class: 'grace' }, `The old secret keeps working until ${formatDate(graceUntil)}; then only this one does.`) : null,
        firstRequestBox(state.apiBase, created.key),
      ],
      hideLabel: 'I have stored it: hide the key',
      onHide: () => {
        state.revealed = null;
        clearNotice();
        draw();
        focusCardHeading(`[data-key-id="${created.id}"]`, document.getElementById('create-key-button'));
      },
    });
  }

  function keyCard(key) {
    const revoked = Boolean(key.revoked_at);
    const expired = !revoked && isExpired(key);
    const plan = planOf(key, state.plans);
    const badge = revoked ? el('span', { class: 'badge danger' }, 'revoked') : expired ? el('span', { class: 'badge danger' }, 'expired') : el('span', { class: 'badge ok' }, 'active');
    const facts = [
      ['Plan', plan ? `${plan.name} · ${formatCount(key.rate_limit)}/min${plan.quota ? ` · ${quotaLabel(plan.quota)}` : ''}` : `${formatCount(key.rate_limit)}/min`],
      ['Created', formatDate(key.created_at)],
      ['Last used', formatRelative(key.last_used_at)],
      key.expires_at ? ['Expires', formatDate(key.expires_at)] : null,
      key.previous_secret_expires_at && Date.parse(key.previous_secret_expires_at) > Date.now() ? ['Old secret until', formatDate(key.previous_secret_expires_at)] : null,
      revoked ? ['Revoked', formatDate(key.revoked_at)] : null,
    ].filter(Boolean);
    const request = latestRequest(key, state.requests);
    const showsUsage = !revoked && usage !== null && state.usageKeyId === key.id;
    const actions = revoked
      ? []
      : [
          el('button', { type: 'button', class: 'secondary small usage-toggle', 'aria-expanded': showsUsage ? 'true' : 'false', onclick: () => (showsUsage ? closeUsage() : showUsage(key)) }, 'Usage'),
          el('button', { type: 'button', class: 'secondary small', onclick: () => rename(key) }, 'Rename'),
          el('button', { type: 'button', class: 'secondary small', onclick: () => editPermissions(key) }, 'Permissions'),
          // An expired key's plan can no longer change (the server refuses it too).
          expired ? null : el('button', { type: 'button', class: 'secondary small', onclick: () => changePlan(key, request) }, 'Plan'),
          request?.status === 'pending' ? el('button', { type: 'button', class: 'secondary small', onclick: () => cancelRequest(key, request) }, 'Cancel request') : null,
          el('button', { type: 'button', class: 'secondary small', onclick: () => roll(key) }, 'Roll'),
          el('button', { type: 'button', class: 'danger small', onclick: () => revoke(key) }, 'Revoke'),
        ];
    return el(
      'article',
      { class: `key-card panel${revoked ? ' revoked' : ''}`, dataset: { keyId: key.id } },
      el('header', { class: 'card-head' }, el('h3', {}, key.name || 'Unnamed key'), badge),
      el('code', { class: 'key-label' }, keyLabel(key)),
      el('dl', { class: 'key-facts' }, facts.map(([term, value]) => [el('dt', {}, term), el('dd', {}, value)])),
      el('p', { class: 'entries' }, key.permissions.map((entry) => el('code', { title: describePermission(entry) }, entry))),
      request ? requestLine(request) : null,
      actions.some(Boolean) ? el('div', { class: 'card-actions' }, actions.filter(Boolean)) : null,
      // The same panel element moves into the card drawn anew, so its range and numbers stay.
      showsUsage ? usage.element : null,
    );
  }

  function requestLine(request) {
    const plan = state.plans.find((candidate) => candidate.id === request.plan);
    const name = plan ? plan.name : request.plan;
    const when = request.status === 'pending' ? `asked ${formatDate(request.created_at)}` : `${formatDate(request.decided_at ?? request.created_at)}`;
    return el(
      'p',
      { class: `plan-request ${request.status}`, dataset: { state: request.status } },
      el('span', { class: 'plan-request-what' }, `Plan request: ${name} · `, el('strong', {}, REQUEST_WORDS[request.status] ?? request.status), ` · ${when}`),
      request.note ? el('span', { class: 'plan-request-note' }, `Operator's note: ${request.note}`) : null,
    );
  }

  async function cancelRequest(key, request) {
    const plan = state.plans.find((candidate) => candidate.id === request.plan);
    const confirmed = await confirmDialog({
      title: `Cancel the request for ${plan ? plan.name : request.plan}?`,
      message: `${displayName(key)} stays on its plan; you can ask again later.`,
      confirmLabel: 'Cancel the request',
    });
    if (!confirmed) return;
    try {
      await portal.cancelPlanRequest(request.id);
      showNotice('Plan request cancelled.');
    } catch (error) {
      showError(error, 'Could not cancel the request');
    }
    await load();
  }

  function usageButton(keyId) {
    return list.querySelector(`[data-key-id="${keyId}"] button.usage-toggle`);
  }

  function showUsage(key) {
    state.usageKeyId = key.id;
    if (usage) usage.reload(key);
    else usage = usagePanel(key, { loadUsage: portal.keyUsage, onClose: closeUsage });
    drawCards();
    // Focus stays on the button (the panel follows it in reading order); the panel is brought into sight.
    usageButton(key.id)?.focus();
    usage.element.scrollIntoView({ block: 'nearest' });
  }

  function closeUsage() {
    const keyId = state.usageKeyId;
    state.usageKeyId = null;
    usage?.element.remove();
    usage = null;
    drawCards();
    usageButton(keyId)?.focus();
  }

  async function rename(key) {
    const input = el('input', { type: 'text', id: 'dialog-key-name', maxlength: 100, value: key.name ?? '' });
    const name = await formDialog({
      title: `Rename ${displayName(key)}`,
      fields: [el('div', { class: 'field' }, el('label', { for: 'dialog-key-name' }, 'Name'), input)],
      confirmLabel: 'Rename',
      confirmClass: 'primary',
      read: () => input.value.trim(),
      focus: () => input.select(),
      send: (value) => portal.updateKey(key.id, { name: value }),
      controls: { name: input },
      errorPrefix: 'Could not rename the key',
    });
    if (name === null) return;
    showNotice(`Key renamed to "${name}".`);
    await load();
  }

  async function editPermissions(key) {
    const picker = permissionPicker(user.role, presetsHeldBy(key.permissions));
    const permissions = await formDialog({
      title: `Permissions of ${displayName(key)}`,
      fields: [picker.element],
      confirmLabel: 'Save permissions',
      confirmClass: 'primary',
      read: () => {
        const chosen = picker.value();
        if (chosen.length === 0) picker.focus();
        return chosen.length === 0 ? null : chosen;
      },
      focus: () => picker.focus(),
      send: (value) => portal.updateKey(key.id, { permissions: value }),
      errorPrefix: 'Could not save the permissions',
    });
    if (permissions === null) return;
    showNotice(`Permissions of ${displayName(key)} saved; they apply from the next request.`);
    await load();
  }

  async function changePlan(key, request) {
    const current = planOf(key, state.plans);
    const pending = request?.status === 'pending' ? request.plan : null;
    const select = planSelect(state.plans, current, pending);
    select.id = 'dialog-plan';
    const chosen = await formDialog({
      title: `Plan of ${displayName(key)}`,
      fields: [
        el('div', { class: 'field' }, el('label', { for: 'dialog-plan' }, 'Plan'), select),
        el('p', { class: 'hint' }, 'A self-service plan applies at once; any other is asked of the operator, who approves or declines it.'),
      ],
      confirmLabel: 'Choose plan',
      confirmClass: 'primary',
      read: () => state.plans.find((plan) => plan.id === select.value) ?? null,
      focus: () => select.focus(),
      // A refusal (the plan asked for meanwhile from elsewhere, a key that expired) is said in the dialog.
      send: async (plan) => {
        if (current && plan.id === current.id) return;
        if (plan.id === pending) throw new Error(`${plan.name} is already asked for; the operator will decide.`);
        try {
          if (plan.self_service) await portal.updateKey(key.id, { plan: plan.id });
          else await portal.requestPlan(key.id, plan.id);
        } catch (error) {
          load();
          throw error;
        }
      },
      controls: { plan: select, key_id: select },
      errorPrefix: 'Could not change the plan',
    });
    if (chosen === null || (current && chosen.id === current.id)) return;
    if (chosen.self_service) showNotice(`${displayName(key)} is now on ${chosen.name}: ${formatCount(chosen.rate_limit)} requests a minute.`);
    else showNotice(`Asked for ${chosen.name} for ${displayName(key)}; the operator will decide.`);
    await load();
  }

  async function roll(key) {
    const select = el('select', { id: 'dialog-grace' }, GRACE_CHOICES.map((choice) => el('option', { value: String(choice.seconds) }, choice.label)));
    select.value = '3600';
    let rolled = null;
    const grace = await formDialog({
      title: `Roll ${displayName(key)}`,
      fields: [
        el('p', {}, 'Rolling gives this key a new secret; its permissions, plan and usage stay. Your programs keep working with the old secret for the time you choose, so you can swap it in.'),
        el('div', { class: 'field' }, el('label', { for: 'dialog-grace' }, 'Old secret'), select),
      ],
      confirmLabel: 'Roll key',
      confirmClass: 'danger',
      read: () => Number(select.value),
      focus: () => select.focus(),
      send: async (seconds) => {
        rolled = (await portal.rollKey(key.id, seconds)).data;
      },
      controls: { grace_seconds: select },
      errorPrefix: 'Could not roll the key',
    });
    if (grace === null || rolled === null) return;
    state.revealed = rolled;
    await load();
    document.getElementById('new-key-secret')?.focus();
  }

  async function revoke(key) {
    const confirmed = await confirmDialog({
      title: `Revoke ${displayName(key)}?`,
      message: 'The key is refused from the very next request. This cannot be undone.',
      confirmLabel: 'Revoke key',
      danger: true,
    });
    if (!confirmed) return;
    try {
      await portal.revokeKey(key.id);
      showNotice(`Key ${displayName(key)} revoked.`);
    } catch (error) {
      showError(error, 'Could not revoke the key');
    }
    await load();
  }

  load();
  return el(
    'section',
    { class: 'portal-keys', 'aria-labelledby': 'keys-title' },
    el('h2', { id: 'keys-title' }, 'API keys'),
    baseHint,
    formArea,
    meters.element,
    list,
  );
}
