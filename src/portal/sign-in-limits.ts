// Failed sign-ins are limited twice: per account (10 per 15 minutes, counted by the email asked
// for, known or not, so the limit itself tells nothing about which emails exist) and per client
// address (section 3's failed-authentication limit, shared with API keys and the operator token).
// A blocked account or address gets 429 with Retry-After, even with the right password.

import { normalEmail } from '../domain/email.ts';
import { HttpError } from '../domain/errors.ts';
import { retryAfterSeconds } from '../http/rate-limit-headers.ts';
import type { RateLimiter } from '../limits/rate-limiter.ts';
import type { RateDecision } from '../limits/sliding-window.ts';

export const ACCOUNT_FAILURE_LIMIT = 10;
export const ACCOUNT_FAILURE_WINDOW_MS = 15 * 60 * 1000;

export interface SignInLimitsOptions {
  /** Failures per account, in a 15-minute window. */
  accountLimiter: RateLimiter;
  /** Failures per address (the pipeline's failed-authentication limiter) and its limit. */
  addressLimiter: RateLimiter;
  addressLimit: number;
}

export class SignInLimits {
  private readonly options: SignInLimitsOptions;

  constructor(options: SignInLimitsOptions) {
    this.options = options;
  }

  /** 429 when the account or the address has failed too often lately. */
  async assertAllowed(account: string, address: string): Promise<void> {
    const { accountLimiter, addressLimiter, addressLimit } = this.options;
    const [byAccount, byAddress] = await Promise.all([accountLimiter.peek(accountKey(account), ACCOUNT_FAILURE_LIMIT), addressLimiter.peek(address, addressLimit)]);
    if (!byAddress.allowed) throw tooMany(byAddress, 'Too many failed sign-ins from your address.');
    if (!byAccount.allowed) throw tooMany(byAccount, 'Too many failed sign-ins for this account.');
  }

  /** Counts one failure against both. */
  async recordFailure(account: string, address: string): Promise<void> {
    const { accountLimiter, addressLimiter, addressLimit } = this.options;
    await Promise.all([accountLimiter.hit(accountKey(account), ACCOUNT_FAILURE_LIMIT), addressLimiter.hit(address, addressLimit)]);
  }
}

/** Emails are compared in NFC, lower-cased, as they are stored: one account, one count. */
function accountKey(email: string): string {
  return normalEmail(email.trim());
}

function tooMany(decision: RateDecision, what: string): HttpError {
  const waitSeconds = retryAfterSeconds(decision);
  return new HttpError(429, `${what} Wait ${waitSeconds} s before trying again.`, { headers: { 'Retry-After': String(waitSeconds) } });
}
