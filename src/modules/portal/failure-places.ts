// Where portal sign-ins keep their failure places (src/limits/failure-reservations.ts): with
// Redis the back-ends share them between instances; in one process the portal makes them here,
// on the same per-address window as failed key authentications, so a server without the portal
// never loads them.

import { FAILED_AUTH_TRACKED_ADDRESSES, type Backends } from '../../backends/open-backends.ts';
import { ACCOUNT_FAILURE_WINDOW_MS, InProcessFailureReservations, type FailureReservations } from '../../limits/failure-reservations.ts';
import { SlidingWindowLimiter } from '../../limits/sliding-window.ts';

/** The back-ends' shared reservations, or in-process ones: failed sign-ins per account, and the failed-auth window per address. */
export function signInReservations(backends: Pick<Backends, 'failureReservations' | 'failedAuthLimiter'>, monotonicNow: () => number): FailureReservations {
  if (backends.failureReservations !== null) return backends.failureReservations;
  const address = backends.failedAuthLimiter;
  // In one process the failed-auth limiter is a SlidingWindowLimiter (src/backends/open-backends.ts).
  if (!(address instanceof SlidingWindowLimiter)) throw new Error('The in-process failed-auth limiter is not a sliding window');
  const account = new SlidingWindowLimiter({ monotonicNow, windowMs: ACCOUNT_FAILURE_WINDOW_MS, maxIds: FAILED_AUTH_TRACKED_ADDRESSES });
  return new InProcessFailureReservations({ account, address });
}
