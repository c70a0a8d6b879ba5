// When and how long the client waits before trying a request again: the spec's rule (wait
// until X-RateLimit-Reset or Retry-After; else back off 500 ms, 1 s, 2 s … capped at 30 s,
// at most 5 retries) plus the caller's limits, and a wait that an AbortSignal cuts short.

export interface RetryOptions {
  /** Retries after the first attempt; default 5. */
  maxRetries?: number;
  /** Upper bound on the sum of all waits of one call; a wait that would pass it is not made. */
  maxTotalWaitMs?: number;
  /** false: every 429 and network failure is thrown at once. Default true. */
  enabled?: boolean;
}

export type SleepFunction = (ms: number, signal: AbortSignal | undefined) => Promise<void>;

export const DEFAULT_MAX_RETRIES = 5;
export const BACKOFF_START_MS = 500;
export const BACKOFF_CAP_MS = 30_000;

/** The wait before retry number `retryIndex + 1` when the server gave no timing: 500 ms doubling, capped. */
export function backoffDelay(retryIndex: number): number {
  return Math.min(BACKOFF_CAP_MS, BACKOFF_START_MS * 2 ** retryIndex);
}

/**
 * The wait a 429 asks for, or null when it gives no usable timing (then back off instead).
 * X-RateLimit-Reset (Unix seconds) comes first, as the spec says; Retry-After (seconds or an
 * HTTP date) serves when Reset is absent or already past by this machine's clock, which
 * happens when the two clocks disagree.
 */
export function rateLimitWait(headers: Headers, nowMs: number): number | null {
  const reset = parseNumber(headers.get('x-ratelimit-reset'));
  if (reset !== null) {
    const untilReset = reset * 1000 - nowMs;
    if (untilReset > 0) return Math.ceil(untilReset);
  }
  return retryAfterWait(headers, nowMs);
}

/** The wait Retry-After asks for (seconds or an HTTP date), in milliseconds, or null without one. */
export function retryAfterWait(headers: Headers, nowMs: number): number | null {
  const retryAfter = headers.get('retry-after');
  if (retryAfter === null) return null;
  const seconds = parseNumber(retryAfter);
  if (seconds !== null) return Math.max(0, Math.ceil(seconds * 1000));
  const date = Date.parse(retryAfter);
  return Number.isFinite(date) ? Math.max(0, date - nowMs) : null;
}

function parseNumber(text: string | null): number | null {
  if (text === null || text.trim() === '') return null;
  const value = Number(text);
  return Number.isFinite(value) && value >= 0 ? value : null;
}

/** The limits of one client, with defaults filled in. */
export class RetryPolicy {
  readonly enabled: boolean;
  readonly maxRetries: number;
  readonly maxTotalWaitMs: number;

  constructor(options: RetryOptions = {}) {
    this.enabled = options.enabled ?? true;
    this.maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES;
    this.maxTotalWaitMs = options.maxTotalWaitMs ?? Number.POSITIVE_INFINITY;
    if (!Number.isInteger(this.maxRetries) || this.maxRetries < 0) {
      throw new RangeError('retry.maxRetries must be an integer >= 0');
    }
    if (!(this.maxTotalWaitMs >= 0)) throw new RangeError('retry.maxTotalWaitMs must be a number >= 0');
  }

  /** Whether retry number `retriesSoFar + 1`, after waiting `nextWaitMs`, stays within the limits. */
  allows(retriesSoFar: number, waitedSoFarMs: number, nextWaitMs: number): boolean {
    return this.enabled && retriesSoFar < this.maxRetries && waitedSoFarMs + nextWaitMs <= this.maxTotalWaitMs;
  }
}

/** A real sleep that ends early (rejecting with the signal's reason) when the signal aborts. */
export const timerSleep: SleepFunction = (ms, signal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/**
 * Waits with the given sleep, but rejects as soon as the signal aborts even if that sleep
 * ignores the signal (an injected test sleep may), so an abort is always prompt.
 */
export async function abortableWait(sleep: SleepFunction, ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return sleep(ms, undefined);
  signal.throwIfAborted();
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_resolve, reject) => {
    onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    await Promise.race([sleep(ms, signal), aborted]);
  } finally {
    if (onAbort) signal.removeEventListener('abort', onAbort);
  }
}
