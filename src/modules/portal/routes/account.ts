// The signed-in user's account in the developer portal: setting a password from an invitation
// (which also signs in, or with two-factor sign-in on answers a ticket for the code), changing it (which ends every other session and gives this one a new
// cookie value), open sign-up when the operator allows it (PORTAL_SIGNUP=open), and the profile
// (GET/PUT /portal/v1/me, the same rules as PUT /v1/users/me; a new email needs the current
// password, and a code with two-factor sign-in on, and ends every other session). Every change is
// audited with the user as actor.

import type { IncomingMessage } from 'node:http';
import type { AuditLog } from '../../../audit/audit-log.ts';
import { userActor } from '../../../audit/audit-log.ts';
import type { Clock } from '../../../clock.ts';
import { isoTime } from '../../../clock.ts';
import { actingUser, VISITOR } from '../../../domain/actor.ts';
import { USERS, userStatus, type UserRecord } from '../../../domain/records.ts';
import { privateUser } from '../../../domain/views.ts';
import { badRequest, forbidden, HttpError } from '../../../domain/errors.ts';
import type { OpenPortalContext, PortalContext, PortalRoute, Reply } from '../../../http/route.ts';
import { BodyChecker } from '../../../http/validation.ts';
import { hashPassword, verifyPassword } from '../passwords.ts';
import { passwordProblem, typedPasswordProblem } from '../password-rules.ts';
import { CREDENTIALS, INVITATIONS, type CredentialRecord } from '../../../domain/account-records.ts';
import { endSessionsOps } from '../../../domain/end-access.ts';
import { digestOf, isWellFormedSecret } from '../secrets.ts';
import { sessionRequired, type PortalSessions, type SignedIn } from '../sessions.ts';
import type { SignInLimits } from '../sign-in-limits.ts';
import { readCurrentPassword, readSecondFactor, requireCurrentPassword, requireSecondFactor, type ReauthenticationDeps } from '../reauthenticate.ts';
import type { SecondFactorProof, TwoFactorRules } from '../two-factor.ts';
import type { WrongCodes } from '../wrong-codes.ts';
import { isSameEmail } from '../../../domain/email.ts';
import type { RecordReader, Store, WriteOp } from '../../../store/store.ts';
import type { EventOutbox } from '../../../domain/events.ts';
import { readSignUp } from '../sign-up.ts';
import { newTicket } from '../sign-in-tickets.ts';
import { hasTwoFactor } from '../two-factor.ts';
import { requestOrigin } from '../../../http/request-origin.ts';
import { SECRET_ANSWER_HEADERS } from '../../../http/respond.ts';
import { decideOwnProfileChange, decideUserCreate, ownProfileBody, readOwnProfileChange } from '../../../resources/profile.ts';

export interface PortalAccountRoutesDeps {
  store: Store;
  clock: Clock;
  sessions: PortalSessions;
  limits: SignInLimits;
  /** The client's address for the per-address limit (X-Forwarded-For only from a trusted proxy). */
  clientAddress: (req: IncomingMessage) => string;
  audit: AuditLog;
  outbox: EventOutbox;
  /** Two-factor codes, for the re-authentication of an email change. */
  rules: TwoFactorRules;
  wrongCodes: WrongCodes;
  /** PORTAL_SIGNUP: with `invite`, POST /portal/v1/signup does not exist (404). */
  signup: 'invite' | 'open';
  /** scrypt's N for the passwords set here (Config.passwordCost). */
  passwordCost: number;
}

const INVALID_INVITATION = 'This invitation link is not valid: it was used, replaced by a newer one, or is older than 72 hours. Ask the operator for a new one.';

