// The rate-limit tier control: one radio per tier plus "Custom" with a number, checked as typed.
// Used by the new-key form (the catalog's tiers) and the key's plan dialog (the server's plans,
// read when the dialog opens, so a plan the operator just added or changed is offered).

import { checkRateLimit, TIERS } from './catalog.js';
import { KEY_RULES } from './key-rules.js';
import { el, uniqueId } from './dom.js';
import { formatCount } from './format.js';

/**
 * `tiers` are `{id, label, rateLimit}`; the one checked first is `initialId`'s when given (null
 * meaning a custom limit), else the one whose limit is `initial`.
 * → { element, value() → rate limit or null when the custom value is invalid, choice() → {plan}
 * or {rate_limit} or null, focusFirst(), focusProblem() }
 */
export function tierPicker({ name, initial = TIERS[0].rateLimit, markCurrent = false, tiers = TIERS, initialId = undefined }) {
  const initialTier = initialId === undefined ? tiers.find((tier) => tier.rateLimit === initial) ?? null : tiers.find((tier) => tier.id === initialId) ?? null;
  const radios = [];
  const options = tiers.map((tier) => {
    const id = uniqueId(name);
    const radio = el('input', { type: 'radio', name, id, value: tier.id, checked: initialTier?.id === tier.id });
    radios.push(radio);
    return el('div', { class: 'choice' }, radio, el('label', { for: id }, `${tier.label} — ${formatCount(tier.rateLimit)} requests/min`, markCurrent && initialTier?.id === tier.id ? el('span', { class: 'current' }, ' (current)') : null));
  });

  const customId = uniqueId(name);
  const customRadio = el('input', { type: 'radio', name, id: customId, value: 'custom', checked: initialTier === null });
  radios.push(customRadio);
  const numberId = uniqueId(`${name}-number`);
  const problem = el('p', { class: 'field-problem', id: `${numberId}-problem`, 'aria-live': 'polite' });
  const number = el('input', {
    type: 'number',
    id: numberId,
    inputmode: 'numeric',
    min: KEY_RULES.min_rate_limit,
    max: KEY_RULES.max_rate_limit,
    step: 1,
    value: initialTier === null ? initial : '',
    'aria-label': 'Custom limit, requests per minute',
    'aria-describedby': problem.id,
  });

  function customProblem() {
    return customRadio.checked ? checkRateLimit(number.value, KEY_RULES) : null;
  }
  function refresh() {
    const text = customRadio.checked && number.value !== '' ? customProblem() : null;
    problem.textContent = text ? `Custom limit: ${text}.` : '';
    number.setAttribute('aria-invalid', text ? 'true' : 'false');
  }
  for (const radio of radios) radio.addEventListener('change', () => {
    refresh();
    if (customRadio.checked) number.focus();
  });
  // Typing a number means "custom", so the field is never disabled and picks its radio itself.
  number.addEventListener('input', () => {
    customRadio.checked = true;
    refresh();
  });
  refresh();

  const element = el(
    'fieldset',
    { class: 'tier-picker' },
    el('legend', {}, 'Plan (rate limit)'),
    options,
    el('div', { class: 'choice custom' }, customRadio, el('label', { for: customId }, 'Custom', markCurrent && initialTier === null ? el('span', { class: 'current' }, ` (current: ${formatCount(initial)})`) : null), number, el('span', { class: 'unit' }, 'requests/min')),
    problem,
  );

  return {
    element,
    value() {
      if (customRadio.checked) {
        const text = customProblem();
        problem.textContent = text ? `Custom limit: ${text}.` : '';
        return text ? null : Number(number.value);
      }
      const checked = radios.find((radio) => radio.checked);
      return tiers.find((tier) => tier.id === checked?.value)?.rateLimit ?? null;
    },
    choice() {
      if (customRadio.checked) {
        const limit = this.value();
        return limit === null ? null : { rate_limit: limit };
      }
      const checked = radios.find((radio) => radio.checked);
      return checked ? { plan: checked.value } : null;
    },
    focusFirst() {
      (radios.find((radio) => radio.checked) ?? radios[0]).focus();
    },
    focusProblem() {
      if (customRadio.checked) number.focus();
      else radios[0].focus();
    },
  };
}
