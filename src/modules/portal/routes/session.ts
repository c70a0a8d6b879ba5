// Signing in and out of the developer portal: POST /portal/v1/session checks an email and
// password and sets the session cookie; DELETE /portal/v1/session ends the session. A wrong
// email, a wrong password and an account without a password get the same answer after the same
// work (one scrypt each), and failures are limited per account and per address, each attempt
// counted before its scrypt runs (src/portal/sign-in-limits.ts). With two-factor sign-in on, the
// right password answers 202 with a ticket for the second step (handlers/portal/two-factor.ts).

import { normalEmail } from '../../../domain/email.ts';
import type { IncomingMessage } from 'node:http';
import type { AuditLog } from '../../../audit/audit-log.ts';
import { userActor } from '../../../audit/audit-log.ts';
import type { Clock } from '../../../clock.ts';
import { USERS, userStatus, type UserRecord } from '../../../domain/records.ts';
import { privateUser } from '../../../domain/views.ts';
import { forbidden, HttpError } from '../../../domain/errors.ts';
import type { OpenPortalContext, PortalRoute, Reply } from '../../../http/route.ts';
import { requestOrigin } from '../../../http/request-origin.ts';
import { BodyChecker } from '../../../http/validation.ts';
import { typedPasswordProblem } from '../password-rules.ts';
import { verifyAgainstDummy, verifyPassword } from '../passwords.ts';
import { CREDENTIALS, SESSIONS } from '../../../domain/account-records.ts';
import type { PortalSessions } from '../sessions.ts';
import type { SignInLimits } from '../sign-in-limits.ts';
import { newTicket } from '../sign-in-tickets.ts';
import { hasTwoFactor } from '../two-factor.ts';
import { SECRET_ANSWER_HEADERS } from '../../../http/respond.ts';
import type { RecordReader, Store, WriteOp } from '../../../store/store.ts';

export interface PortalSessionRoutesDeps {
  store: Store;
  clock: Clock;
  sessions: PortalSessions;
  limits: SignInLimits;
  /** The client's address for the per-address limit (X-Forwarded-For only from a trusted proxy). */
  clientAddress: (req: IncomingMessage) => string;
  audit: AuditLog;
  /** scrypt's N of the dummy hash an unknown email is checked against: the cost of real ones (Config.passwordCost). */
  passwordCost: number;
}

export const WRONG_CREDENTIALS = 'The email or password is wrong.';