export function portalAccountRoutes(deps: PortalAccountRoutesDeps): PortalRoute[] {
  const { store, clock, sessions, limits, audit, outbox, rules, wrongCodes } = deps;
  const reauthentication: ReauthenticationDeps = { store, limits, rules, wrongCodes };

  /** POST /portal/v1/password: from an invitation (no session needed), or a change with the current password. */
  async function password(context: OpenPortalContext): Promise<Reply> {
    const body = await context.readJsonBody();
    if (Object.hasOwn(body, 'invitation')) return passwordFromInvitation(context, body);
    if (context.signedIn === null) throw sessionRequired();
    return changePassword(context, context.signedIn, body);
  }

  async function passwordFromInvitation(context: OpenPortalContext, body: Record<string, unknown>): Promise<Reply> {
    const checker = new BodyChecker(body, ['invitation', 'password']);
    checker.requireFields(['invitation', 'password']);
    const token = checker.value('invitation');
    if (typeof token !== 'string') checker.fail('invitation', 'must be a string');
    const problem = checker.has('password') ? passwordProblem(checker.value('password')) : null;
    if (problem !== null) checker.fail('password', problem);
    checker.finish();
    // A token is a secret too: a wrong one counts against the address like a wrong password,
    // reserved before it is looked up; a right one gives its place back once its password is hashed.
    const address = deps.clientAddress(context.req);
    const reservation = await limits.reserve(null, address);
    const tokenHash = typeof token === 'string' && isWellFormedSecret(token) ? digestOf(token) : null;
    if (tokenHash === null || invitationFor(store, tokenHash, clock.now()) === undefined) {
      await reservation.failed();
      throw invalidInvitation();
    }
    let passwordHash: string;
    try {
      passwordHash = await hashPassword(body.password as string, address, deps.passwordCost);
    } finally {
      await reservation.succeeded();
    }
    return context.commit<Reply>((tx) => {
      // Decided on the invitation as it is now: used, replaced or expired meanwhile → refused.
      const userId = invitationFor(store, tokenHash, clock.now())?.id;
      const invitation = userId === undefined ? undefined : tx.get(INVITATIONS, userId);
      const user = userId === undefined ? undefined : tx.get(USERS, userId);
      if (invitation === undefined || invitation.token_hash !== tokenHash || isExpired(invitation.expires_at, clock.now()) || user === undefined) throw invalidInvitation();
      if (userStatus(user) === 'erased') throw invalidInvitation();
      if (userStatus(user) === 'suspended') throw forbidden('This account is suspended. Contact the marketplace operator.');
      const setOps: WriteOp[] = [credentialOp(user.id, passwordHash, clock.now()), { op: 'del', collection: INVITATIONS, id: user.id }];
      // With two-factor sign-in on, the link sets the password but signs in only after a code:
      // whoever holds a reset link must still hold the phone. Every session ends (a reset).
      if (hasTwoFactor(tx, user.id)) {
        const issued = newTicket(tx, user.id, isoTime(clock.now()), clock.now());
        return {
          ops: [
            ...setOps,
            ...endSessionsOps(tx, user.id),
            ...issued.ops,
            audit.entryOp(context.requestId, { action: 'portal.password_set', target_type: 'user', target_id: user.id, changes: { from_invitation: true, second_factor: 'totp' }, actor: userActor(user.id), origin: requestOrigin(context.req, deps.clientAddress) }),
          ],
          result: { status: 202, headers: { ...SECRET_ANSWER_HEADERS }, body: { data: { second_factor: 'totp', ticket: issued.ticket } } },
        };
      }
      const started = sessions.start(tx, context.req, user.id, context.signedIn, true);
      return {
        ops: [
          ...setOps,
          // A reset: whoever was signed in with the old password is signed out (this browser's
          // own session, if any, is ended by started.ops as its cookie is replaced).
          ...endSessionsOps(tx, user.id, context.signedIn?.sessionId ?? null),
          ...started.ops,
          audit.entryOp(context.requestId, { action: 'portal.password_set', target_type: 'user', target_id: user.id, changes: { from_invitation: true }, actor: userActor(user.id) }),
        ],
        result: { status: 201, headers: { 'Set-Cookie': started.setCookie }, body: { data: privateUser(user) } },
      };
    });
  }

  async function changePassword(context: OpenPortalContext, signedIn: SignedIn, body: Record<string, unknown>): Promise<Reply> {
    const checker = new BodyChecker(body, ['current_password', 'password']);
    checker.requireFields(['current_password', 'password']);
    const current = checker.value('current_password');
    const currentProblem = checker.has('current_password') ? typedPasswordProblem(current) : null;
    if (currentProblem !== null) checker.fail('current_password', currentProblem);
    const problem = checker.has('password') ? passwordProblem(checker.value('password')) : null;
    if (problem !== null) checker.fail('password', problem);
    checker.finish();
    const { user } = signedIn;
    // A stolen session must not become a way to guess the password: failures count as sign-in failures.
    const address = deps.clientAddress(context.req);
    const stored = store.get(CREDENTIALS, user.id);
    const right = await limits.checked(user.email, address, async () => stored !== undefined && (await verifyPassword(current as string, stored.password_hash, address)));
    if (!right || stored === undefined) throw badRequest('The request body is invalid: current_password is wrong.', { current_password: 'is wrong' });
    const passwordHash = await hashPassword(body.password as string, address, deps.passwordCost);
    return context.commit((tx) => {
      // The session and its user as they are now (401 if the session ended meanwhile).
      const now = sessions.userAtCommit(tx, signedIn.sessionId);
      const credential = tx.get(CREDENTIALS, now.id);
      if (credential?.password_hash !== stored.password_hash) throw new HttpError(409, 'The password was changed meanwhile; sign in again with the new one.');
      // Every other session ends, and this one continues under a new cookie value (rotation):
      // whoever copied the old value learns nothing that still works.
      const rotated = sessions.start(tx, context.req, now.id, signedIn, true);
      return {
        ops: [
          credentialOp(now.id, passwordHash, clock.now()),
          ...endSessionsOps(tx, now.id, signedIn.sessionId),
          ...rotated.ops,
          audit.entryOp(context.requestId, { action: 'portal.password_change', target_type: 'user', target_id: now.id, changes: {}, actor: userActor(now.id) }),
        ],
        result: { status: 200, headers: { 'Set-Cookie': rotated.setCookie }, body: { data: privateUser(now) } },
      };
    });
  }

  async function signup(context: OpenPortalContext): Promise<Reply> {
    // Answered as an unknown route, so an invite-only server does not advertise sign-up.
    if (deps.signup !== 'open') throw new HttpError(404, `No route ${context.method} ${context.path}.`);
    const { password, ...fields } = readSignUp(await context.readJsonBody());
    const passwordHash = await hashPassword(password, deps.clientAddress(context.req), deps.passwordCost);
    return context.commit((tx) => {
      const { ops, result: user } = decideUserCreate(tx, VISITOR, { fields }, clock.now());
      const started = sessions.start(tx, context.req, user.id, context.signedIn);
      return {
        ops: [
          ...ops,
          credentialOp(user.id, passwordHash, clock.now()),
          ...started.ops,
          audit.entryOp(context.requestId, { action: 'portal.sign_up', target_type: 'user', target_id: user.id, changes: { role: 'member' }, actor: userActor(user.id) }),
        ],
        result: { status: 201, headers: { 'Set-Cookie': started.setCookie }, body: { data: privateUser(user) } },
      };
    });
  }

  function me(context: PortalContext): Reply {
    return { status: 200, body: ownProfileBody(context.user) };
  }

  async function updateMe(context: PortalContext): Promise<Reply> {
    // The fields that re-authenticate an email change are read apart from the profile's.
    const { current_password, code, recovery_code, ...profile } = await context.readJsonBody();
    const fields = readOwnProfileChange(profile);
    // A new sign-in email needs the password (and a code with two-factor sign-in on): a session
    // alone must not be enough to take the account over.
    const changesEmail = fields.email !== undefined && !isSameEmail(fields.email, context.user.email);
    const proof = changesEmail ? await reauthenticateForEmail(context, { current_password, code, recovery_code }) : null;
    return context.commit((tx, user) => {
      const { ops, result: changed } = decideOwnProfileChange(tx, actingUser(user), { fields, ifMatch: context.req.headers['if-match'], outbox }, clock.now());
      const spent = proof === null ? null : rules.spend(tx, user.id, proof);
      if (proof !== null && spent === null) throw badRequest('The request body is invalid: code is wrong or was already used.', { code: 'is wrong or was already used' });
      // An email change ends every other session, as a password change does.
      const ended = changesEmail ? endSessionsOps(tx, user.id, context.signedIn?.sessionId ?? null) : [];
      const changes = Object.fromEntries(Object.keys(fields).map((field) => [field, { from: user[field as keyof UserRecord] ?? null, to: changed[field as keyof UserRecord] ?? null }]));
      return {
        ops: [...ops, ...(spent === null ? [] : [spent]), ...ended, audit.entryOp(context.requestId, { action: 'portal.profile_update', target_type: 'user', target_id: user.id, changes, actor: userActor(user.id) })],
        result: { status: 200, body: ownProfileBody(changed) },
      };
    });
  }

  /** The current password, and a code when two-factor sign-in is on (400 naming what is missing or wrong); what the code proved, to be spent. */
  async function reauthenticateForEmail(context: PortalContext, given: Record<string, unknown>): Promise<SecondFactorProof | null> {
    const present = Object.fromEntries(Object.entries(given).filter(([, value]) => value !== undefined));
    const checker = new BodyChecker(present, ['current_password', 'code', 'recovery_code']);
    const typed = readCurrentPassword(checker);
    const input = readSecondFactor(checker);
    checker.finish();
    const address = deps.clientAddress(context.req);
    await requireCurrentPassword(reauthentication, context.user, address, typed!);
    return requireSecondFactor(reauthentication, context, context.user, address, input);
  }

  return [
    { method: 'POST', pattern: '/portal/v1/password', summary: 'Set a password from an invitation (signs in), or change it', open: true, handle: password },
    { method: 'POST', pattern: '/portal/v1/signup', summary: 'Sign up as a member (PORTAL_SIGNUP=open only)', open: true, handle: signup },
    { method: 'GET', pattern: '/portal/v1/me', summary: 'The signed-in user, with email', handle: me },
    { method: 'PUT', pattern: '/portal/v1/me', summary: 'Change your profile', handle: updateMe },
  ];
}

/** The user's open invitation with this token's digest, if any and not expired. */
function invitationFor(reader: RecordReader, tokenHash: string, now: number) {
  for (const invitation of reader.values(INVITATIONS)) {
    if (invitation.token_hash === tokenHash) return isExpired(invitation.expires_at, now) ? undefined : invitation;
  }
  return undefined;
}

function isExpired(expiresAt: string, now: number): boolean {
  return now >= Date.parse(expiresAt);
}

function credentialOp(userId: string, passwordHash: string, now: number): WriteOp {
  const credential: CredentialRecord = { id: userId, password_hash: passwordHash, updated_at: isoTime(now) };
  return { op: 'put', collection: CREDENTIALS, id: userId, data: credential };
}

function invalidInvitation(): HttpError {
  return badRequest(`The request body is invalid: ${INVALID_INVITATION}`, { invitation: 'is not valid or has expired' });
}
