// The one place a password or code check meets the account's and the address's failure limits
// (sign-in-limits.ts): the second factor, the two-factor enrolment and the re-authentication of
// account changes all check through it, so the rule for how a check is counted is switched here
// for all of them at once.

import type { SignInLimits } from './sign-in-limits.ts';

/**
 * Runs `verify` within the failure limits of `account` (its email) and `address`: 429 when
 * either is spent; a wrong answer counts as a failure. Answers what `verify` answered.
 */
export async function checkWithinFailureLimits(limits: SignInLimits, account: string, address: string, verify: () => Promise<boolean> | boolean): Promise<boolean> {
  await limits.assertAllowed(account, address);
  const right = await verify();
  if (!right) await limits.recordFailure(account, address);
  return right;
}
