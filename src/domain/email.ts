// What counts as one email address, so that uniqueness cannot be dodged with a string that
// looks the same: an address is kept and compared in Unicode NFC with its letters lower-cased
// (the domain's case never mattered; the local part was already lower-cased before this), and
// refused when it holds characters a person cannot see (format and control characters, default
// ignorables such as a zero-width space), characters NFKC would change (full-width letters,
// circled digits, ligatures: look-alikes of other addresses), or a domain with an empty label
// (a trailing dot, "..").

/** Characters nobody sees: control (Cc), format (Cf, e.g. U+200B, U+00AD, U+202E) and default ignorables (U+034F, U+3164). */
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}]/u;
const SHAPE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export type EmailReading = { email: string } | { problem: string };

/**
 * The address in the form it is stored and compared in, or why it is refused.
 * @example readEmail('Jose\u0301@Example.com') // { email: 'jos\u00e9@example.com' }
 * @example readEmail('jose@example.com.') // { problem: 'must not have …' }
 */
export function readEmail(text: string): EmailReading {
  if (INVISIBLE.test(text)) return { problem: 'must not hold invisible characters (zero-width, control or formatting characters)' };
  const email = normalEmail(text);
  if (email.normalize('NFKC') !== email) return { problem: 'must not hold look-alike characters such as full-width letters (write them as plain letters)' };
  if (!SHAPE.test(email)) return { problem: 'must be an email address' };
  const domain = email.slice(email.lastIndexOf('@') + 1);
  if (domain.split('.').some((label) => label === '')) return { problem: 'must not have an empty part in its domain (a leading, trailing or doubled dot)' };
  return { email };
}

/** NFC, lower-cased: the form two addresses are compared in (also for addresses stored before it). */
export function normalEmail(text: string): string {
  return text.normalize('NFC').toLowerCase();
}

const ASCII = /^[\x00-\x7f]*$/;

/** True when a stored address is `email` (already normal): stored ones may predate normalisation. */
export function isSameEmail(stored: string, email: string): boolean {
  if (stored === email) return true;
  // An ASCII address was stored lower-cased, which is its normal form already.
  return stored !== '' && !ASCII.test(stored) && normalEmail(stored) === email;
}
