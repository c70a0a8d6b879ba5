// What a new password must be: 12 to 128 characters (code points, as a person counts them) and
// not one of the common passwords people pick first (compared lower-cased), and text that has a
// UTF-8 form. Nothing else is demanded (no character classes): length is what makes a password
// hard to guess. A password typed to be checked (sign-in, the current one) is refused unread past
// 1,024 characters.

import { codePointLength } from '../../http/validation.ts';
import { COMMON_PASSWORDS } from './common-passwords.ts';

export const MIN_PASSWORD_LENGTH = 12;
export const MAX_PASSWORD_LENGTH = 128;
/** The longest password typed to be checked (sign-in, current password), in characters: past any the rules accept, and not worth an scrypt. */
export const MAX_PASSWORD_INPUT = 1024;

/** What is wrong with `password` as a password typed to be checked, or null: a string within MAX_PASSWORD_INPUT characters (code points, as the document counts). */
export function typedPasswordProblem(password: unknown): string | null {
  return typeof password === 'string' && codePointLength(password) <= MAX_PASSWORD_INPUT ? null : `must be a string of at most ${MAX_PASSWORD_INPUT} characters`;
}

/** What is wrong with `password` as a new password, or null when it is acceptable. */
export function passwordProblem(password: unknown): string | null {
  if (typeof password !== 'string') return 'must be a string';
  // A lone surrogate has no UTF-8 form (it would be hashed as U+FFFD, so two such passwords would
  // be one) and NUL is nothing a person types.
  if (/[\u0000]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(password)) return 'must be text without NUL characters or unpaired surrogates';
  const length = codePointLength(password);
  if (length < MIN_PASSWORD_LENGTH) return `must be at least ${MIN_PASSWORD_LENGTH} characters`;
  if (length > MAX_PASSWORD_LENGTH) return `must be at most ${MAX_PASSWORD_LENGTH} characters`;
  if (COMMON_PASSWORDS.has(password.toLowerCase())) return 'is one of the most common passwords; choose another';
  return null;
}
