// The rules of a user's profile, with no request in sight, shared by PUT /v1/users/me, PUT
// /portal/v1/me and the operator's user endpoints: one set of limits, one email-uniqueness rule,
// one way a user changes her own profile, and the operator's user create and change (a role
// change narrows the user's keys in the same write). Each decision is `decideX(tx, actor, input,
// now)` (src/domain/actor.ts) and returns the store's Decision, `{ops, result}`.

import { isSameEmail } from '../domain/email.ts';
import { isoTime } from '../clock.ts';
import type { PermissionRoute } from '../auth/permissions.ts';
import { keysNarrowedTo } from '../auth/role-permissions.ts';
import { newId } from '../domain/ids.ts';
import { KEYS, ROLES, USERS, userStatus, type KeyRecord, type Role, type UserRecord } from '../domain/records.ts';
import { privateUser } from '../domain/views.ts';
import { assertIfMatch, etagOf } from '../http/conditional.ts';
import { badRequest, conflict, notFound } from '../domain/errors.ts';
import { BodyChecker, definedOnly, requireNonEmpty } from '../http/validation.ts';
import type { Decision, RecordReader, Transaction, WriteOp } from '../store/store.ts';
import type { OperatorActor, UserActor, VisitorActor } from '../domain/actor.ts';
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
 * Decides the acting user's own profile change on her as she is now (read in the write):
 * If-Match against her current profile (412), a free email (409), the `user.updated` event. The
 * result is the changed user.
 */
export function decideOwnProfileChange(
  tx: Transaction,
  actor: UserActor,
  input: { fields: ProfileFields; ifMatch: string | undefined; outbox: EventOutbox },
  nowMs: number,
): Decision<UserRecord> {
  const { user } = actor;
  const { fields, ifMatch, outbox } = input;
  assertIfMatch(ifMatch, () => etagOf(Buffer.from(JSON.stringify(ownProfileBody(user)))));
  if (fields.email) assertEmailFree(tx, fields.email, user.id);
  const changed: UserRecord = { ...user, ...fields, updated_at: isoTime(nowMs) };
  return { ops: [{ op: 'put', collection: USERS, id: changed.id, data: changed }, ...outbox.eventOps(tx, 'user.updated', changed.id, privateUser(changed))], result: changed };
}

/** The body of GET /v1/users/me and GET /portal/v1/me; its ETag is what If-Match is compared with. */
export function ownProfileBody(user: UserRecord): { data: ReturnType<typeof privateUser> } {
  return { data: privateUser(user) };
}

/** The fields the operator sets on a user. */
export const OPERATOR_USER_FIELDS = ['name', 'email', 'role', 'bio'] as const;
const OPERATOR_USER_READ_ONLY = ['id', 'created_at', 'updated_at'];

/** A user's fields as the operator sends them, the role apart. */
export interface UserFields {
  profile: ProfileFields;
  role: Role | undefined;
}

/** The operator's new user (`name` required; the role `member` unless sent); throws one 400 naming every problem. */
export function readUserCreate(body: Record<string, unknown>): UserFields {
  const checker = new BodyChecker(body, OPERATOR_USER_FIELDS, OPERATOR_USER_READ_ONLY);
  checker.requireFields(['name']);
  const profile = readProfileFields(checker);
  const role = checker.oneOf('role', ROLES) ?? 'member';
  checker.finish();
  return { profile, role };
}

/** The operator's change to a user (at least one field); throws one 400 naming every problem. */
export function readUserChange(body: Record<string, unknown>): UserFields {
  const checker = new BodyChecker(body, OPERATOR_USER_FIELDS, OPERATOR_USER_READ_ONLY);
  const profile = readProfileFields(checker);
  const role = checker.oneOf('role', ROLES);
  checker.finish();
  requireNonEmpty(body, OPERATOR_USER_FIELDS);
  return { profile, role };
}

/** Creating a user (the operator's, or a visitor's open sign-up) with a free email (409 otherwise); the result is the new user. */
export function decideUserCreate(tx: Transaction, _actor: OperatorActor | VisitorActor, input: { fields: UserFields }, nowMs: number): Decision<UserRecord> {
  const { fields } = input;
  const { profile } = fields;
  if (profile.email) assertEmailFree(tx, profile.email, null);
  const now = isoTime(nowMs);
  const user: UserRecord = {
    id: newId('usr'),
    name: profile.name!,
    email: profile.email ?? '',
    bio: profile.bio ?? '',
    website: '',
    avatar_url: '',
    role: fields.role ?? 'member',
    created_at: now,
    updated_at: now,
  };
  return { ops: [{ op: 'put', collection: USERS, id: user.id, data: user }], result: user };
}

/** A user as she was (`user`) and is (`changed`), and her keys a new role narrowed. */
export interface UserChange {
  user: UserRecord;
  changed: UserRecord;
  narrowed: Array<{ before: KeyRecord; after: KeyRecord }>;
}

/**
 * The operator changing a user who exists (404 for a missing or erased one), with a free email
 * (409). A role follows the user: in the same write, every key of theirs loses what the new role
 * may never hold (`narrowed`, each to be audited on its key), and the `user.updated` event.
 */
export function decideUserChange(
  tx: Transaction,
  _actor: OperatorActor,
  input: { userId: string; fields: UserFields; apiRoutes: readonly PermissionRoute[]; outbox: EventOutbox },
  nowMs: number,
): Decision<UserChange> {
  const { userId, fields, apiRoutes, outbox } = input;
  const user = tx.get(USERS, userId);
  if (!user || userStatus(user) === 'erased') throw notFound('User');
  if (fields.profile.email) assertEmailFree(tx, fields.profile.email, user.id);
  const now = isoTime(nowMs);
  const changed: UserRecord = { ...user, ...fields.profile, ...(fields.role ? { role: fields.role } : {}), updated_at: now };
  const narrowed = changed.role === user.role ? [] : keysNarrowedTo(tx, user.id, changed.role, apiRoutes, now);
  const ops: WriteOp[] = [
    { op: 'put', collection: USERS, id: changed.id, data: changed },
    ...narrowed.map(({ after }): WriteOp => ({ op: 'put', collection: KEYS, id: after.id, data: after })),
    ...outbox.eventOps(tx, 'user.updated', changed.id, privateUser(changed)),
  ];
  return { ops, result: { user, changed, narrowed } };
}
