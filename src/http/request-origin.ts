// Where a request came from, as the user's activity log shows it: the client address the
// server sees (through the proxies named in TRUST_PROXY only) and the User-Agent header,
// bounded and stripped of control characters, so a client cannot store a large or
// terminal-altering text by signing in.

import type { IncomingMessage } from 'node:http';
import type { RequestOrigin } from '../domain/records.ts';

/** The longest user agent kept; longer ones are cut (real browsers send well under this). */
export const MAX_USER_AGENT_LENGTH = 256;

export function requestOrigin(req: IncomingMessage, clientAddress: (req: IncomingMessage) => string): RequestOrigin {
  const header = req.headers['user-agent'];
  const cleaned = typeof header === 'string' ? [...header.replace(/[\u0000-\u001f\u007f-\u009f]/g, '')].slice(0, MAX_USER_AGENT_LENGTH).join('').trim() : '';
  return { client_address: clientAddress(req), user_agent: cleaned === '' ? null : cleaned };
}
