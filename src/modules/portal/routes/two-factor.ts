// Two-factor sign-in in the developer portal (TOTP, RFC 6238): enrolment from the profile (the
// secret shown once, confirmed with a first code, which turns it on, hands out ten recovery
// codes and ends every other session), turning it off (password and a code or recovery code),
// and the second step of signing in: a ticket from POST /portal/v1/session and a code → session.
// Every code check counts in the account's failure limit; every change is audited.

import type { IncomingMessage } from 'node:http';
import type { AuditLog } from '../../../audit/audit-log.ts';
import { userActor } from '../../../audit/audit-log.ts';
import type { Clock } from '../../../clock.ts';
import { isoTime } from '../../../clock.ts';
import { USERS, userStatus } from '../../../domain/records.ts';
import { privateUser } from '../../../domain/views.ts';
import { conflict, HttpError } from '../../../domain/errors.ts';
import { SECRET_ANSWER_HEADERS } from '../../../http/respond.ts';
import type { OpenPortalContext, PortalContext, PortalRoute, Reply } from '../../../http/route.ts';
import { BodyChecker } from '../../../http/validation.ts';
import { endSessionsOps } from '../../../domain/end-access.ts';
import { readCurrentPassword, readSecondFactor, requireCurrentPassword, requireSecondFactor, secondFactorWithinLimits, wrongSecondFactor, type ReauthenticationDeps } from '../reauthenticate.ts';
import { SIGN_IN_TICKETS, TWO_FACTOR } from '../../../domain/account-records.ts';
import { ownOrigin } from '../same-origin.ts';
import type { PortalSessions } from '../sessions.ts';
import { endTicketsOps, liveTicket } from '../sign-in-tickets.ts';
import type { SignInLimits } from '../sign-in-limits.ts';
import { newRecoveryCodes, recoveryCodeDigest, type TwoFactorRules } from '../two-factor.ts';
import { otpauthUri } from '../totp.ts';
import { codesLocked, codesLockedError, type WrongCodes } from '../wrong-codes.ts';
import { requestOrigin } from '../../../http/request-origin.ts';
import type { RecordReader, Store } from '../../../store/store.ts';

export interface PortalTwoFactorRoutesDeps {
  store: Store;
  clock: Clock;
  sessions: PortalSessions;
  limits: SignInLimits;
  rules: TwoFactorRules;
  /** The client's address for the per-address limit (X-Forwarded-For only from a trusted proxy). */
  clientAddress: (req: IncomingMessage) => string;
  audit: AuditLog;
  wrongCodes: WrongCodes;
}

export const INVALID_TICKET = 'This sign-in has expired or was already completed (a ticket lasts 5 minutes and works once). Sign in again with your email and password.';

