// Cross-origin access to /v1 for browser pages (CORS_ORIGINS). An allowed origin's answers say
// so (Access-Control-Allow-Origin, Vary: Origin) and expose the headers a client needs to read
// (request id, rate limits, Retry-After, ETag); a preflight is answered here, before the key
// check, so a browser's OPTIONS never counts as a failed authentication. A disallowed origin
// gets no CORS headers at all, and the browser keeps the page from the answer. The operator
// API and the dashboard never call this: they are same-origin only. Loaded only when
// CORS_ORIGINS is set (src/app.ts); without it a preflight still gets its 204, with no CORS headers.

import { addVary, type Headers } from './respond.ts';

/** null = CORS off; '*' = any origin; otherwise the exact origins allowed. */
export type CorsOrigins = '*' | readonly string[] | null;

export const CORS_ALLOWED_HEADERS = 'Authorization, X-API-Key, Content-Type, Idempotency-Key, If-Match, If-None-Match';
export const CORS_EXPOSED_HEADERS = 'X-Request-Id, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, X-Quota-Limit, X-Quota-Remaining, X-Quota-Reset, Retry-After, ETag';
/** What a preflight allows on a path no route knows: the request then meets the 404. */
const ANY_METHOD = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];
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

  /**
   * Adds the headers an answer to `origin` carries. With "*" every origin is told "*" (never its
   * own name echoed back, which "null" pages would also get); with a list, the answer depends on
   * the Origin header, so every answer says Vary: Origin, and an allowed origin is named.
   */
  decorate(headers: Headers, origin: string | undefined): void {
    if (this.origins === null) return;
    if (this.origins !== '*') headers.Vary = addVary(headers.Vary, 'Origin');
    if (!this.allows(origin)) return;
    headers['Access-Control-Allow-Origin'] = this.origins === '*' ? '*' : origin;
    headers['Access-Control-Expose-Headers'] = CORS_EXPOSED_HEADERS;
  }

  /**
   * The headers of a preflight's 204: empty for a disallowed origin. A path no route knows gets
   * every method, so the browser sends the request and the page can read the JSON 404.
   */
  preflightHeaders(origin: string | undefined, methods: readonly string[]): Headers {
    if (!this.allows(origin)) return {};
    return {
      'Access-Control-Allow-Origin': this.origins === '*' ? '*' : origin,
      'Access-Control-Allow-Methods': (methods.length > 0 ? methods : ANY_METHOD).join(', '),
      'Access-Control-Allow-Headers': CORS_ALLOWED_HEADERS,
      'Access-Control-Max-Age': PREFLIGHT_MAX_AGE_SECONDS,
    };
  }
}
