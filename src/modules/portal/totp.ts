// Time-based one-time passwords (RFC 6238 over RFC 4226's HOTP): HMAC-SHA-1, 6 digits, 30-second
// steps, and a code from the step before or after the current one is also accepted, for a phone
// whose clock is a little off. Secrets travel as base32 (RFC 4648, no padding), the form
// authenticator apps read from an `otpauth://` URI. Only node:crypto is used.

import { createHmac, timingSafeEqual } from 'node:crypto';

export const STEP_SECONDS = 30;
export const CODE_DIGITS = 6;
/** Steps accepted on either side of the current one. */
export const STEP_WINDOW = 1;

const BASE32_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** The base32 text (upper case, unpadded) of `bytes`. */
export function base32Encode(bytes: Buffer): string {
  let text = '';
  let bits = 0;
  let value = 0;
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      text += BASE32_ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) text += BASE32_ALPHABET[(value << (5 - bits)) & 31];
  return text;
}

/** The bytes of base32 `text` (case and padding ignored); throws on a character outside the alphabet. */
export function base32Decode(text: string): Buffer {
  const clean = text.toUpperCase().replace(/=+$/, '');
  const bytes: number[] = [];
  let bits = 0;
  let value = 0;
  for (const character of clean) {
    const index = BASE32_ALPHABET.indexOf(character);
    if (index === -1) throw new Error('not base32');
    value = ((value << 5) | index) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      bytes.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Buffer.from(bytes);
}

/** The step `nowMs` falls in: whole 30-second periods since the Unix epoch. */
export function stepAt(nowMs: number): number {
  return Math.floor(nowMs / 1000 / STEP_SECONDS);
}

/** RFC 4226's HOTP value for `counter`, as the 6 digits a person types. */
export function codeForStep(secret: Buffer, step: number): string {
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(step));
  const mac = createHmac('sha1', secret).update(counter).digest();
  // Dynamic truncation: the last nibble picks 4 bytes, whose top bit is dropped.
  const offset = mac[mac.length - 1]! & 0x0f;
  const number = mac.readUInt32BE(offset) & 0x7fffffff;
  return String(number % 10 ** CODE_DIGITS).padStart(CODE_DIGITS, '0');
}

/** True for what a person may have typed as a code: exactly 6 digits (spaces around ignored by the caller). */
export function isCodeShaped(code: unknown): code is string {
  return typeof code === 'string' && /^[0-9]{6}$/.test(code);
}

/**
 * The step whose code `code` is, among the current step and its neighbours, or null. Steps at
 * or before `lastUsedStep` are never matched: a code is accepted once, and none older than the
 * last one accepted.
 */
export function matchingStep(secret: Buffer, code: string, nowMs: number, lastUsedStep: number | null): number | null {
  if (!isCodeShaped(code)) return null;
  const current = stepAt(nowMs);
  let matched: number | null = null;
  // Every candidate is compared (in constant time), so the time taken says nothing of which matched.
  for (let step = current - STEP_WINDOW; step <= current + STEP_WINDOW; step += 1) {
    const same = timingSafeEqual(Buffer.from(codeForStep(secret, step)), Buffer.from(code));
    if (same && matched === null && (lastUsedStep === null || step > lastUsedStep)) matched = step;
  }
  return matched;
}

/** The `otpauth://totp/…` URI an authenticator app reads (typed in or from a QR code). */
export function otpauthUri(issuer: string, account: string, secretBase32: string): string {
  const label = `${encodeURIComponent(issuer)}:${encodeURIComponent(account)}`;
  const query = new URLSearchParams({ secret: secretBase32, issuer, algorithm: 'SHA1', digits: String(CODE_DIGITS), period: String(STEP_SECONDS) });
  return `otpauth://totp/${label}?${query.toString()}`;
}
