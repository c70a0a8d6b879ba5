// The session cookie: its name, reading it from a request and the Set-Cookie values that set
// and clear it. Over HTTPS it is `Secure` and carries the `__Host-` prefix (which browsers
// accept only from a secure origin, with Path=/ and no Domain, so no subdomain can plant or
// shadow it); over plain HTTP the prefix cannot be used and the plain name is read instead.

import type { IncomingMessage } from 'node:http';

export const COOKIE_NAME = 'marketplace_session';
export const SECURE_COOKIE_NAME = `__Host-${COOKIE_NAME}`;

export function cookieName(https: boolean): string {
  return https ? SECURE_COOKIE_NAME : COOKIE_NAME;
}

/** The value of the session cookie this request carries under the name its scheme uses, or null. */
export function sessionCookieOf(req: IncomingMessage, https: boolean): string | null {
  const header = req.headers.cookie;
  if (header === undefined) return null;
  const wanted = cookieName(https);
  for (const part of header.split(';')) {
    const equals = part.indexOf('=');
    if (equals === -1) continue;
    if (part.slice(0, equals).trim() === wanted) return part.slice(equals + 1).trim();
  }
  return null;
}

/** Sets the cookie for `maxAgeSeconds` (the session's absolute lifetime). */
export function setSessionCookie(value: string, https: boolean, maxAgeSeconds: number): string {
  return `${cookieName(https)}=${value}; Path=/; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Strict${https ? '; Secure' : ''}`;
}

/** Tells the browser to forget the cookie. */
export function clearSessionCookie(https: boolean): string {
  return `${cookieName(https)}=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict${https ? '; Secure' : ''}`;
}
