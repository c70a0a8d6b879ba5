// The one place a password or code check meets the account's and the address's failure limits
// (sign-in-limits.ts): the second factor, the two-factor enrolment and the re-authentication of
// account changes all check through it, so the rule for how a check is counted is switched here
// for all of them at once.

import type { SignInLimits } from './sign-in-limits.ts';

/**
 * Runs `verify` within the failure limits of `account` (its email) and `address`: its place in
 * both is reserved before it runs (429 at once when there is none), given back when it answers
 * right and kept as a failure when wrong (SignInLimits.checked). Answers what `verify` answered.
 */
export function checkWithinFailureLimits(limits: SignInLimits, account: string, address: string, verify: () => Promise<boolean> | boolean): Promise<boolean> {
  return limits.checked(account, address, async () => verify());
}