export function portalSessionRoutes(deps: PortalSessionRoutesDeps): PortalRoute[] {
  const { store, sessions, limits, audit } = deps;

  const originOf = (context: OpenPortalContext) => requestOrigin(context.req, deps.clientAddress);

  /** An audit entry on the account (no actor: whoever tried is not known), for its owner's activity log. */
  async function recordFailedSignIn(context: OpenPortalContext, userId: string): Promise<void> {
    const entry = audit.entryOp(context.requestId, { action: 'portal.sign_in_failed', target_type: 'user', target_id: userId, changes: {}, origin: originOf(context) });
    await context.commit(() => ({ ops: [entry], result: undefined }));
  }

  async function signIn(context: OpenPortalContext): Promise<Reply> {
    const checker = new BodyChecker(await context.readJsonBody(), ['email', 'password']);
    checker.requireFields(['email', 'password']);
    const email = checker.string('email', 1, 254);
    const password = checker.value('password');
    const problem = checker.has('password') ? typedPasswordProblem(password) : null;
    if (problem !== null) checker.fail('password', problem);
    checker.finish();
    const address = deps.clientAddress(context.req);

    // The attempt takes its place in the account's and the address's limits before scrypt runs
    // (429 at once when either is full or already has 2 checks running).
    const user = userByEmail(store, normalEmail(email!));
    const credential = user === undefined ? undefined : store.get(CREDENTIALS, user.id);
    const check = () => (credential === undefined ? verifyAgainstDummy(password as string, address, deps.passwordCost) : verifyPassword(password as string, credential.password_hash, address));
    const matches = await limits.checked(email!, address, check);
    if (!matches || user === undefined || credential === undefined) {
      // A wrong password on a real account is shown in that account's activity log.
      if (user !== undefined) await recordFailedSignIn(context, user.id);
      throw wrongCredentials();
    }
    // Only someone holding the right password learns the account is suspended.
    if (userStatus(user) === 'suspended') throw forbidden('This account is suspended. Contact the marketplace operator.');

    // Decided on the records alone (an open route's commit): whatever session the browser had before plays no part (it ends).
    return context.commit((tx): { ops: WriteOp[]; result: Reply } => {
      // Decided on the account as it is now: a password changed or an account suspended or
      // erased while scrypt ran makes this sign-in fail as if the password were wrong.
      const current = tx.get(USERS, user.id);
      const stored = tx.get(CREDENTIALS, user.id);
      if (current === undefined || userStatus(current) !== 'active' || stored?.password_hash !== credential.password_hash) throw wrongCredentials();
      // With two-factor sign-in on, the right password earns a ticket, not a session: the
      // session comes from POST /portal/v1/session/second-factor with the ticket and a code.
      if (hasTwoFactor(tx, user.id)) {
        const issued = newTicket(tx, user.id, stored.updated_at, deps.clock.now());
        return {
          ops: [...issued.ops, audit.entryOp(context.requestId, { action: 'portal.sign_in_password', target_type: 'user', target_id: user.id, changes: { second_factor: 'totp' }, actor: userActor(user.id), origin: originOf(context) })],
          result: { status: 202, headers: { ...SECRET_ANSWER_HEADERS }, body: { data: { second_factor: 'totp', ticket: issued.ticket } } },
        };
      }
      const started = sessions.start(tx, context.req, user.id, context.signedIn);
      return {
        ops: [...started.ops, audit.entryOp(context.requestId, { action: 'portal.sign_in', target_type: 'user', target_id: user.id, changes: {}, actor: userActor(user.id), origin: originOf(context) })],
        result: { status: 201, headers: { 'Set-Cookie': started.setCookie }, body: { data: privateUser(current) } },
      };
    });
  }

  async function signOut(context: OpenPortalContext): Promise<Reply> {
    const headers = { 'Set-Cookie': sessions.clearCookie(context.req) };
    const signedIn = context.signedIn;
    if (signedIn === null) return { status: 204, headers };
    // 204 even when the session ended meanwhile: signing out twice is no error.
    return context.commit((tx): { ops: WriteOp[]; result: Reply } => {
      if (tx.get(SESSIONS, signedIn.sessionId) === undefined) return { ops: [], result: { status: 204, headers } };
      const userId = signedIn.user.id;
      return {
        ops: [
          { op: 'del', collection: SESSIONS, id: signedIn.sessionId },
          audit.entryOp(context.requestId, { action: 'portal.sign_out', target_type: 'user', target_id: userId, changes: {}, actor: userActor(userId), origin: originOf(context) }),
        ],
        result: { status: 204, headers },
      };
    });
  }

  return [
    { method: 'POST', pattern: '/portal/v1/session', summary: 'Sign in: sets the session cookie', open: true, handle: signIn },
    { method: 'DELETE', pattern: '/portal/v1/session', summary: 'Sign out: ends the session', open: true, handle: signOut },
  ];
}

/** The 401 of a failed sign-in, the same whatever was wrong. */
export function wrongCredentials(): HttpError {
  return new HttpError(401, WRONG_CREDENTIALS);
}

/** The user with this (lower-cased) email, if any; erased users have none. */
export function userByEmail(reader: RecordReader, email: string): UserRecord | undefined {
  if (email === '') return undefined;
  for (const user of reader.values(USERS)) if (user.email === email) return user;
  return undefined;
}
