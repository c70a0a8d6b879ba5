// The request's URL as handlers will see it decoded: a path parameter or query value decoded
// from %00 would hand them U+0000, which PostgreSQL refuses in text (one such id in a write's
// reads fails the whole group-committed batch) and the file store keeps. Refused before any
// route runs, on every back-end alike. An unpaired surrogate cannot come out of the URL:
// percent-decoding gives U+FFFD for one (query) or leaves the segment as sent (path), and
// Node's parser reads the request line as bytes, never as UTF-16.

import { HttpError } from './errors.ts';

/** 400 when the raw URL (path or query) percent-encodes U+0000. */
export function assertNoNulInUrl(url: string): void {
  if (url.includes('%00')) throw new HttpError(400, 'The URL must not hold %00 (U+0000) in its path or query.');
}
