// Rate-limit tiers and permission presets offered when a key is made, and the check of a
// typed permission entry. Pure data and functions (no DOM), so Node tests import it directly.
// The rules themselves (resources, methods, entry shapes, rate-limit range) are the server's:
// callers pass KEY_RULES from /dashboard/key-rules.js, which the server makes from its own.

/** Tiers in requests per minute; a key's rate_limit is any integer from 1 to 1,000,000. */
export const TIERS = Object.freeze([
  Object.freeze({ id: 'free', label: 'Free', rateLimit: 100 }),
  Object.freeze({ id: 'pro', label: 'Pro', rateLimit: 1000 }),
  Object.freeze({ id: 'business', label: 'Business', rateLimit: 10000 }),
]);

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

/**
 * Null when `entry` has one of the accepted shapes, else a short reason a person can act on.
 * The server checks again (and also that the route exists); this only catches typos early.
 * @example checkPermissionEntry('read:listings', KEY_RULES) // null
 * @example checkPermissionEntry('GET /v1/listings/*', KEY_RULES) // null
 * @example checkPermissionEntry('read:cats', KEY_RULES) // 'unknown resource "cats" …'
 */
export function checkPermissionEntry(entry, rules) {
  if (typeof entry !== 'string' || entry.length === 0) return 'empty entry';
  const { resources, methods } = rules;
  const scope = new RegExp(rules.scope_entry).exec(entry);
  if (scope) {
    return resources.includes(scope[2]) ? null : `unknown resource "${scope[2]}" (known: ${resources.join(', ')})`;
  }
  const route = new RegExp(rules.route_entry).exec(entry);
  if (route) {
    return methods.includes(route[1]) ? null : `unknown method ${route[1]} (known: ${methods.join(', ')})`;
  }
  if (/^[a-z]+ /i.test(entry) && !/^[A-Z]+ /.test(entry)) return 'write the method in capitals, e.g. "GET /v1/listings"';
  if (/^[A-Z]+ (?!\/v1(\/|$))/.test(entry)) return 'the path must start with /v1, e.g. "GET /v1/listings"';
  return 'expected read:<resource>, write:<resource>, "METHOD /v1/path" or "METHOD /v1/prefix/*"';
}

/**
 * Splits the custom-entries text (one entry per line, or comma-separated) into entries, each
 * with its problem or null. Blank lines are ignored; surrounding spaces are trimmed.
 */
export function parseCustomEntries(text, rules) {
  return String(text)
    .split(/[\n,]/)
    .map((line) => line.trim().replace(/\s+/g, ' '))
    .filter((line) => line.length > 0)
    .map((entry) => ({ entry, problem: checkPermissionEntry(entry, rules) }));
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

/** Null when `value` is a valid custom rate limit under the server's `rules`, else why not. */
export function checkRateLimit(value, rules) {
  const text = String(value).trim();
  if (!/^\d+$/.test(text)) return 'a whole number of requests per minute';
  const number = Number(text);
  const { min_rate_limit: min, max_rate_limit: max } = rules;
  if (number < min || number > max) return `from ${min} to ${max.toLocaleString('en')}`;
  return null;
}
