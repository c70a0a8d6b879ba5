// The portal's records: sessions, stored passwords and invitations, one collection each. None
// holds a secret in plain form: a session and an invitation are known by the SHA-256 of their
// random value, a password by its scrypt hash. They live in the store like every other record,
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

export const SESSIONS = collectionName<SessionRecord>('sessions');
export const CREDENTIALS = collectionName<CredentialRecord>('credentials');
export const INVITATIONS = collectionName<InvitationRecord>('invitations');
