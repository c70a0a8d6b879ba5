// Failed checks of a secret (a sign-in, a current_password, a second-factor code, an invitation
// token) are limited twice: per account (10 per 15 minutes, counted by the email asked for, known
// or not, so the limit itself tells nothing about which emails exist) and per client address
// (section 3's failed-authentication limit, shared with API keys and the operator token).
// Every check reserves its place in both limits *before* it runs, and at most 2 checks run at a
// time per account and per address; a blocked account or address gets 429 with Retry-After at
// once, even with the right password, and nothing is checked.
//
// How to use it, around any check of a secret:
//   const reservation = await limits.reserve(email, address);   // 429 when there is no room
//   try { right = await check(); } catch (error) { await reservation.cancelled(); throw error; }
//   await (right ? reservation.succeeded() : reservation.failed());
// or, the same in one call: `const right = await limits.checked(email, address, check)`.
// Pass null as the account when no account is known yet (an invitation token): the address counts alone.

import { normalEmail } from '../../domain/email.ts';
import { HttpError } from '../../domain/errors.ts';
import { ACCOUNT_FAILURE_WINDOW_MS, type FailurePlace, type FailureReservations } from '../../limits/failure-reservations.ts';

export { ACCOUNT_FAILURE_WINDOW_MS };

export const ACCOUNT_FAILURE_LIMIT = 10;

export interface SignInLimitsOptions {
  /** Where the places are kept: in this process, or in Redis for every instance. */
  reservations: FailureReservations;
  /** Failures per address (the pipeline's failed-authentication limit). */
  addressLimit: number;
}

/** One attempt's places. Call exactly one of the three once the check is decided; later calls do nothing. */
export interface Reservation {
  /** The secret was right: the places are given back (they count as no failure). */
  succeeded(): Promise<void>;
  /** The secret was wrong: the places stay, as this attempt's failure. */
  failed(): Promise<void>;
  /** The check never ran (an error, the scrypt queue full): given back, as for success. */
  cancelled(): Promise<void>;
}

export class SignInLimits {
  private readonly options: SignInLimitsOptions;

  constructor(options: SignInLimitsOptions) {
    this.options = options;
  }

  /** Takes this attempt's places in the account's (if any) and the address's limits, or throws 429. */
  async reserve(account: string | null, address: string): Promise<Reservation> {
    const { reservations, addressLimit } = this.options;
    const places: FailurePlace[] = [{ window: 'address', id: address, limit: addressLimit }];
    if (account !== null) places.push({ window: 'account', id: accountKey(account), limit: ACCOUNT_FAILURE_LIMIT });
    const outcome = await reservations.reserve(places);
    if (!outcome.granted) throw tooMany(outcome.place.window, outcome.reason, outcome.waitMs);
    const held = outcome.held;
    let settled = false;
    const settle = (giveBack: boolean) => {
      if (settled) return Promise.resolve();
      settled = true;
      return giveBack ? reservations.giveBack(held) : reservations.keep(held);
    };
    return { succeeded: () => settle(true), failed: () => settle(false), cancelled: () => settle(true) };
  }

  /** Runs `check` inside a reservation: true when it says the secret is right. */
  async checked(account: string | null, address: string, check: () => Promise<boolean>): Promise<boolean> {
    const reservation = await this.reserve(account, address);
    let right: boolean;
    try {
      right = await check();
    } catch (error) {
      await reservation.cancelled();
      throw error;
    }
    await (right ? reservation.succeeded() : reservation.failed());
    return right;
  }
}

/** Emails are compared in NFC, lower-cased, as they are stored: one account, one count. */
function accountKey(email: string): string {
  return normalEmail(email.trim());
}

function tooMany(window: 'account' | 'address', reason: 'failures' | 'in-flight', waitMs: number): HttpError {
  const waitSeconds = Math.max(1, Math.ceil(waitMs / 1000));
  const what =
    reason === 'failures'
      ? window === 'address'
        ? 'Too many failed sign-ins from your address.'
        : 'Too many failed sign-ins for this account.'
      : window === 'address'
        ? 'Too many sign-in attempts in progress from your address.'
        : 'Too many sign-in attempts in progress for this account.';
  return new HttpError(429, `${what} Wait ${waitSeconds} s before trying again.`, { headers: { 'Retry-After': String(waitSeconds) } });
}
