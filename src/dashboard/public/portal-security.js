// The portal's Security page: where the account is signed in (each session's browser, address,
// when it signed in and was last used, this device marked and first), with *Sign out* per other device and
// *Sign out every other session*, then the account's activity (portal-activity.js) — so someone
// who sees a sign-in they do not recognise can end it from the same screen.

import { confirmDialog } from './dialog.js';
import { el, replaceChildren } from './dom.js';
import { formatDate, formatRelative } from './format.js';
import { showError, showNotice } from './notice.js';
import { activityPage } from './portal-activity.js';
import { listOf, portal } from './portal-api.js';

/** "Firefox on Windows" from a user agent, or null when it names nothing known (the full text is kept as a tooltip). */
export function describeBrowser(userAgent) {
  if (!userAgent) return null;
  const browsers = [[/Edg\//, 'Edge'], [/OPR\//, 'Opera'], [/Firefox\//, 'Firefox'], [/Chrom(e|ium)\//, 'Chrome'], [/Safari\//, 'Safari'], [/^curl\//, 'curl']];
  const systems = [[/Android/, 'Android'], [/iPhone|iPad/, 'iOS'], [/Windows/, 'Windows'], [/Mac OS X|Macintosh/, 'macOS'], [/CrOS/, 'ChromeOS'], [/Linux/, 'Linux']];
  const browser = browsers.find(([pattern]) => pattern.test(userAgent))?.[1] ?? null;
  const system = systems.find(([pattern]) => pattern.test(userAgent))?.[1] ?? null;
  if (browser && system) return `${browser} on ${system}`;
  return browser ?? system;
}

export function securityPage() {
  const list = el('ul', { class: 'session-cards', 'aria-live': 'polite' }, el('li', { class: 'empty' }, 'Loading your sessions…'));
  const endOthersButton = el('button', { type: 'button', class: 'danger', id: 'end-other-sessions', hidden: true, onclick: endOthers }, 'Sign out every other session');
  const activityArea = el('div', {}, activityPage());

  async function load() {
    try {
      const sessions = listOf(await portal.listSessions());
      const others = sessions.filter((session) => !session.current);
      endOthersButton.hidden = others.length === 0;
      // This device first, then the others newest first (as the server lists them).
      replaceChildren(list, [...sessions.filter((session) => session.current), ...others].map(sessionCard));
    } catch (error) {
      showError(error, 'Could not load your sessions');
    }
  }

  /** The sessions and the activity read again, after a session was ended. */
  function reload() {
    replaceChildren(activityArea, activityPage());
    return load();
  }

  function sessionCard(session) {
    const browser = describeBrowser(session.user_agent) ?? 'Unknown browser';
    return el(
      'li',
      { class: `session-card panel${session.current ? ' this-device' : ''}`, dataset: { sessionId: session.id } },
      el(
        'div',
        { class: 'card-head' },
        el('h3', { title: session.user_agent ?? '' }, browser),
        session.current ? el('span', { class: 'badge ok' }, 'This device') : null,
      ),
      el(
        'dl',
        { class: 'key-facts' },
        el('dt', {}, 'Address'),
        el('dd', {}, session.client_address ?? 'unknown'),
        el('dt', {}, 'Signed in'),
        el('dd', {}, formatDate(session.created_at)),
        el('dt', {}, 'Last used'),
        el('dd', { title: session.last_seen_at ?? '' }, session.current ? 'now' : formatRelative(session.last_seen_at)),
        session.user_agent ? [el('dt', {}, 'Browser'), el('dd', { class: 'user-agent' }, session.user_agent)] : null,
      ),
      session.current
        ? el('p', { class: 'hint' }, 'To sign this device out, use Sign out at the top.')
        : el('div', { class: 'card-actions' }, el('button', { type: 'button', class: 'secondary small', 'aria-label': `Sign out ${browser} at ${session.client_address ?? 'an unknown address'}`, onclick: () => endOne(session, browser) }, 'Sign out')),
    );
  }

  async function endOne(session, browser) {
    const confirmed = await confirmDialog({
      title: `Sign out ${browser}?`,
      message: `The session from ${session.client_address ?? 'an unknown address'}, signed in ${formatDate(session.created_at)}, ends at once: its next request is refused and it must sign in again.`,
      confirmLabel: 'Sign it out',
      danger: true,
    });
    if (!confirmed) return;
    try {
      await portal.endSession(session.id);
      showNotice(`${browser} at ${session.client_address ?? 'an unknown address'} is signed out.`);
    } catch (error) {
      showError(error, 'Could not sign that session out');
    }
    await reload();
  }

  async function endOthers() {
    const confirmed = await confirmDialog({
      title: 'Sign out every other session?',
      message: 'Every browser and device signed in to your account, except this one, is signed out at once. If you do not recognise one of them, change your password too.',
      confirmLabel: 'Sign out the others',
      danger: true,
    });
    if (!confirmed) return;
    try {
      const ended = (await portal.endOtherSessions()).data.ended;
      showNotice(ended === 1 ? 'One other session is signed out.' : `${ended} other sessions are signed out.`);
    } catch (error) {
      showError(error, 'Could not sign the other sessions out');
    }
    await reload();
    document.getElementById('sessions-title')?.focus();
  }

  load();
  return el(
    'div',
    { class: 'portal-security' },
    el(
      'section',
      { class: 'sessions', 'aria-labelledby': 'sessions-title' },
      el('h2', { id: 'sessions-title', tabindex: '-1' }, 'Where you are signed in'),
      el('p', { class: 'hint' }, 'Each browser or device signed in to your account, newest first. Sign out any you do not recognise, then change your password.'),
      list,
      el('div', { class: 'actions' }, endOthersButton),
    ),
    activityArea,
  );
}