export function portalTwoFactorRoutes(deps: PortalTwoFactorRoutesDeps): PortalRoute[] {
  const { store, clock, sessions, limits, rules, audit, wrongCodes } = deps;
  const reauthentication: ReauthenticationDeps = { store, limits, rules, wrongCodes };
  const originOf = (context: { req: OpenPortalContext['req'] }) => requestOrigin(context.req, deps.clientAddress);

  function status(context: PortalContext): Reply {
    return { status: 200, body: { data: twoFactorStatus(store, context.user.id) } };
  }

  /** POST /portal/v1/two-factor: a new secret, pending until confirmed (replaces a pending one). */
  async function enrol(context: PortalContext): Promise<Reply> {
    const checker = new BodyChecker(await context.readJsonBody(), ['current_password']);
    const typed = readCurrentPassword(checker);
    checker.finish();
    if (store.get(TWO_FACTOR, context.user.id)?.enabled === true) throw alreadyOn();
    await requireCurrentPassword(reauthentication, context.user, deps.clientAddress(context.req), typed!);
    const { secretBase32, record } = rules.enrol(context.user.id);
    const issuer = issuerOf(context, sessions);
    return context.commit((tx, user) => {
      if (tx.get(TWO_FACTOR, user.id)?.enabled === true) throw alreadyOn();
      return {
        ops: [
          { op: 'put', collection: TWO_FACTOR, id: user.id, data: record },
          audit.entryOp(context.requestId, { action: 'portal.two_factor_enrol', target_type: 'user', target_id: user.id, changes: {}, actor: userActor(user.id) }),
        ],
        // The secret is in this answer only; the store keeps it sealed.
        result: { status: 201, headers: { ...SECRET_ANSWER_HEADERS }, body: { data: { secret: secretBase32, otpauth_uri: otpauthUri(issuer, user.email, secretBase32) } } },
      };
    });
  }

  /** POST /portal/v1/two-factor/confirm: the first code turns it on; recovery codes shown once; other sessions end. */
  async function confirm(context: PortalContext): Promise<Reply> {
    const checker = new BodyChecker(await context.readJsonBody(), ['code']);
    checker.requireFields(['code']);
    const code = checker.string('code', 1, 64);
    checker.finish();
    const pending = store.get(TWO_FACTOR, context.user.id);
    if (pending === undefined) throw conflict('There is no enrolment to confirm: start one with POST /portal/v1/two-factor.');
    if (pending.enabled) throw alreadyOn();
    const accepted = await secondFactorWithinLimits(limits, context.user.email, deps.clientAddress(context.req), () => rules.check(pending, { code: code! }));
    if (accepted === null) throw wrongSecondFactor({ code: code! });
    const recoveryCodes = newRecoveryCodes();
    return context.commit((tx, user) => {
      const now = tx.get(TWO_FACTOR, user.id);
      // Decided on the enrolment as it is now: a newer secret (another enrolment) or one turned on meanwhile.
      if (now === undefined || now.sealed_secret !== pending.sealed_secret || now.enabled) throw conflict('The enrolment changed meanwhile (started again or already confirmed); look at GET /portal/v1/two-factor.');
      const spent = rules.spend(tx, user.id, accepted, { enabled: true, enabled_at: isoTime(clock.now()), recovery_code_hashes: recoveryCodes.map((code) => recoveryCodeDigest(code)!) });
      if (spent === null) throw wrongSecondFactor({ code: code! });
      return {
        ops: [
          spent,
          ...endSessionsOps(tx, user.id, context.signedIn?.sessionId ?? null),
          audit.entryOp(context.requestId, { action: 'portal.two_factor_on', target_type: 'user', target_id: user.id, changes: {}, actor: userActor(user.id) }),
        ],
        result: { status: 200, headers: { ...SECRET_ANSWER_HEADERS }, body: { data: { recovery_codes: recoveryCodes } } },
      };
    });
  }

  /** DELETE /portal/v1/two-factor: off, with the password and a code or recovery code. */
  async function disable(context: PortalContext): Promise<Reply> {
    const checker = new BodyChecker(await context.readJsonBody(), ['current_password', 'code', 'recovery_code']);
    const typed = readCurrentPassword(checker);
    const input = readSecondFactor(checker);
    if (!checker.has('code') && !checker.has('recovery_code')) checker.fail('code', 'is required (or recovery_code)');
    checker.finish();
    const record = store.get(TWO_FACTOR, context.user.id);
    if (record === undefined || !record.enabled) throw conflict('Two-factor sign-in is not on.');
    const address = deps.clientAddress(context.req);
    await requireCurrentPassword(reauthentication, context.user, address, typed!);
    const proof = await requireSecondFactor(reauthentication, context, context.user, address, input);
    return context.commit((tx, user) => {
      if (proof === null || rules.spend(tx, user.id, proof) === null) throw wrongSecondFactor(input!);
      return {
        ops: [
          { op: 'del', collection: TWO_FACTOR, id: user.id },
          ...endTicketsOps(tx, user.id),
          audit.entryOp(context.requestId, { action: 'portal.two_factor_off', target_type: 'user', target_id: user.id, changes: {}, actor: userActor(user.id) }),
        ],
        result: { status: 200, body: { data: twoFactorStatus(tx, user.id, true) } },
      };
    });
  }

  /** POST /portal/v1/two-factor/recovery-codes: ten new recovery codes for the password and a code; the old ones are void. */
  async function newCodes(context: PortalContext): Promise<Reply> {
    const checker = new BodyChecker(await context.readJsonBody(), ['current_password', 'code']);
    const typed = readCurrentPassword(checker);
    checker.requireFields(['code']);
    const input = readSecondFactor(checker);
    checker.finish();
    const record = store.get(TWO_FACTOR, context.user.id);
    if (record === undefined || !record.enabled) throw conflict('Two-factor sign-in is not on.');
    const address = deps.clientAddress(context.req);
    await requireCurrentPassword(reauthentication, context.user, address, typed!);
    const proof = await requireSecondFactor(reauthentication, context, context.user, address, input);
    const recoveryCodes = newRecoveryCodes();
    return context.commit((tx, user) => {
      // Decided on the record as it is now: turned off, or the code spent meanwhile → refused.
      if (tx.get(TWO_FACTOR, user.id)?.enabled !== true) throw conflict('Two-factor sign-in is not on.');
      const spent = proof === null ? null : rules.spend(tx, user.id, proof, { recovery_code_hashes: recoveryCodes.map((code) => recoveryCodeDigest(code)!) });
      if (spent === null) throw wrongSecondFactor(input!);
      return {
        ops: [
          spent,
          audit.entryOp(context.requestId, { action: 'portal.two_factor_recovery_codes', target_type: 'user', target_id: user.id, changes: { recovery_codes: recoveryCodes.length }, actor: userActor(user.id), origin: originOf(context) }),
        ],
        // Shown in this answer only; the store keeps their SHA-256.
        result: { status: 200, headers: { ...SECRET_ANSWER_HEADERS }, body: { data: { recovery_codes: recoveryCodes } } },
      };
    });
  }

  /** POST /portal/v1/session/second-factor: a ticket and a code (or recovery code) → the session. */
  async function secondFactor(context: OpenPortalContext): Promise<Reply> {
    const checker = new BodyChecker(await context.readJsonBody(), ['ticket', 'code', 'recovery_code']);
    checker.requireFields(['ticket']);
    const ticket = checker.string('ticket', 1, 64);
    const input = readSecondFactor(checker);
    if (!checker.has('code') && !checker.has('recovery_code')) checker.fail('code', 'is required (or recovery_code)');
    checker.finish();
    const held = liveTicket(store, ticket, clock.now());
    const user = held === undefined ? undefined : store.get(USERS, held.user_id);
    const record = held === undefined ? undefined : store.get(TWO_FACTOR, held.user_id);
    if (held === undefined || user === undefined || record === undefined || !record.enabled) throw invalidTicket();
    // After 30 wrong codes in 24 hours only a recovery code signs in (wrong-codes.ts); a locked code is not checked.
    if ('code' in input! && codesLocked(record)) throw codesLockedError();
    const accepted = await secondFactorWithinLimits(limits, user.email, deps.clientAddress(context.req), () => rules.check(record, input!));
    if (accepted === null) {
      // The right password, then a wrong code: written down for the owner to see, and counted over 24 hours.
      await wrongCodes.record(context.requestId, context.req, user.id, input!, 'sign_in');
      throw wrongCode(input!);
    }
    return context.commit((tx) => {
      // Decided on the ticket, account and codes as they are now: used meanwhile → refused.
      const current = tx.get(USERS, held.user_id);
      if (liveTicket(tx, ticket, clock.now())?.id !== held.id || current === undefined || userStatus(current) !== 'active') throw invalidTicket();
      const spent = rules.spend(tx, current.id, accepted);
      if (spent === null) throw wrongCode(input!);
      const started = sessions.start(tx, context.req, current.id, context.signedIn);
      return {
        ops: [
          spent,
          { op: 'del', collection: SIGN_IN_TICKETS, id: held.id },
          ...started.ops,
          audit.entryOp(context.requestId, { action: 'portal.sign_in', target_type: 'user', target_id: current.id, changes: { second_factor: accepted.kind }, actor: userActor(current.id), origin: originOf(context) }),
        ],
        result: { status: 201, headers: { 'Set-Cookie': started.setCookie }, body: { data: privateUser(current) } },
      };
    });
  }

  return [
    { method: 'GET', pattern: '/portal/v1/two-factor', summary: 'Whether two-factor sign-in is on, and recovery codes left', handle: status },
    { method: 'POST', pattern: '/portal/v1/two-factor', summary: 'Start two-factor sign-in: a new secret, on once confirmed', handle: enrol },
    { method: 'DELETE', pattern: '/portal/v1/two-factor', summary: 'Turn two-factor sign-in off', handle: disable },
    { method: 'POST', pattern: '/portal/v1/two-factor/recovery-codes', summary: 'New recovery codes (once); the old ones stop working', handle: newCodes },
    { method: 'POST', pattern: '/portal/v1/two-factor/confirm', summary: 'Confirm two-factor sign-in with a first code: on, recovery codes once', handle: confirm },
    { method: 'POST', pattern: '/portal/v1/session/second-factor', summary: 'Finish signing in with a code: sets the session cookie', open: true, handle: secondFactor },
  ];
}

