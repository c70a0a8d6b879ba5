// The Plans page: the operator's plans (each plan's quota edited here, with plan-editor.js; the
// other fields through the API and CLI) and the users' plan requests, pending ones first, each
// approved or declined with one button. A request names its user (name, email) and key (name,
// current plan), never a bare id; each load tells
// the page's tab how many requests wait (the `pending-plan-requests` event, see app.js).

import { api } from './api.js';
import { confirmDialog } from './dialog.js';
import { el, replaceChildren } from './dom.js';
import { formatCount, formatDate } from './format.js';
import { showError, showNotice } from './notice.js';
import { editPlanQuota } from './plan-editor.js';
import { quotaLabel } from './quota.js';

const STATUS_BADGES = { pending: 'warn', approved: 'ok', declined: 'danger' };

/** Tells the tab (app.js) how many plan requests wait for a decision. */
export function announcePending(count) {
  document.dispatchEvent(new CustomEvent('pending-plan-requests', { detail: count }));
}

/** The users and keys the requests name: user id → { user, keys }; an erased user has user null. */
async function ownersOf(requests) {
  const owners = new Map();
  const userIds = [...new Set(requests.map((request) => request.user_id))];
  await Promise.all(
    userIds.map(async (userId) => {
      const [user, keys] = await Promise.all([api.getUser(userId).then((answer) => answer.data).catch(() => null), api.listKeys(userId, 1, 100).then((answer) => answer.data ?? []).catch(() => [])]);
      owners.set(userId, { user, keys });
    }),
  );
  return owners;
}

export function plansPage() {
  const plansBody = el('div', { class: 'table-scroll' }, el('p', { class: 'empty' }, 'Loading plans…'));
  const requestsBody = el('div', { class: 'table-scroll', 'aria-live': 'polite' }, el('p', { class: 'empty' }, 'Loading plan requests…'));
  let plans = [];
  let owners = new Map();

  async function load() {
    try {
      const [planAnswer, pending, decided] = await Promise.all([
        api.listPlans(),
        api.listPlanRequests({ status: 'pending', limit: 100 }),
        api.listPlanRequests({ limit: 20 }),
      ]);
      plans = planAnswer.data ?? [];
      drawPlans();
      announcePending(pending.pagination?.total ?? (pending.data ?? []).length);
      const recent = (decided.data ?? []).filter((request) => request.status !== 'pending');
      const requests = [...(pending.data ?? []), ...recent];
      owners = await ownersOf(requests);
      drawRequests(requests);
    } catch (error) {
      showError(error, 'Could not load plans');
    }
  }

  function planLabel(id) {
    const plan = plans.find((candidate) => candidate.id === id);
    return plan ? `${plan.name} (${formatCount(plan.rate_limit)}/min)` : id;
  }

  function userOf(request) {
    return owners.get(request.user_id)?.user ?? null;
  }

  function keyOf(request) {
    return owners.get(request.user_id)?.keys.find((key) => key.id === request.key_id) ?? null;
  }

  /** The key as a person knows it: its name, else its visible prefix and last four. */
  function keyName(request) {
    const key = keyOf(request);
    if (!key) return 'a key no longer listed';
    return key.name ? `"${key.name}"` : `${key.prefix}…${key.last_four}`;
  }

  function currentPlan(key) {
    if (!key) return '';
    return key.plan ? planLabel(key.plan) : `Custom (${formatCount(key.rate_limit)}/min)`;
  }

  function userCell(request) {
    const user = userOf(request);
    if (!user) return el('td', {}, el('span', { class: 'muted' }, 'Erased user'));
    return el('td', {}, el('div', {}, user.name), el('div', { class: 'muted small' }, user.email));
  }

  function keyCell(request) {
    const key = keyOf(request);
    return el('td', {}, el('div', {}, keyName(request)), key ? el('div', { class: 'muted small' }, `now on ${currentPlan(key)}`) : null);
  }

  function drawPlans() {
    replaceChildren(
      plansBody,
      el(
        'table',
        { class: 'plans-table' },
        el('caption', { class: 'visually-hidden' }, 'Plans'),
        el('thead', {}, el('tr', {}, ['Plan', 'Id', 'Requests per minute', 'Quota', 'Users get it', ''].map((name) => el('th', { scope: 'col' }, name)))),
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
              el('td', { class: 'plan-quota' }, quotaLabel(plan.quota)),
              el('td', {}, plan.self_service ? 'themselves' : 'on request'),
              el('td', {}, el('button', { type: 'button', class: 'secondary small', 'aria-label': `Edit the quota of ${plan.name}`, onclick: () => changeQuota(plan) }, 'Edit quota')),
            ),
          ),
        ),
      ),
    );
  }

  async function changeQuota(plan) {
    const quota = await editPlanQuota(plan);
    if (quota === undefined) return;
    showNotice(`${plan.name}: ${quotaLabel(quota)}, from the next request.`);
    load();
  }

  async function decide(request, approve) {
    const verb = approve ? 'Approve' : 'Decline';
    const confirmed = await confirmDialog({
      title: `${verb} the request for ${planLabel(request.plan)}?`,
      message: approve ? `Key ${keyName(request)} moves to ${planLabel(request.plan)} from its next request.` : `Key ${keyName(request)} stays on its plan.`,
      confirmLabel: verb,
      danger: !approve,
    });
    if (!confirmed) return;
    try {
      await (approve ? api.approvePlanRequest(request.id) : api.declinePlanRequest(request.id));
      showNotice(`${approve ? 'Approved' : 'Declined'}: key ${keyName(request)}, ${planLabel(request.plan)}.`);
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
        el('thead', {}, el('tr', {}, ['Asked', 'User', 'Key', 'Plan asked for', 'State', ''].map((name) => el('th', { scope: 'col' }, name)))),
        el(
          'tbody',
          {},
          requests.map((request) =>
            el(
              'tr',
              { dataset: { requestId: request.id } },
              el('td', { title: request.created_at }, formatDate(request.created_at)),
              userCell(request),
              keyCell(request),
              el('td', {}, planLabel(request.plan)),
              el('td', {}, el('span', { class: `badge ${STATUS_BADGES[request.status] ?? ''}` }, request.status)),
              el(
                'td',
                { class: 'nowrap' },
                request.status === 'pending'
                  ? [
                      el('button', { type: 'button', class: 'primary small', 'aria-label': `Approve ${keyName(request)} for ${planLabel(request.plan)}`, onclick: () => decide(request, true) }, 'Approve'),
                      ' ',
                      el('button', { type: 'button', class: 'secondary small', 'aria-label': `Decline ${keyName(request)} for ${planLabel(request.plan)}`, onclick: () => decide(request, false) }, 'Decline'),
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
      el('p', { class: 'muted small' }, 'Edit a quota here; other fields with PUT /admin/v1/plans or the CLI (plans set --file).'),
      plansBody,
    ),
  );
}
