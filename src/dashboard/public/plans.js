// The Plans page: the operator's plans (read-only here; the API and CLI replace them) and the
// users' plan requests, pending ones first, each approved or declined with one button.

import { api } from './api.js';
import { confirmDialog } from './dialog.js';
import { el, replaceChildren } from './dom.js';
import { formatCount, formatDate } from './format.js';
import { showError, showNotice } from './notice.js';

const STATUS_BADGES = { pending: 'warn', approved: 'ok', declined: 'danger' };

export function plansPage() {
  const plansBody = el('div', { class: 'table-scroll' }, el('p', { class: 'empty' }, 'Loading plans…'));
  const requestsBody = el('div', { class: 'table-scroll', 'aria-live': 'polite' }, el('p', { class: 'empty' }, 'Loading plan requests…'));
  let plans = [];

  async function load() {
    try {
      const [planAnswer, pending, decided] = await Promise.all([
        api.listPlans(),
        api.listPlanRequests({ status: 'pending', limit: 100 }),
        api.listPlanRequests({ limit: 20 }),
      ]);
      plans = planAnswer.data ?? [];
      drawPlans();
      const recent = (decided.data ?? []).filter((request) => request.status !== 'pending');
      drawRequests([...(pending.data ?? []), ...recent]);
    } catch (error) {
      showError(error, 'Could not load plans');
    }
  }

  function planLabel(id) {
    const plan = plans.find((candidate) => candidate.id === id);
    return plan ? `${plan.name} (${formatCount(plan.rate_limit)}/min)` : id;
  }

  function drawPlans() {
    replaceChildren(
      plansBody,
      el(
        'table',
        { class: 'plans-table' },
        el('caption', { class: 'visually-hidden' }, 'Plans'),
        el('thead', {}, el('tr', {}, ['Plan', 'Id', 'Requests per minute', 'Users get it'].map((name) => el('th', { scope: 'col' }, name)))),
        el(
          'tbody',
          {},
          plans.map((plan) =>
            el(
              'tr',
              {},
              el('td', {}, plan.name),
              el('td', {}, el('code', {}, plan.id)),
              el('td', {}, formatCount(plan.rate_limit)),
              el('td', {}, plan.self_service ? 'themselves' : 'on request'),
            ),
          ),
        ),
      ),
    );
  }

  async function decide(request, approve) {
    const verb = approve ? 'Approve' : 'Decline';
    const confirmed = await confirmDialog({
      title: `${verb} the request for ${planLabel(request.plan)}?`,
      message: approve ? `Key ${request.key_id} moves to ${planLabel(request.plan)} from its next request.` : `Key ${request.key_id} stays on its plan.`,
      confirmLabel: verb,
      danger: !approve,
    });
    if (!confirmed) return;
    try {
      await (approve ? api.approvePlanRequest(request.id) : api.declinePlanRequest(request.id));
      showNotice(`${approve ? 'Approved' : 'Declined'}: key ${request.key_id}, ${planLabel(request.plan)}.`);
    } catch (error) {
      showError(error, `Could not ${verb.toLowerCase()} the request`);
    }
    load();
  }

  function drawRequests(requests) {
    if (requests.length === 0) {
      replaceChildren(requestsBody, el('p', { class: 'empty' }, 'No plan requests. Users ask for plans that are not self-service in the developer portal.'));
      return;
    }
    replaceChildren(
      requestsBody,
      el(
        'table',
        { class: 'plan-requests-table' },
        el('caption', { class: 'visually-hidden' }, 'Plan requests'),
        el('thead', {}, el('tr', {}, ['Asked', 'User', 'Key', 'Plan', 'State', ''].map((name) => el('th', { scope: 'col' }, name)))),
        el(
          'tbody',
          {},
          requests.map((request) =>
            el(
              'tr',
              { dataset: { requestId: request.id } },
              el('td', { title: request.created_at }, formatDate(request.created_at)),
              el('td', {}, el('code', {}, request.user_id)),
              el('td', {}, el('code', {}, request.key_id)),
              el('td', {}, planLabel(request.plan)),
              el('td', {}, el('span', { class: `badge ${STATUS_BADGES[request.status] ?? ''}` }, request.status)),
              el(
                'td',
                { class: 'nowrap' },
                request.status === 'pending'
                  ? [
                      el('button', { type: 'button', class: 'primary small', 'aria-label': `Approve ${request.id}`, onclick: () => decide(request, true) }, 'Approve'),
                      ' ',
                      el('button', { type: 'button', class: 'secondary small', 'aria-label': `Decline ${request.id}`, onclick: () => decide(request, false) }, 'Decline'),
                    ]
                  : el('span', { class: 'muted small', title: request.decided_at ?? '' }, request.decided_at ? formatDate(request.decided_at) : ''),
              ),
            ),
          ),
        ),
      ),
    );
  }

  load();
  return el(
    'div',
    { class: 'plans-page' },
    el('section', { class: 'panel', 'aria-labelledby': 'plan-requests-title' }, el('h2', { id: 'plan-requests-title' }, 'Plan requests'), requestsBody),
    el(
      'section',
      { class: 'panel', 'aria-labelledby': 'plans-title' },
      el('h2', { id: 'plans-title' }, 'Plans'),
      el('p', { class: 'muted small' }, 'Change them with PUT /admin/v1/plans or the CLI (plans set --file).'),
      plansBody,
    ),
  );
}
