// The "create a key" form: name, permission presets plus custom entries (checked as typed),
// tier and prefix. It starts at the least privilege (read-only browse, Free tier).

import { api } from './api.js';
import { combinePermissions, parseCustomEntries, PRESETS } from './catalog.js';
import { KEY_RULES } from './key-rules.js';
import { el, field, replaceChildren, uniqueId } from './dom.js';
import { showError } from './notice.js';
import { tierPicker } from './tier-picker.js';

const DEFAULT_PRESETS = ['browse'];

/**
 * A <details> holding the form (open when `open`); `onCreated(key)` gets the API's answer,
 * secret included.
 */
export function keyForm(user, { onCreated, open = false }) {
  const nameInput = el('input', { type: 'text', name: 'key-name', maxlength: 100, autocomplete: 'off', placeholder: 'e.g. Storefront integration' });

  const presetBoxes = PRESETS.map((preset) => {
    const id = uniqueId(`preset-${preset.id}`);
    const box = el('input', { type: 'checkbox', id, value: preset.id, checked: DEFAULT_PRESETS.includes(preset.id), dataset: { preset: preset.id } });
    const row = el(
      'div',
      { class: 'choice preset' },
      box,
      el(
        'label',
        { for: id },
        el('span', { class: 'preset-label' }, preset.label),
        el('span', { class: 'preset-description' }, preset.description),
        el('span', { class: 'entries' }, preset.permissions.map((entry) => el('code', {}, entry))),
      ),
    );
    return { box, row };
  });

  const customId = uniqueId('custom-entries');
  const customInput = el('textarea', {
    id: customId,
    rows: 3,
    spellcheck: 'false',
    autocomplete: 'off',
    placeholder: 'GET /v1/listings/:id\nread:analytics',
    'aria-describedby': `${customId}-hint ${customId}-check`,
  });
  const customCheck = el('ul', { class: 'entry-check', id: `${customId}-check`, 'aria-live': 'polite' });
  const preview = el('div', { class: 'permission-preview', 'aria-live': 'polite' });

  const tier = tierPicker({ name: uniqueId('tier') });
  const prefixSelect = el('select', { name: 'prefix' }, el('option', { value: 'live' }, 'live (brand_live_…)'), el('option', { value: 'mk' }, 'mk (mk_…)'));
  const submit = el('button', { type: 'submit', class: 'primary' }, 'Create key');

  function currentPermissions() {
    const parsed = parseCustomEntries(customInput.value, KEY_RULES);
    const presetIds = presetBoxes.filter(({ box }) => box.checked).map(({ box }) => box.value);
    const valid = parsed.filter((item) => !item.problem).map((item) => item.entry);
    return { parsed, invalid: parsed.length - valid.length, permissions: combinePermissions(presetIds, valid) };
  }

  function refresh() {
    const { parsed, invalid, permissions } = currentPermissions();
    replaceChildren(
      customCheck,
      parsed.map(({ entry, problem }) =>
        el('li', { class: problem ? 'bad' : 'good' }, el('code', {}, entry), problem ? ` — ${problem}` : ' — looks right'),
      ),
    );
    customInput.setAttribute('aria-invalid', parsed.some((item) => item.problem) ? 'true' : 'false');
    replaceChildren(
      preview,
      permissions.length === 0
        ? el('p', { class: 'field-problem' }, 'Choose at least one preset or enter a custom entry.')
        : [
            el('p', {}, `This key will be allowed ${permissions.length} ${permissions.length === 1 ? 'entry' : 'entries'}:`),
            el('p', { class: 'entries' }, permissions.map((entry) => el('code', {}, entry))),
            invalid > 0 ? el('p', { class: 'field-problem' }, `${invalid} custom ${invalid === 1 ? 'entry is' : 'entries are'} not valid yet; fix ${invalid === 1 ? 'it' : 'them'} to create the key.`) : null,
          ],
    );
  }
  for (const { box } of presetBoxes) box.addEventListener('change', refresh);
  customInput.addEventListener('input', refresh);
  refresh();

  async function submitForm(event) {
    event.preventDefault();
    const { parsed, permissions } = currentPermissions();
    if (parsed.some((item) => item.problem)) {
      customInput.focus();
      showError(new Error('Fix the custom permission entries marked in red first.'));
      return;
    }
    if (permissions.length === 0) {
      presetBoxes[0].box.focus();
      showError(new Error('A key needs at least one permission.'));
      return;
    }
    const rateLimit = tier.value();
    if (rateLimit === null) {
      tier.focusProblem();
      showError(new Error('The custom rate limit must be a whole number from 1 to 1,000,000.'));
      return;
    }
    const body = { user_id: user.id, permissions, rate_limit: rateLimit, prefix: prefixSelect.value };
    const name = nameInput.value.trim();
    if (name) body.name = name;
    submit.disabled = true;
    try {
      const answer = await api.createKey(body);
      // The caller redraws the keys section, this form included, so nothing is left filled in.
      onCreated(answer.data);
    } catch (error) {
      showError(error, 'Could not create the key');
    } finally {
      submit.disabled = false;
    }
  }

  const form = el(
    'form',
    { class: 'key-form', novalidate: true, onsubmit: submitForm },
    field('Key name (optional)', nameInput, 'Shown to operators only, to tell keys apart.'),
    el(
      'fieldset',
      { class: 'presets' },
      el('legend', {}, 'Permissions'),
      el('p', { class: 'hint' }, 'Grant only what the client needs. Presets can be combined.'),
      presetBoxes.map(({ row }) => row),
      el(
        'div',
        { class: 'field' },
        el('label', { for: customId }, 'Custom entries'),
        customInput,
        el('p', { class: 'hint', id: `${customId}-hint` }, 'One per line: read:<resource> or write:<resource> (listings, users, analytics, webhooks), "GET /v1/listings/:id", or "GET /v1/listings/*".'),
        customCheck,
      ),
      preview,
    ),
    tier.element,
    field('Key prefix', prefixSelect),
    el('div', { class: 'actions' }, submit),
  );

  const details = el('details', { class: 'create-key', open }, el('summary', {}, 'Create a key'), form);
  return details;
}
