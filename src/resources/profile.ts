// The rules of a user's profile, with no request in sight, shared by PUT /v1/users/me, PUT
// /portal/v1/me and the operator's user endpoints: one set of limits, one email-uniqueness rule,
// one way a user changes her own profile.

import { isSameEmail } from '../domain/email.ts';
import { USERS, type UserRecord } from '../domain/records.ts';
import { privateUser } from '../domain/views.ts';
import { assertIfMatch, etagOf } from '../http/conditional.ts';
import { badRequest, conflict } from '../domain/errors.ts';
import { BodyChecker, definedOnly, requireNonEmpty } from '../http/validation.ts';
import type { DecisionReader, RecordReader, WriteOp } from '../store/store.ts';
import type { EventOutbox } from '../domain/events.ts';

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
    email: checker.email('email'),
  });
}

/**
 * 409 when another user already has this email (emails identify people to the operator),
 * compared in normal form (src/domain/email.ts), so NFC and NFD spellings are one address. Read
 * inside a write's decision, it reads every user: two writes taking one email at once are
 * decided one after the other, so the second sees the first.
 */
export function assertEmailFree(reader: RecordReader, email: string, exceptUserId: string | null): void {
  for (const user of reader.values(USERS)) {
    if (user.id !== exceptUserId && isSameEmail(user.email, email)) throw conflict('Another user already has this email address.');
  }
}

/** The fields a user may change in her own profile, and those she may see but not set. */
export const OWN_PROFILE_FIELDS = ['name', 'bio', 'website', 'avatar_url', 'email'] as const;
const OWN_READ_ONLY_FIELDS = ['id', 'role', 'created_at', 'updated_at'];

/** A user's own profile change (PUT /v1/users/me, PUT /portal/v1/me): 400 naming every bad field. */
export function readOwnProfileChange(body: Record<string, unknown>): ProfileFields {
  const checker = new BodyChecker(body, OWN_PROFILE_FIELDS, OWN_READ_ONLY_FIELDS);
  const fields = readProfileFields(checker);
  checker.finish();
  requireNonEmpty(body, OWN_PROFILE_FIELDS);
  // The email is what the user signs in to the portal with and is invited by: changed, never
  // cleared by the user (through /v1 as through the portal); only the operator or erasure clears it.
  if (fields.email === '') throw badRequest('The request body is invalid: email cannot be cleared: it is what you sign in with.', { email: 'must not be empty' });
  return fields;
}

/**
 * Decides a user's own profile change on the user as she is now (`user`, read in the write):
 * If-Match against her current profile (412), a free email (409), the `user.updated` event.
 */
export function decideOwnProfileChange(
  tx: DecisionReader,
  user: UserRecord,
  fields: ProfileFields,
  now: string,
  ifMatch: string | undefined,
  outbox: EventOutbox,
): { ops: WriteOp[]; changed: UserRecord } {
  assertIfMatch(ifMatch, () => etagOf(Buffer.from(JSON.stringify(ownProfileBody(user)))));
  if (fields.email) assertEmailFree(tx, fields.email, user.id);
  const changed: UserRecord = { ...user, ...fields, updated_at: now };
  return { ops: [{ op: 'put', collection: USERS, id: changed.id, data: changed }, ...outbox.eventOps(tx, 'user.updated', changed.id, privateUser(changed))], changed };
}

/** The body of GET /v1/users/me and GET /portal/v1/me; its ETag is what If-Match is compared with. */
export function ownProfileBody(user: UserRecord): { data: ReturnType<typeof privateUser> } {
  return { data: privateUser(user) };
}
