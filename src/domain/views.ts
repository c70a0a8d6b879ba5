// What clients see of each record. Records hold what the store needs (a key's hash, a user's
// updated_at); views pick the fields the contract promises, so nothing secret leaks by accident.

import { isoTime } from '../clock.ts';
import { userStatus, type KeyRecord, type UserRecord, type UserStatus } from './records.ts';
import { TWO_FACTOR } from './account-records.ts';
import type { RecordReader } from '../store/store.ts';

export interface PublicUser {
  id: string;
  name: string;
  bio: string;
  website: string;
  avatar_url: string;
  role: string;
  created_at: string;
}

/** A user as anyone may see them: never the email. */
export function publicUser(user: UserRecord): PublicUser {
  return {
    id: user.id,
    name: user.name,
    bio: user.bio,
    website: user.website,
    avatar_url: user.avatar_url,
    role: user.role,
    created_at: user.created_at,
  };
}

/** A user as they themselves (or the operator) see them. */
export function privateUser(user: UserRecord): PublicUser & { email: string; updated_at: string } {
  return { ...publicUser(user), email: user.email, updated_at: user.updated_at };
}

export interface OperatorUser extends ReturnType<typeof privateUser> {
  status: UserStatus;
  suspended_at: string | null;
  suspension_reason: string | null;
  /** Whether the user signs in to the portal with a second factor. */
  two_factor: boolean;
}

/** A user as the operator sees them: the private view plus moderation state. */
export function operatorUser(user: UserRecord, reader: RecordReader): OperatorUser {
  return {
    ...privateUser(user),
    status: userStatus(user),
    suspended_at: user.suspended_at ?? null,
    suspension_reason: user.suspension_reason ?? null,
    two_factor: reader.get(TWO_FACTOR, user.id)?.enabled === true,
  };
}

/** A key without its hash; `last_used_at` comes from analytics. */
export function keyView(key: KeyRecord, lastUsedAt: string | null) {
  return {
    id: key.id,
    user_id: key.user_id,
    name: key.name,
    prefix: key.prefix,
    last_four: key.last_four,
    permissions: key.permissions,
    rate_limit: key.rate_limit,
    created_at: key.created_at,
    updated_at: key.updated_at,
    revoked_at: key.revoked_at,
    expires_at: key.expires_at ?? null,
    plan: key.plan ?? null,
    /** After a roll: until when the previous secret is accepted (null when none is). */
    previous_secret_expires_at: key.previous_hash_expires_at ?? null,
    last_used_at: lastUsedAt,
  };
}

/** A rolled key: its view, the new plain key (shown this once) and when the old secret stops. */
export function rolledKeyView(key: KeyRecord, plainKey: string, lastUsedAt: string | null, nowMs: number) {
  // With no grace the old secret stopped at the roll itself.
  return { ...keyView(key, lastUsedAt), key: plainKey, previous_secret_expires_at: key.previous_hash_expires_at ?? isoTime(nowMs) };
}
