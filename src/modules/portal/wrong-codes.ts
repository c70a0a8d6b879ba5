// Wrong codes over a long window. The failure limits (sign-in-limits.ts) allow 10 wrong codes
// per 15 minutes, which over months would let someone holding the password guess a code; so
// each wrong code is also written on the user's two-factor record, and the 30th within 24 hours
// locks codes from the app until a recovery code is used or the operator resets two-factor
// sign-in. Each wrong code is an audit entry with where it came from (the owner's activity shows
// "right password, wrong code"), and so is the lock. Kept in the store, so every instance
// sharing a database counts the same wrong codes.

import type { IncomingMessage } from 'node:http';
import type { AuditLog } from '../../audit/audit-log.ts';
import { userActor } from '../../audit/audit-log.ts';
import type { Clock } from '../../clock.ts';
import { isoTime } from '../../clock.ts';
import { HttpError } from '../../domain/errors.ts';
import { TWO_FACTOR, type TwoFactorRecord } from '../../domain/account-records.ts';
import { requestOrigin } from '../../http/request-origin.ts';
import type { Store, WriteOp } from '../../store/store.ts';
import type { SecondFactorInput } from './two-factor.ts';

export const WRONG_CODE_WINDOW_MS = 24 * 60 * 60 * 1000;
export const WRONG_CODES_TO_LOCK = 30;

export const CODES_LOCKED = `Codes from your authenticator app are locked after ${WRONG_CODES_TO_LOCK} wrong codes in 24 hours. Sign in with one of your recovery codes (which unlocks them), or ask the marketplace operator to reset two-factor sign-in.`;

/** True when codes from the app are locked on this record (a recovery code still works). */
export function codesLocked(record: TwoFactorRecord | undefined): boolean {
  return record?.locked_at != null;
}

/** The 423 of a code typed while codes are locked. */
export function codesLockedError(): HttpError {
  return new HttpError(423, CODES_LOCKED);
}

export interface WrongCodesDeps {
  store: Store;
  clock: Clock;
  audit: AuditLog;
  clientAddress: (req: IncomingMessage) => string;
}

export class WrongCodes {
  private readonly deps: WrongCodesDeps;

  constructor(deps: WrongCodesDeps) {
    this.deps = deps;
  }

  /**
   * Writes down a wrong code (or recovery code) of `userId`, typed after the right password
   * (`during` says where: the second step of signing in, or an account change); locks codes at
   * the 30th wrong code within 24 hours. Answers true when this one locked them.
   */
  record(requestId: string, req: IncomingMessage, userId: string, input: SecondFactorInput, during: 'sign_in' | 'account_change'): Promise<boolean> {
    const { store, clock, audit } = this.deps;
    const origin = requestOrigin(req, this.deps.clientAddress);
    const kind = 'code' in input ? 'code' : 'recovery_code';
    return store.commit((tx) => {
      const now = clock.now();
      const record = tx.get(TWO_FACTOR, userId);
      const ops: WriteOp[] = [
        audit.entryOp(requestId, { action: during === 'sign_in' ? 'portal.sign_in_wrong_code' : 'portal.wrong_code', target_type: 'user', target_id: userId, changes: { second_factor: kind, password_right: true }, actor: userActor(userId), origin }),
      ];
      let locked = false;
      // Only codes from the app count towards the lock: a recovery code is too long to guess, and it is what unlocks.
      if (record !== undefined && record.enabled && kind === 'code') {
        const recent = (record.wrong_codes ?? []).filter((at) => now - Date.parse(at) < WRONG_CODE_WINDOW_MS).slice(-(WRONG_CODES_TO_LOCK - 1));
        const wrongCodes = [...recent, isoTime(now)];
        locked = !codesLocked(record) && wrongCodes.length >= WRONG_CODES_TO_LOCK;
        const updated: TwoFactorRecord = { ...record, wrong_codes: wrongCodes, locked_at: locked ? isoTime(now) : (record.locked_at ?? null) };
        ops.push({ op: 'put', collection: TWO_FACTOR, id: userId, data: updated });
        if (locked) ops.push(audit.entryOp(requestId, { action: 'portal.two_factor_locked', target_type: 'user', target_id: userId, changes: { wrong_codes: wrongCodes.length, window_hours: 24 }, origin }));
      }
      return { ops, result: locked };
    });
  }
}