/** What GET /portal/v1/two-factor answers. */
export function twoFactorStatus(reader: RecordReader, userId: string, deleted = false): { enabled: boolean; recovery_codes_left: number } {
  const record = deleted ? undefined : reader.get(TWO_FACTOR, userId);
  return record?.enabled === true ? { enabled: true, recovery_codes_left: record.recovery_code_hashes.length } : { enabled: false, recovery_codes_left: 0 };
}

function alreadyOn(): HttpError {
  return conflict('Two-factor sign-in is already on. Turn it off first (DELETE /portal/v1/two-factor) to enrol another app.');
}

function invalidTicket(): HttpError {
  return new HttpError(401, INVALID_TICKET);
}

/** A wrong code at sign-in: 401, like a wrong password. */
function wrongCode(input: { code: string } | { recovery_code: string }): HttpError {
  return new HttpError(401, 'code' in input ? 'The code is wrong or was already used.' : 'The recovery code is wrong or was already used.');
}

/** The name an authenticator app shows for this account's codes: the server's host name. */
function issuerOf(context: PortalContext, sessions: PortalSessions): string {
  const origin = ownOrigin(context.req, sessions.origin);
  // A label is "issuer:account", so the issuer holds no colon (a port or an IPv6 address would).
  return origin === null ? 'Marketplace' : `Marketplace (${new URL(origin).hostname.replace(/[[\]:]/g, ' ').trim()})`;
}
