// What an API key may hold: the shapes of permission entries and the range of its rate limit.
// The server checks keys against these (permissions.ts, handlers/admin/core.ts), and the dashboard
// receives the same rules as /dashboard/key-rules.js (handlers/public/dashboard.ts) for its
// as-you-type checks, so the two cannot drift apart.

/** What a /v1 route may declare as its resource, and a scope entry may name. */
export const RESOURCES = ['listings', 'users', 'analytics', 'webhooks'] as const;
export type Resource = (typeof RESOURCES)[number];

/** Methods a route entry may name. */
export const PERMISSION_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
/** "read:listings", "write:webhooks": a whole resource (write = every method but GET). */
export const SCOPE_ENTRY = /^(read|write):([a-z]+)$/;
/** "GET /v1/listings", "PUT /v1/listings/:id", "GET /v1/listings/*": a route, a path or a prefix. */
export const ROUTE_ENTRY = /^([A-Z]+) (\/v1(?:\/[A-Za-z0-9_.~:-]+)*(?:\/\*)?)$/;

/** Requests per minute a key may be given; a key made without one gets the default. */
export const MIN_RATE_LIMIT = 1;
export const MAX_RATE_LIMIT = 1_000_000;
export const DEFAULT_RATE_LIMIT = 100;

/** The rules as plain data, for the dashboard (regular expressions as their source text). */
export interface KeyRules {
  resources: readonly string[];
  methods: readonly string[];
  scope_entry: string;
  route_entry: string;
  min_rate_limit: number;
  max_rate_limit: number;
}

export function keyRules(): KeyRules {
  return {
    resources: RESOURCES,
    methods: PERMISSION_METHODS,
    scope_entry: SCOPE_ENTRY.source,
    route_entry: ROUTE_ENTRY.source,
    min_rate_limit: MIN_RATE_LIMIT,
    max_rate_limit: MAX_RATE_LIMIT,
  };
}
