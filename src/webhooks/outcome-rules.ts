// What one delivery attempt's result means, as a pure function: delivered, retried after a
// delay, failed for good, or failed with the webhook turned off (410 Gone). The dispatcher turns
// the decision into store writes; the rules live here so they can be read and tested as a table.

/** What one attempt came to (send.ts makes it, the rules below read it). */
export interface SendOutcome {
  delivered: boolean;
  /** The receiver's HTTP status, or null when none arrived. */
  status: number | null;
  /** Why no status arrived: 'timeout', an error code such as 'ECONNREFUSED', or a refusal. */
  error?: string;
  /** From `Retry-After` on a 429 or 503. */
  retryAfterMs?: number;
  /** The receiver answered 410 Gone: it wants no more deliveries. */
  gone: boolean;
}

export type AttemptDecision =
  | { readonly kind: 'delivered' }
  /** 410 Gone: the receiver asks for no more; the webhook stays, inactive, for its owner to see. */
  | { readonly kind: 'deactivate' }
  /** No retry left: the delivery ends as failed. */
  | { readonly kind: 'failed' }
  | { readonly kind: 'retry'; readonly delayMs: number };

export interface AttemptRules {
  /** The pause before each retry; after the last one the delivery is failed. */
  readonly retryDelaysMs: readonly number[];
  /** A receiver's Retry-After is honoured up to this long. */
  readonly maxRetryAfterMs: number;
}

/**
 * The decision for an attempt that was number `attempt` (1 for the first send). Only a 2xx is
 * delivered: a 3xx is a failure (redirects are not followed), as is no answer at all. A retry
 * waits the scheduled delay, or the receiver's Retry-After when that is longer (capped).
 * @example decideAttempt({ delivered: false, status: 503, gone: false }, 1, { retryDelaysMs: [5000], maxRetryAfterMs: 86_400_000 }) // { kind: 'retry', delayMs: 5000 }
 */
export function decideAttempt(outcome: SendOutcome, attempt: number, rules: AttemptRules): AttemptDecision {
  if (isDeliveredStatus(outcome.status)) return { kind: 'delivered' };
  if (isGoneStatus(outcome.status)) return { kind: 'deactivate' };
  const scheduledDelay = rules.retryDelaysMs[attempt - 1];
  if (scheduledDelay === undefined) return { kind: 'failed' };
  const retryAfterMs = outcome.retryAfterMs === undefined ? 0 : Math.min(outcome.retryAfterMs, rules.maxRetryAfterMs);
  return { kind: 'retry', delayMs: Math.max(scheduledDelay, retryAfterMs) };
}

/** Only a 2xx counts as delivered (a 3xx is not followed, so it is a failure). */
export function isDeliveredStatus(status: number | null): boolean {
  return status !== null && status >= 200 && status < 300;
}

/** 410 Gone turns the webhook off. */
export function isGoneStatus(status: number | null): boolean {
  return status === 410;
}

/** Why an attempt failed, as kept on the delivery: never the receiver's body. */
export function failureReason(outcome: SendOutcome): string {
  if (outcome.status === null) return outcome.error ?? 'no response';
  if (outcome.status >= 300 && outcome.status < 400) return `HTTP ${outcome.status} (redirects are not followed)`;
  return `HTTP ${outcome.status}`;
}
