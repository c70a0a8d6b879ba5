// The rules of two-factor sign-in, apart from HTTP: making a pending enrolment, checking a code
// or a recovery code against a user's record, and spending what was accepted inside the write
// that acts on it. Spending is decided on the record as it is at commit time, so a code (or a
// recovery code) presented twice at once, on one instance or on several sharing a database, is
// accepted once: the last accepted step and the unused recovery codes live in the store record.

import { randomBytes } from 'node:crypto';
import type { Clock } from '../../clock.ts';
import { isoTime } from '../../clock.ts';
import type { RecordReader, WriteOp } from '../../store/store.ts';
import { TWO_FACTOR, type TwoFactorRecord } from '../../domain/account-records.ts';
import type { SecretSealer } from './sealed-secrets.ts';
import { HttpError } from '../../domain/errors.ts';
import { digestOf } from './secrets.ts';
import { base32Encode, matchingStep } from './totp.ts';

export const RECOVERY_CODE_COUNT = 10;
/** 20 bytes (160 bits): the HMAC-SHA-1 key length RFC 4226 recommends. */
const SECRET_BYTES = 20;
/** 16 base32 characters: 80 random bits each, shown as four groups of four. */
const RECOVERY_CODE_CHARACTERS = 16;

/** A second factor a person typed: a 6-digit code, or one of the recovery codes. */
export type SecondFactorInput = { code: string } | { recovery_code: string };

/** What a check accepted, to be spent in the write that acts on it. */
export type SecondFactorProof = { kind: 'code'; step: number } | { kind: 'recovery_code'; hash: string };

export class TwoFactorRules {
  private readonly sealer: SecretSealer;
  private readonly clock: Clock;

  constructor(sealer: SecretSealer, clock: Clock) {
    this.sealer = sealer;
    this.clock = clock;
  }

  /** A new secret for `userId` (base32, shown once) and its pending record (not yet on). */
  enrol(userId: string): { secretBase32: string; record: TwoFactorRecord } {
    const secret = randomBytes(SECRET_BYTES);
    const record: TwoFactorRecord = {
      id: userId,
      sealed_secret: this.sealer.seal(secret, userId),
      enabled: false,
      created_at: isoTime(this.clock.now()),
      enabled_at: null,
      last_step: null,
      recovery_code_hashes: [],
    };
    return { secretBase32: base32Encode(secret), record };
  }

  /**
   * What `input` proves against `record` as read now, or null when it is wrong (or already
   * used). Only a record that is on accepts recovery codes; a pending one accepts the code that
   * confirms it.
   */
  check(record: TwoFactorRecord, input: SecondFactorInput): SecondFactorProof | null {
    if ('code' in input) {
      const secret = this.sealer.open(record.sealed_secret, record.id);
      // Not a wrong code: the server cannot read the secret (another operator token sealed it).
      // Said as it is, and not counted against the user.
      if (secret === null) throw unreadableSecret();
      const step = matchingStep(secret, input.code.trim(), this.clock.now(), record.last_step);
      return step === null ? null : { kind: 'code', step };
    }
    const hash = recoveryCodeDigest(input.recovery_code);
    return hash !== null && record.enabled && record.recovery_code_hashes.includes(hash) ? { kind: 'recovery_code', hash } : null;
  }

  /**
   * Inside a write: the op that spends `proof` on the user's record as it is now, or null when it
   * was spent meanwhile (the same code or recovery code accepted by another request first).
   */
  spend(reader: RecordReader, userId: string, proof: SecondFactorProof, changes: Partial<TwoFactorRecord> = {}): WriteOp | null {
    const record = reader.get(TWO_FACTOR, userId);
    if (record === undefined) return null;
    if (proof.kind === 'code') {
      if (record.last_step !== null && proof.step <= record.last_step) return null;
      const spent: TwoFactorRecord = { ...record, ...changes, last_step: proof.step };
      return { op: 'put', collection: TWO_FACTOR, id: userId, data: spent };
    }
    if (!record.recovery_code_hashes.includes(proof.hash)) return null;
    // A recovery code also unlocks codes locked after too many wrong ones (wrong-codes.ts), and starts their count again.
    const spent: TwoFactorRecord = { ...record, ...changes, wrong_codes: [], locked_at: null, recovery_code_hashes: record.recovery_code_hashes.filter((hash) => hash !== proof.hash) };
    return { op: 'put', collection: TWO_FACTOR, id: userId, data: spent };
  }
}

export const UNREADABLE_SECRET =
  'Codes cannot be checked right now: this server was started with another operator token than the one that sealed your two-factor secret. Sign in with a recovery code, or ask the operator to run `marketplace reseal --old-token-file <file>`.';

/** The 503 of a code whose secret this server cannot open. */
export function unreadableSecret(): HttpError {
  return new HttpError(503, UNREADABLE_SECRET);
}

/**
 * Seals every stored secret again under `current` (inside one write): each one `previous` opens
 * and `current` does not. Answers the ops and how many were resealed, already current, or
 * opened by neither (a wrong old token).
 */
export function resealOps(reader: RecordReader, previous: SecretSealer, current: SecretSealer): { ops: WriteOp[]; resealed: number; already_current: number; unreadable: number } {
  const ops: WriteOp[] = [];
  let alreadyCurrent = 0;
  let unreadable = 0;
  for (const record of reader.values(TWO_FACTOR)) {
    if (current.open(record.sealed_secret, record.id) !== null) {
      alreadyCurrent += 1;
      continue;
    }
    const secret = previous.open(record.sealed_secret, record.id);
    if (secret === null) {
      unreadable += 1;
      continue;
    }
    const resealed: TwoFactorRecord = { ...record, sealed_secret: current.seal(secret, record.id) };
    ops.push({ op: 'put', collection: TWO_FACTOR, id: record.id, data: resealed });
  }
  return { ops, resealed: ops.length, already_current: alreadyCurrent, unreadable };
}

/** True when `userId` signs in with a second factor (a confirmed record). */
export function hasTwoFactor(reader: RecordReader, userId: string): boolean {
  return reader.get(TWO_FACTOR, userId)?.enabled === true;
}

/** Ten new recovery codes, as shown to the user once (e.g. `k7qm-3xza-…`). */
export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    const text = base32Encode(randomBytes(10)).toLowerCase().slice(0, RECOVERY_CODE_CHARACTERS);
    return text.match(/.{4}/g)!.join('-');
  });
}

/** The SHA-256 the store keeps of a recovery code, as typed (case, spaces and dashes ignored); null when it cannot be one. */
export function recoveryCodeDigest(typed: string): string | null {
  const plain = typed.replace(/[\s-]/g, '').toLowerCase();
  return /^[a-z2-7]{16}$/.test(plain) ? digestOf(plain) : null;
}
