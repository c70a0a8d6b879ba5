// What a new password must be: 12 to 128 characters (code points, as a person counts them) and
// not one of the common passwords people pick first (compared lower-cased). Nothing else is
// demanded (no character classes): length is what makes a password hard to guess.

import { codePointLength } from '../http/validation.ts';
import { COMMON_PASSWORDS } from './common-passwords.ts';

export const MIN_PASSWORD_LENGTH = 12;
export const MAX_PASSWORD_LENGTH = 128;

/** What is wrong with `password` as a new password, or null when it is acceptable. */
export function passwordProblem(password: unknown): string | null {
  if (typeof password !== 'string') return 'must be a string';
  const length = codePointLength(password);
  if (length < MIN_PASSWORD_LENGTH) return `must be at least ${MIN_PASSWORD_LENGTH} characters`;
  if (length > MAX_PASSWORD_LENGTH) return `must be at most ${MAX_PASSWORD_LENGTH} characters`;
  if (COMMON_PASSWORDS.has(password.toLowerCase())) return 'is one of the most common passwords; choose another';
  return null;
}
