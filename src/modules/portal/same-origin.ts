// Which requests come from the portal's own pages. A portal write (CSRF) must come from the
// server's own origin: an `Origin` header equal to it, or `Sec-Fetch-Site: same-origin`. The
// server's origin is MARKETPLACE_URL's when set (the address users reach, e.g. behind a TLS
// terminator), else the request's Host with the scheme the socket used.

import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';

export interface OriginSettings {
  /** MARKETPLACE_URL's origin, e.g. "https://market.example.com", or null. */
  publicOrigin: string | null;
}

/** True when the request reached this server over TLS, or the server's public address is https. */
export function cameOverHttps(req: IncomingMessage, settings: OriginSettings): boolean {
  if ((req.socket as TLSSocket).encrypted === true) return true;
  return settings.publicOrigin !== null && settings.publicOrigin.startsWith('https:');
}

/** The server's own origin as this request's browser knows it, or null without a usable Host. */
export function ownOrigin(req: IncomingMessage, settings: OriginSettings): string | null {
  if (settings.publicOrigin !== null) return settings.publicOrigin;
  const host = req.headers.host;
  if (host === undefined || host === '' || /[\s/\\@]/.test(host)) return null;
  const scheme = (req.socket as TLSSocket).encrypted === true ? 'https' : 'http';
  return `${scheme}://${host.toLowerCase()}`;
}

/** A write sent by a page of this very origin (a browser says so with Origin or Sec-Fetch-Site). */
export function isSameOriginWrite(req: IncomingMessage, settings: OriginSettings): boolean {
  if (req.headers['sec-fetch-site'] === 'same-origin') return true;
  const origin = req.headers.origin;
  if (origin === undefined || origin === 'null') return false;
  const own = ownOrigin(req, settings);
  return own !== null && origin.toLowerCase() === own;
}
