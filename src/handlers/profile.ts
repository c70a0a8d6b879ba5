// Profile fields shared by PUT /v1/users/me and the operator's user endpoints: one set of
// limits, one email-uniqueness rule.

import { USERS, type UserRecord } from '../domain/records.ts';
import { conflict } from '../domain/errors.ts';
import { definedOnly, type BodyChecker } from '../http/validation.ts';
import type { RecordReader } from '../store/store.ts';

export interface ProfileFields {
  name?: string;
  bio?: string;
  website?: string;
  avatar_url?: string;
  email?: string;
}

/** Reads whichever profile fields are present (problems are recorded on the checker). */
export function readProfileFields(checker: BodyChecker): ProfileFields {
  return definedOnly({
    name: checker.string('name', 1, 100),
    bio: checker.string('bio', 0, 500),
    website: checker.url('website', 2_048),
    avatar_url: checker.url('avatar_url', 2_048),
    email: checker.email('email')?.toLowerCase(),
  });
}

/**
 * 409 when another user already has this email (emails identify people to the operator). Read
 * inside a write's decision, it reads every user: two writes taking one email at once are
 * decided one after the other, so the second sees the first.
 */
export function assertEmailFree(reader: RecordReader, email: string, exceptUserId: string | null): void {
  for (const user of reader.values(USERS)) {
    if (user.email === email && user.id !== exceptUserId) throw conflict('Another user already has this email address.');
  }
}
