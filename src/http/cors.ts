// Cross-origin access to /v1 for browser pages (CORS_ORIGINS). An allowed origin's answers say
// so (Access-Control-Allow-Origin, Vary: Origin) and expose the headers a client needs to read
// (request id, rate limits, Retry-After, ETag); a preflight is answered here, before the key
// check, so a browser's OPTIONS never counts as a failed authentication. A disallowed origin
// gets no CORS headers at all, and the browser keeps the page from the answer. The operator
// API and the dashboard never call this: they are same-origin only.

import type { Headers } from './respond.ts';

/** null = CORS off; '*' = any origin; otherwise the exact origins allowed. */
export type CorsOrigins = '*' | readonly string[] | null;

export const CORS_ALLOWED_HEADERS = 'Authorization, X-API-Key, Content-Type, Idempotency-Key, If-Match, If-None-Match';
export const CORS_EXPOSED_HEADERS = 'X-Request-Id, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After, ETag';
/** How long a browser may reuse a preflight's answer. */
const PREFLIGHT_MAX_AGE_SECONDS = 600;

export class CorsPolicy {
  private readonly origins: CorsOrigins;

  constructor(origins: CorsOrigins) {
    this.origins = origins;
  }

  allows(origin: string | undefined): origin is string {
    if (origin === undefined || this.origins === null) return false;
    return this.origins === '*' || this.origins.includes(origin);
  }

  /** Adds the headers every answer to an allowed origin carries; adds nothing otherwise. */
  decorate(headers: Headers, origin: string | undefined): void {
    if (!this.allows(origin)) return;
    // The origin itself rather than "*", so the answer is right for this page whatever the setting.
    headers['Access-Control-Allow-Origin'] = origin;
    headers.Vary = 'Origin';
    headers['Access-Control-Expose-Headers'] = CORS_EXPOSED_HEADERS;
  }

  /** The headers of a preflight's 204: empty for a disallowed origin or a path without methods. */
  preflightHeaders(origin: string | undefined, methods: readonly string[]): Headers {
    if (!this.allows(origin) || methods.length === 0) return {};
    return {
      'Access-Control-Allow-Origin': origin,
      Vary: 'Origin',
      'Access-Control-Allow-Methods': methods.join(', '),
      'Access-Control-Allow-Headers': CORS_ALLOWED_HEADERS,
      'Access-Control-Max-Age': PREFLIGHT_MAX_AGE_SECONDS,
    };
  }
}

/** True for a CORS preflight: OPTIONS carrying Origin and Access-Control-Request-Method. */
export function isPreflight(method: string, headers: { origin?: string; 'access-control-request-method'?: string }): boolean {
  return method === 'OPTIONS' && headers.origin !== undefined && headers['access-control-request-method'] !== undefined;
}
