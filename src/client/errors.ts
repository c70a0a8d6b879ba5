// The two ways a call can fail: the server answered with an error (MarketplaceApiError), or no
// answer arrived at all (MarketplaceNetworkError). Aborts reject with the signal's own reason.

import type { RateLimitInfo } from './types.ts';

export interface ApiErrorInit {
  status: number;
  message: string;
  method: string;
  url: string;
  details?: Record<string, string>;
  hint?: string;
  required?: string[];
  requestId?: string;
  rateLimit?: RateLimitInfo;
  retryAfter?: number;
  /** The parsed JSON body, or the raw text when it was not JSON. */
  body?: unknown;
}

/** The server answered with a non-2xx status. */
export class MarketplaceApiError extends Error {
  readonly status: number;
  /** The server's `error` message, meant for a person. */
  readonly error: string;
  readonly details: Record<string, string> | undefined;
  readonly hint: string | undefined;
  /** On 403: the permissions any one of which would have been enough. */
  readonly required: string[] | undefined;
  /** From the body's `request_id`, else the `X-Request-Id` header: quote it in a report. */
  readonly requestId: string | undefined;
  readonly rateLimit: RateLimitInfo | undefined;
  /** The answer's Retry-After in seconds from now (429, 503), when it had one. */
  readonly retryAfter: number | undefined;
  readonly method: string;
  readonly url: string;
  readonly body: unknown;

  constructor(init: ApiErrorInit) {
    super(`${init.method} ${new URL(init.url).pathname} → ${init.status}: ${init.message}`);
    this.name = 'MarketplaceApiError';
    this.status = init.status;
    this.error = init.message;
    this.details = init.details;
    this.hint = init.hint;
    this.required = init.required;
    this.requestId = init.requestId;
    this.rateLimit = init.rateLimit;
    this.retryAfter = init.retryAfter;
    this.method = init.method;
    this.url = init.url;
    this.body = init.body;
  }
}

/** No HTTP answer: refused connection, DNS failure, reset mid-body. `cause` holds the original. */
export class MarketplaceNetworkError extends Error {
  readonly method: string;
  readonly url: string;

  constructor(method: string, url: string, cause: unknown) {
    const reason = describeCause(cause);
    super(`${method} ${url} failed before any answer: ${reason}`, { cause });
    this.name = 'MarketplaceNetworkError';
    this.method = method;
    this.url = url;
  }
}

// fetch() reports "fetch failed" and hides the useful part (ECONNREFUSED…) in its cause.
function describeCause(cause: unknown): string {
  if (!(cause instanceof Error)) return String(cause);
  const inner: unknown = cause.cause;
  if (inner instanceof Error) {
    const code = (inner as Error & { code?: unknown }).code;
    return typeof code === 'string' ? `${code} (${inner.message})` : inner.message;
  }
  return cause.message;
}

export function isAbortError(error: unknown): boolean {
  return error instanceof Error && (error.name === 'AbortError' || error.name === 'TimeoutError');
}
