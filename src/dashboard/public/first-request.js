// A first request in one paste: beside a new or rolled key's secret, a ready `curl` line and a
// `fetch` line against the server's API address (MARKETPLACE_URL, else this page's origin),
// each with its own copy button. The lines call a route the key may use (its first readable
// one), so a least-privilege key's first experience is a 200, not a 403.

import { el } from './dom.js';

/** What a `read:<resource>` scope lets a key read without knowing any id. */
const READ_PATHS = { listings: '/v1/listings', users: '/v1/users/me', analytics: '/v1/analytics/usage', webhooks: '/v1/webhooks' };
/** GET paths that need no id, for a prefix entry (`GET /v1/users/*` covers `/v1/users/me`). */
const PLAIN_GET_PATHS = ['/v1/users/me', '/v1/analytics/usage', '/v1/analytics/listings', '/v1/events'];

/**
 * The first path the key's `permissions` let it GET, in the order they are listed, or null for
 * a key that may read nothing. `GET /v1/users/:id` is called with `userId` (the key's own user).
 * @example firstReadablePath(['GET /v1/users/me', 'PUT /v1/users/me']) // '/v1/users/me'
 * @example firstReadablePath(['write:listings', 'read:webhooks']) // '/v1/webhooks'
 */
export function firstReadablePath(permissions, userId = null) {
  for (const entry of permissions ?? []) {
    const scope = /^read:([a-z]+)$/.exec(entry);
    if (scope && READ_PATHS[scope[1]]) return READ_PATHS[scope[1]];
    const route = /^GET (\/v1\/\S*)$/.exec(entry);
    if (!route) continue;
    const path = route[1];
    if (path.endsWith('/*')) {
      const covered = PLAIN_GET_PATHS.find((candidate) => candidate.startsWith(path.slice(0, -1)));
      if (covered) return covered;
    } else if (!path.includes(':')) return path;
    else if (path === '/v1/users/:id' && userId) return `/v1/users/${encodeURIComponent(userId)}`;
  }
  return null;
}

/** The two lines for `secret` calling `path` at `baseUrl` (no trailing slash). */
export function firstRequestLines(baseUrl, secret, path = '/v1/listings') {
  return {
    curl: `curl -H 'Authorization: Bearer ${secret}' ${baseUrl}${path}`,
    fetch: `await fetch('${baseUrl}${path}', { headers: { Authorization: 'Bearer ${secret}' } }).then((answer) => answer.json())`,
  };
}

function copyLine(label, text) {
  const status = el('span', { class: 'copy-status', 'aria-live': 'polite' });
  const code = el('code', {}, text);
  async function copy() {
    try {
      await navigator.clipboard.writeText(text);
      status.textContent = 'Copied.';
    } catch {
      // Clipboard access can be refused: select the line so Ctrl+C works.
      window.getSelection()?.selectAllChildren(code);
      status.textContent = 'Selected: press Ctrl+C (⌘C).';
    }
  }
  return el(
    'div',
    { class: 'snippet' },
    el('pre', { tabindex: '0', 'aria-label': label }, code),
    el('div', { class: 'snippet-actions' }, el('button', { type: 'button', class: 'secondary small', onclick: copy }, `Copy ${label}`), status),
  );
}

/** The section shown under a new secret of a key with `permissions` (of `userId`'s). */
export function firstRequestBox(baseUrl, secret, permissions, userId = null) {
  const path = firstReadablePath(permissions, userId);
  if (path === null) {
    return el('section', { class: 'first-request', 'aria-label': 'Your first request' }, el('h4', {}, 'Try it'), el('p', { class: 'hint' }, 'This key may only write, so there is no request to try that changes nothing. Send it as "Authorization: Bearer <key>" with a write it may make.'));
  }
  const lines = firstRequestLines(baseUrl, secret, path);
  return el(
    'section',
    { class: 'first-request', 'aria-label': 'Your first request' },
    el('h4', {}, 'Try it'),
    el('p', { class: 'hint' }, `Calls GET ${path}, which this key may read.`),
    copyLine('curl line', lines.curl),
    copyLine('fetch line', lines.fetch),
  );
}
