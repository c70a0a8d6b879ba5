// The operator's plan editor for a plan's quota (contract section 23): none, or at most N
// requests per UTC day or month. The plans are one list on the server (PUT /admin/v1/plans
// replaces it whole), so the editor reads the list afresh, changes this plan's quota alone and
// sends it back; the server checks the quota, and a 400 naming a field (plans[i].quota.requests,
// …period) is shown under that field of the dialog, which stays open until the server accepts.

import { api } from './api.js';
import { formDialog } from './dialog.js';
import { el, uniqueId } from './dom.js';
import { quotaLabel } from './quota.js';

/** Opens the editor for `plan`; resolves the quota saved (null for none), or undefined if cancelled. */
export async function editPlanQuota(plan) {
  const none = el('input', { type: 'radio', name: 'quota-kind', id: uniqueId('quota-none'), value: 'none', checked: !plan.quota });
  const limited = el('input', { type: 'radio', name: 'quota-kind', id: uniqueId('quota-some'), value: 'some', checked: Boolean(plan.quota) });
  const requests = el('input', { type: 'number', id: 'dialog-quota-requests', name: 'requests', inputmode: 'numeric', min: 1, step: 1, value: plan.quota ? plan.quota.requests : '' });
  const period = el('select', { id: 'dialog-quota-period', name: 'period' }, el('option', { value: 'day' }, 'per day (UTC)'), el('option', { value: 'month' }, 'per month (UTC)'));
  period.value = plan.quota?.period ?? 'day';
  // Typing a number or choosing a period means "a quota", so the fields are never disabled.
  for (const control of [requests, period]) control.addEventListener('input', () => (limited.checked = true));

  // Filled once the index of the plan in the list sent is known: the server names fields by it.
  const controls = {};
  let saved;
  const chosen = await formDialog({
    title: `Quota of ${plan.name}`,
    fields: [
      el('p', {}, `Now: ${quotaLabel(plan.quota)}. A quota is shared by all of a user's keys on the plan; past it their requests get 429 until the day or month ends (UTC). Counts so far are kept when the quota changes.`),
      el(
        'fieldset',
        { class: 'quota-editor' },
        el('legend', {}, 'Quota'),
        el('div', { class: 'choice' }, none, el('label', { for: none.id }, 'No quota')),
        el('div', { class: 'choice' }, limited, el('label', { for: limited.id }, 'A quota of requests')),
        el('div', { class: 'field' }, el('label', { for: requests.id }, 'Requests'), requests),
        el('div', { class: 'field' }, el('label', { for: period.id }, 'Period'), period),
      ),
    ],
    confirmLabel: 'Save quota',
    confirmClass: 'primary',
    // An empty or out-of-range number goes to the server, whose 400 says what it must be.
    read: () => (none.checked ? { quota: null } : { quota: { requests: requests.value === '' ? null : Number(requests.value), period: period.value } }),
    focus: () => (plan.quota ? requests : none).focus(),
    send: async ({ quota }) => {
      // Nothing changed: nothing to replace (or audit).
      if (JSON.stringify(quota) === JSON.stringify(plan.quota ?? null)) {
        saved = quota;
        return;
      }
      const plans = (await api.listPlans()).data ?? [];
      const index = plans.findIndex((candidate) => candidate.id === plan.id);
      if (index === -1) throw new Error(`The plan ${plan.name} is no longer in the list; reload the page.`);
      controls[`plans[${index}].quota`] = requests;
      controls[`plans[${index}].quota.requests`] = requests;
      controls[`plans[${index}].quota.period`] = period;
      const answer = await api.replacePlans(plans.map((candidate) => (candidate.id === plan.id ? { ...candidate, quota } : candidate)));
      saved = (answer.data ?? []).find((candidate) => candidate.id === plan.id)?.quota ?? null;
    },
    controls,
    errorPrefix: 'Could not save the quota',
  });
  return chosen === null ? undefined : saved;
}
