// The one error type a handler throws to answer with a 4xx/5xx. The server turns it into JSON
// (see respond.ts); any other thrown value becomes a generic 500 with nothing internal shown.

export interface ErrorExtras {
  /** Per-field problems, e.g. { price: "must be a number >= 0" }. */
  details?: Record<string, string>;
  hint?: string;
  required?: string[];
  /** Extra response headers, e.g. Allow or Retry-After. */
  headers?: Record<string, string>;
}

export class HttpError extends Error {
  readonly status: number;
  readonly extras: ErrorExtras;

  constructor(status: number, message: string, extras: ErrorExtras = {}) {
    // An HttpError is an answer, not a fault: its stack is never logged or shown, and capturing
    // one costs more than the rest of a 429 answer (profiled), so none is captured.
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      super(message);
    } finally {
      Error.stackTraceLimit = stackTraceLimit;
    }
    this.name = 'HttpError';
    this.status = status;
    this.extras = extras;
  }
}

export const badRequest = (message: string, details?: Record<string, string>) =>
  new HttpError(400, message, details ? { details } : {});

export const forbidden = (message: string, extras: ErrorExtras = {}) => new HttpError(403, message, extras);

export const notFound = (what: string) => new HttpError(404, `${what} not found`);

export const conflict = (message: string) => new HttpError(409, message);

/** The shared rate limiter (Redis) cannot be reached: limits fail closed rather than open. */
export const limiterUnavailable = () =>
  new HttpError(503, 'The server cannot check rate limits right now (limiter unavailable). Retry later.', {
    headers: { 'Retry-After': '5' },
  });

/** One of many instances cannot vouch it has caught up with the others: it refuses rather than answer from the past. */
export const instanceBehind = (why: string) =>
  new HttpError(503, `This instance cannot answer right now: ${why}. Retry: another instance, or this one once caught up, will answer.`, {
    headers: { 'Retry-After': '1' },
  });

/** A write the store could not make durable (disk full, read-only, I/O error). */
export const storeUnavailable = () =>
  new HttpError(503, 'The server cannot save changes right now (storage unavailable); reads still work. Retry later.', {
    headers: { 'Retry-After': '5' },
  });
