// Rate-limit tiers and permission presets offered when a key is made, and the check of a
// typed permission entry. Pure data and functions (no DOM), so Node tests import it directly.

/** Tiers in requests per minute; a key's rate_limit is any integer from 1 to 1,000,000. */
export const TIERS = Object.freeze([
  Object.freeze({ id: 'free', label: 'Free', rateLimit: 100 }),
  Object.freeze({ id: 'pro', label: 'Pro', rateLimit: 1000 }),
  Object.freeze({ id: 'business', label: 'Business', rateLimit: 10000 }),
]);

export const MIN_RATE_LIMIT = 1;
export const MAX_RATE_LIMIT = 1000000;

/**
 * Presets grant the least a kind of client needs; an operator ticks one or more and may add
 * custom entries. "read:" and "write:" scopes are used only where a whole resource is meant.
 */
export const PRESETS = Object.freeze([
  Object.freeze({
    id: 'browse',
    label: 'Read-only browse',
    description: 'List and read listings and public profiles. Cannot change anything.',
    permissions: Object.freeze(['read:listings', 'GET /v1/users/:id']),
  }),
  Object.freeze({
    id: 'creator',
    label: 'Creator: manage own listings',
    description: 'Create, edit and archive the owner\u2019s listings; see their profile and listing statistics.',
    permissions: Object.freeze(['read:listings', 'write:listings', 'GET /v1/users/me', 'GET /v1/analytics/listings']),
  }),
  Object.freeze({
    id: 'profile',
    label: 'Own profile',
    description: 'Read and update the owner\u2019s own profile.',
    permissions: Object.freeze(['GET /v1/users/me', 'PUT /v1/users/me']),
  }),
  Object.freeze({
    id: 'webhooks',
    label: 'Webhooks',
    description: 'List, register and remove the owner\u2019s webhook endpoints.',
    permissions: Object.freeze(['read:webhooks', 'write:webhooks']),
  }),
  Object.freeze({
    id: 'usage',
    label: 'Usage analytics',
    description: 'Read this key\u2019s own usage and rate-limit window.',
    permissions: Object.freeze(['GET /v1/analytics/usage']),
  }),
]);

export const RESOURCES = Object.freeze(['listings', 'users', 'analytics', 'webhooks']);
export const METHODS = Object.freeze(['GET', 'POST', 'PUT', 'DELETE']);

const SCOPE_ENTRY = /^(read|write):([a-z]+)$/;
// "/v1" then path segments (a segment may be a ":param"), optionally ending in "/*".
const ROUTE_ENTRY = /^([A-Z]+) (\/v1(?:\/[A-Za-z0-9_.~:-]+)*(?:\/\*)?)$/;

/**
 * Null when `entry` has one of the accepted shapes, else a short reason a person can act on.
 * The server checks again (and also that the route exists); this only catches typos early.
 * @example checkPermissionEntry('read:listings') // null
 * @example checkPermissionEntry('GET /v1/listings/*') // null
 * @example checkPermissionEntry('read:cats') // 'unknown resource "cats" …'
 */
export function checkPermissionEntry(entry) {
  if (typeof entry !== 'string' || entry.length === 0) return 'empty entry';
  const scope = SCOPE_ENTRY.exec(entry);
  if (scope) {
    return RESOURCES.includes(scope[2]) ? null : `unknown resource "${scope[2]}" (known: ${RESOURCES.join(', ')})`;
  }
  const route = ROUTE_ENTRY.exec(entry);
  if (route) {
    return METHODS.includes(route[1]) ? null : `unknown method ${route[1]} (known: ${METHODS.join(', ')})`;
  }
  if (/^[a-z]+ /i.test(entry) && !/^[A-Z]+ /.test(entry)) return 'write the method in capitals, e.g. "GET /v1/listings"';
  if (/^[A-Z]+ (?!\/v1(\/|$))/.test(entry)) return 'the path must start with /v1, e.g. "GET /v1/listings"';
  return 'expected read:<resource>, write:<resource>, "METHOD /v1/path" or "METHOD /v1/prefix/*"';
}

/**
 * Splits the custom-entries text (one entry per line, or comma-separated) into entries, each
 * with its problem or null. Blank lines are ignored; surrounding spaces are trimmed.
 */
export function parseCustomEntries(text) {
  return String(text)
    .split(/[\n,]/)
    .map((line) => line.trim().replace(/\s+/g, ' '))
    .filter((line) => line.length > 0)
    .map((entry) => ({ entry, problem: checkPermissionEntry(entry) }));
}

/** The permissions a key gets from the ticked presets plus custom entries, deduplicated, in order. */
export function combinePermissions(presetIds, customEntries) {
  const combined = [];
  for (const preset of PRESETS) {
    if (!presetIds.includes(preset.id)) continue;
    for (const entry of preset.permissions) if (!combined.includes(entry)) combined.push(entry);
  }
  for (const entry of customEntries) if (!combined.includes(entry)) combined.push(entry);
  return combined;
}

/** The tier matching a rate limit, or null for a custom limit. */
export function tierFor(rateLimit) {
  return TIERS.find((tier) => tier.rateLimit === rateLimit) ?? null;
}

/** Null when `value` is a valid custom rate limit, else why not. */
export function checkRateLimit(value) {
  const text = String(value).trim();
  if (!/^\d+$/.test(text)) return 'a whole number of requests per minute';
  const number = Number(text);
  if (number < MIN_RATE_LIMIT || number > MAX_RATE_LIMIT) return `from ${MIN_RATE_LIMIT} to ${MAX_RATE_LIMIT.toLocaleString('en')}`;
  return null;
}
