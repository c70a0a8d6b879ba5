// The portal's records: sessions, stored passwords, invitations, two-factor settings and
// sign-in tickets, one collection each. None holds a secret in plain form: a session, an
// invitation, a ticket and a recovery code are known by the SHA-256 of their random value, a
// password by its scrypt hash, a two-factor secret only sealed (sealed-secrets.ts). They live in the store like every other record,
// so every instance sharing a database honours them.

import { collectionName } from '../store/collections.ts';

/** A signed-in browser. Its id is the SHA-256 (hex) of the cookie's value. */
export interface SessionRecord {
  readonly id: string;
  readonly user_id: string;
  readonly created_at: string;
  /** Refreshed at most every few minutes while in use (not on every request). */
  readonly last_seen_at: string;
  /** The absolute end, whatever the use: created_at + 7 days. */
  readonly expires_at: string;
  /** Where the sign-in came from, for the user's list of sessions (absent on sessions made before it was kept). */
  readonly client_address?: string | null;
  readonly user_agent?: string | null;
}

/** A user's password, as scrypt (see passwords.ts); its id is the user's id. */
export interface CredentialRecord {
  readonly id: string;
  readonly password_hash: string;
  readonly updated_at: string;
}

/** The one open invitation of a user (a new one replaces it); its id is the user's id. */
export interface InvitationRecord {
  readonly id: string;
  /** SHA-256 (hex) of the token. */
  readonly token_hash: string;
  readonly created_at: string;
  readonly expires_at: string;
}

/** A user's second factor (TOTP); its id is the user's id. Pending until confirmed with a first code. */
export interface TwoFactorRecord {
  readonly id: string;
  /** The TOTP secret, sealed (sealed-secrets.ts) and bound to this record's id. */
  readonly sealed_secret: string;
  /** False from enrolment until a code confirms the user's app has the secret. */
  readonly enabled: boolean;
  readonly created_at: string;
  readonly enabled_at: string | null;
  /** The step of the last code accepted (null before any): no code of that step or an earlier one is accepted again, on any instance. */
  readonly last_step: number | null;
  /** SHA-256 (hex) of each recovery code not yet used. */
  readonly recovery_code_hashes: readonly string[];
  /** When each wrong code of the last 24 hours was typed (absent before the first). */
  readonly wrong_codes?: readonly string[];
  /** Set when 30 wrong codes in 24 hours locked codes from the app: only a recovery code or the operator's reset unlocks. */
  readonly locked_at?: string | null;
}

/** Proof that a password was right, waiting for the second factor; its id is the SHA-256 of the ticket. */
export interface SignInTicketRecord {
  readonly id: string;
  readonly user_id: string;
  /** The credential's updated_at when the password was checked: a password changed meanwhile voids the ticket. */
  readonly password_updated_at: string;
  readonly created_at: string;
  readonly expires_at: string;
}

export const SESSIONS = collectionName<SessionRecord>('sessions');
export const CREDENTIALS = collectionName<CredentialRecord>('credentials');
export const INVITATIONS = collectionName<InvitationRecord>('invitations');
export const TWO_FACTOR = collectionName<TwoFactorRecord>('two_factor');
export const SIGN_IN_TICKETS = collectionName<SignInTicketRecord>('sign_in_tickets');
