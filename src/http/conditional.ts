// Conditional GETs: every GET answered 200 with a body carries an ETag (a hash of its bytes),
// and a client that sends that tag back in If-None-Match gets an empty 304 instead.

import { createHash } from 'node:crypto';

/** A strong ETag for these bytes, e.g. `"x4Bh…"`. Handlers that keep bytes may keep their tag too. */
export function etagOf(bytes: Buffer): string {
  return `"${createHash('sha1').update(bytes).digest('base64url')}"`;
}

/** True when If-None-Match names this tag (or is `*`); a weak `W/` tag matches its strong form. */
export function clientHasEtag(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  if (ifNoneMatch.trim() === '*') return true;
  return ifNoneMatch.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}
