// A failed key (/v1) or operator token (/admin): its 401, or 429 once the caller's address has
// failed too often. Both count in the same per-address limit, so guessing either costs the same.

import { HttpError } from '../domain/errors.ts';
import type { BaseContext } from '../http/context.ts';
import { retryAfterSeconds } from '../http/rate-limit-headers.ts';
import type { RateDecision } from '../limits/sliding-window.ts';
import type { PipelineDeps } from './deps.ts';

type FailureDeps = Pick<PipelineDeps, 'failedAuthLimiter' | 'failedAuthLimit' | 'clientAddress'>;

/** Counts the failure against the client's address, then throws its 401 (or 429); a shared limiter (Redis) answers later. */
export function refuseFailedAuthentication(deps: FailureDeps, context: BaseContext, unauthorized: () => HttpError): never | Promise<never> {
  const failures = deps.failedAuthLimiter.hit(deps.clientAddress(context.req), deps.failedAuthLimit);
  // The in-process limiter decides at once; a shared one (Redis) answers with a promise.
  if (failures instanceof Promise) return failures.then((decided) => refusal(decided, unauthorized));
  return refusal(failures, unauthorized);
}

function refusal(failures: RateDecision, unauthorized: () => HttpError): never {
  if (failures.allowed) throw unauthorized();
  const waitSeconds = retryAfterSeconds(failures);
  throw new HttpError(429, `Too many failed authentications from your address. Wait ${waitSeconds} s and send a valid key or token.`, {
    headers: { 'Retry-After': String(waitSeconds) },
  });
}
