// When a key's secrets work: a key may expire (`expires_at`), and after a roll its previous
// secret keeps working until the grace period ends. Shared by the authenticator (every
// request), the check made again when a write commits, and the routes that set these fields.

import { isoTime } from '../clock.ts';
import type { KeyRecord } from '../domain/records.ts';
import type { NewApiKey } from './keys.ts';

/** The longest grace a roll may give the previous secret: 7 days. */
export const MAX_ROLL_GRACE_SECONDS = 7 * 24 * 60 * 60;

/** Why a known key's secret was refused, for the 401's message. */
export type SecretRefusal = 'revoked' | 'expired' | 'rolled';

export function isExpired(key: KeyRecord, nowMs: number): boolean {
  return key.expires_at != null && Date.parse(key.expires_at) <= nowMs;
}

/** Null when the secret hashing to `hash` opens `key` at `nowMs`; else why not. */
export function secretRefusal(key: KeyRecord, hash: string, nowMs: number): SecretRefusal | null {
  if (key.revoked_at !== null) return 'revoked';
  if (isExpired(key, nowMs)) return 'expired';
  if (hash === key.hash) return null;
  if (hash === key.previous_hash && key.previous_hash_expires_at != null && Date.parse(key.previous_hash_expires_at) > nowMs) return null;
  return 'rolled';
}

/** The key with a new secret; the current one stays accepted for `graceSeconds` (0: not at all). */
export function rolledKey(key: KeyRecord, secret: NewApiKey, graceSeconds: number, nowMs: number): KeyRecord {
  const now = isoTime(nowMs);
  return {
    ...key,
    prefix: secret.prefix,
    last_four: secret.lastFour,
    hash: secret.hash,
    previous_hash: graceSeconds > 0 ? key.hash : null,
    previous_hash_expires_at: graceSeconds > 0 ? isoTime(nowMs + graceSeconds * 1000) : null,
    updated_at: now,
  };
}

/**
 * Reads `expires_at` from a body: absent → undefined, null → null (never expires), else an
 * ISO 8601 instant after `nowMs`, normalised to UTC milliseconds.
 */
export function readExpiresAt(value: unknown, present: boolean, nowMs: number): { value?: string | null; problem?: string } {
  if (!present) return {};
  if (value === null) return { value: null };
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/.test(value)) {
    return { problem: 'must be an ISO 8601 date-time with a time zone, e.g. 2027-01-31T00:00:00Z' };
  }
  const ms = Date.parse(value);
  if (!Number.isFinite(ms)) return { problem: 'is not a valid date-time' };
  if (ms <= nowMs) return { problem: 'must be in the future' };
  if (ms > Date.UTC(9999, 11, 31)) return { problem: 'must be before the year 10000' };
  return { value: isoTime(ms) };
}
