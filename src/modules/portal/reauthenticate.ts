// Re-authentication for account changes made with a session (turning two-factor sign-in on or
// off, changing the sign-in email): the current password, and when two-factor sign-in is on a
// code or recovery code as well. A session alone is not enough: a stolen one must not be a way
// to take the account over, nor to guess the password or codes (every check counts in the
// account's failure limit, through limited-check.ts).

import { badRequest } from '../../domain/errors.ts';
import type { UserRecord } from '../../domain/records.ts';
import type { BodyChecker } from '../../http/validation.ts';
import type { RecordReader } from '../../store/store.ts';
import { checkWithinFailureLimits } from './limited-check.ts';
import { verifyPassword } from './passwords.ts';
import { typedPasswordProblem } from './password-rules.ts';
import { CREDENTIALS, TWO_FACTOR } from '../../domain/account-records.ts';
import type { SignInLimits } from './sign-in-limits.ts';
import type { SecondFactorInput, SecondFactorProof, TwoFactorRules } from './two-factor.ts';
import { codesLocked, codesLockedError, type WrongCodes } from './wrong-codes.ts';
import type { IncomingMessage } from 'node:http';

/** The longest code or recovery code read (anything longer is no code: 400, not counted). */
const MAX_CODE_INPUT = 64;

export interface ReauthenticationDeps {
  store: RecordReader;
  limits: SignInLimits;
  rules: TwoFactorRules;
  /** Where wrong codes are written down (the long window, the owner's activity). */
  wrongCodes: WrongCodes;
}

/** The request a check belongs to, for the audit entry of a wrong code. */
export interface CheckingRequest {
  requestId: string;
  req: IncomingMessage;
}

/** Reads `code` or `recovery_code` (at most one) into the checker's problems; null when neither is present. */
export function readSecondFactor(checker: BodyChecker): SecondFactorInput | null {
  const code = checker.string('code', 1, MAX_CODE_INPUT);
  const recoveryCode = checker.string('recovery_code', 1, MAX_CODE_INPUT);
  if (checker.has('code') && checker.has('recovery_code')) checker.fail('recovery_code', 'send either code or recovery_code, not both');
  if (code !== undefined) return { code };
  if (recoveryCode !== undefined) return { recovery_code: recoveryCode };
  return null;
}

/** Reads `current_password` into the checker's problems (required). */
export function readCurrentPassword(checker: BodyChecker): string | undefined {
  if (!checker.has('current_password')) {
    checker.fail('current_password', 'is required');
    return undefined;
  }
  const typed = checker.value('current_password');
  const problem = typedPasswordProblem(typed);
  if (problem !== null) checker.fail('current_password', problem);
  return problem === null ? (typed as string) : undefined;
}

/** 400 unless `typed` is the user's password (a failure counts in the limits). */
export async function requireCurrentPassword(deps: ReauthenticationDeps, user: UserRecord, address: string, typed: string): Promise<void> {
  const stored = deps.store.get(CREDENTIALS, user.id);
  const right = await checkWithinFailureLimits(deps.limits, user.email, address, async () => stored !== undefined && (await verifyPassword(typed, stored.password_hash, address)));
  if (!right) throw badRequest('The request body is invalid: current_password is wrong.', { current_password: 'is wrong' });
}

/**
 * When the user has two-factor sign-in on: 400 unless `input` is a right code or recovery code
 * (a failure counts in the limits and in the long window of wrong codes); answers what it proved,
 * to be spent in the write. Null when two-factor sign-in is off (`input` is then not needed).
 * 423 for a code while codes are locked (a recovery code still works).
 */
export async function requireSecondFactor(deps: ReauthenticationDeps, request: CheckingRequest, user: UserRecord, address: string, input: SecondFactorInput | null): Promise<SecondFactorProof | null> {
  const record = deps.store.get(TWO_FACTOR, user.id);
  if (record === undefined || !record.enabled) return null;
  if (input === null) throw badRequest('The request body is invalid: two-factor sign-in is on, so a code from your app (or a recovery code) is needed.', { code: 'is required' });
  if ('code' in input && codesLocked(record)) throw codesLockedError();
  const proof = await secondFactorWithinLimits(deps.limits, user.email, address, () => deps.rules.check(record, input));
  if (proof === null) {
    await deps.wrongCodes.record(request.requestId, request.req, user.id, input, 'account_change');
    throw wrongSecondFactor(input);
  }
  return proof;
}

/** A second-factor check (`check` answers what it proved, or null) within the failure limits, as checkWithinFailureLimits. */
export async function secondFactorWithinLimits(limits: SignInLimits, account: string, address: string, check: () => SecondFactorProof | null): Promise<SecondFactorProof | null> {
  let proof: SecondFactorProof | null = null;
  await checkWithinFailureLimits(limits, account, address, () => {
    proof = check();
    return proof !== null;
  });
  return proof as SecondFactorProof | null;
}

/** The 400 of a wrong (or already used) code or recovery code. */
export function wrongSecondFactor(input: SecondFactorInput): Error {
  const field = 'code' in input ? 'code' : 'recovery_code';
  return badRequest(`The request body is invalid: ${field} is wrong or was already used.`, { [field]: 'is wrong or was already used' });
}
