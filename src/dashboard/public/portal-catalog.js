// What the portal offers when a user makes a key: presets for the user's role, and a sentence
// for every permission entry, so the user sees what a key may do before making it. Pure data
// and functions (no DOM), so Node tests import it directly.

/** Presets a user can tick; `roles` lists who may use each (a member never writes listings). */
export const PORTAL_PRESETS = Object.freeze([
  Object.freeze({ id: 'browse', label: 'Browse listings', roles: ['member', 'creator'], permissions: Object.freeze(['read:listings']) }),
  Object.freeze({ id: 'manage', label: 'Manage my listings', roles: ['creator'], permissions: Object.freeze(['read:listings', 'write:listings', 'GET /v1/analytics/listings']) }),
  Object.freeze({ id: 'profile', label: 'My profile', roles: ['member', 'creator'], permissions: Object.freeze(['GET /v1/users/me', 'PUT /v1/users/me']) }),
  Object.freeze({ id: 'webhooks', label: 'My webhooks', roles: ['member', 'creator'], permissions: Object.freeze(['read:webhooks', 'write:webhooks']) }),
  Object.freeze({ id: 'usage', label: 'My usage', roles: ['member', 'creator'], permissions: Object.freeze(['GET /v1/analytics/usage']) }),
]);

const SCOPES = Object.freeze({
  'read:listings': 'list, search and read listings',
  'write:listings': 'create, edit and archive your listings',
  'read:users': 'read public profiles and your own profile',
  'write:users': 'update your profile',
  'read:analytics': 'read your usage and your listings\u2019 statistics',
  'write:analytics': 'nothing more (analytics cannot be written)',
  'read:webhooks': 'list your webhooks',
  'write:webhooks': 'register and remove your webhooks',
});

// The routes the presets hold, in words; a person reads what a key may do, not an HTTP route.
const ROUTES = Object.freeze({
  'GET /v1/users/me': 'read your profile',
  'PUT /v1/users/me': 'change your profile',
  'GET /v1/analytics/listings': 'read your listings\u2019 statistics',
  'GET /v1/analytics/usage': 'read your usage',
});

// Any other route (a key the operator made by hand may hold one) still reads as a sentence.
const METHOD_WORDS = Object.freeze({ GET: 'read', HEAD: 'read', POST: 'create', PUT: 'change', PATCH: 'change', DELETE: 'delete' });

/** "users me" for "/v1/users/me"; ":id" reads as "one by its id", "*" as "everything under it". */
function pathWords(path) {
  const words = [];
  for (const segment of path.replace(/^\/v1\/?/, '').split('/')) {
    if (segment === '') continue;
    if (segment === '*') words.push('(everything under it)');
    else if (segment.startsWith(':')) words.push('(one by its id)');
    else words.push(segment.replace(/[-_]/g, ' '));
  }
  return words.join(' ') || 'the API';
}

/** The presets a user of `role` may pick. */
export function presetsFor(role) {
  return PORTAL_PRESETS.filter((preset) => preset.roles.includes(role));
}

/** Ticked presets → permission entries, deduplicated, in order. */
export function permissionsOf(presetIds) {
  const entries = [];
  for (const preset of PORTAL_PRESETS) {
    if (!presetIds.includes(preset.id)) continue;
    for (const entry of preset.permissions) if (!entries.includes(entry)) entries.push(entry);
  }
  return entries;
}

/** One sentence for a permission entry: what a key holding it may do. */
export function describePermission(entry) {
  if (SCOPES[entry]) return SCOPES[entry];
  if (ROUTES[entry]) return ROUTES[entry];
  const route = /^([A-Z]+) (\/v1\/\S*)$/.exec(entry);
  if (route) return `${METHOD_WORDS[route[1]] ?? route[1].toLowerCase()} ${pathWords(route[2])}`;
  return entry;
}

/** The presets whose entries a key's permissions hold entirely (to tick them when editing). */
export function presetsHeldBy(permissions) {
  return PORTAL_PRESETS.filter((preset) => preset.permissions.every((entry) => permissions.includes(entry))).map((preset) => preset.id);
}
