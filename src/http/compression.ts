// Compressed representations of an answer's bytes. Answers of 1 KiB or more in a textual type
// are sent br- or gzip-encoded when the client accepts it. Each representation has its own
// ETag (the identity tag with the coding appended), so If-None-Match works per encoding.
//
// Compressed bytes are remembered per identity Buffer object (a WeakMap): a handler that keeps
// its answer's bytes (a cached list page, the OpenAPI document, a dashboard file) returns the
// same Buffer each time, so that answer is compressed once and never again while it lives; a
// fresh answer's Buffer is collected with everything made from it. The copy kept is sized to
// its bytes (kept-bytes.ts), not a slice of zlib's output buffer.

import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { keptCopy } from './kept-bytes.ts';
import type { Encoding } from './negotiation.ts';

export const MIN_COMPRESSED_BYTES = 1024;
/** Larger answers (only an operator's backup gets there) are sent plain rather than block the event loop. */
export const MAX_COMPRESSED_BYTES = 8 * 1024 * 1024;

const COMPRESSIBLE_TYPE = /^(application\/(json|x-ndjson|javascript)|text\/|image\/svg\+xml)/;
/** Brotli's default (11) is far slower than gzip; 5 still beats gzip on size at a similar cost. */
const BROTLI_OPTIONS = { params: { [constants.BROTLI_PARAM_QUALITY]: 5 } };

const compressedCopies = new WeakMap<Buffer, Partial<Record<Encoding, Buffer>>>();

/** True when an answer of this size and Content-Type (undefined = our JSON) is worth compressing. */
export function isCompressible(bytes: Buffer, contentType: string | number | undefined): boolean {
  if (bytes.length < MIN_COMPRESSED_BYTES || bytes.length > MAX_COMPRESSED_BYTES) return false;
  return contentType === undefined || COMPRESSIBLE_TYPE.test(String(contentType));
}

/** `bytes` encoded with `encoding`; made once per Buffer object (answers' bytes are never changed in place). */
export function compressed(bytes: Buffer, encoding: Encoding): Buffer {
  let copies = compressedCopies.get(bytes);
  if (copies === undefined) {
    copies = {};
    compressedCopies.set(bytes, copies);
  }
  return (copies[encoding] ??= keptCopy([encoding === 'br' ? brotliCompressSync(bytes, BROTLI_OPTIONS) : gzipSync(bytes)]));
}

/** `"abc"` → `"abc-gzip"`: a distinct strong tag per representation. */
export function encodedEtag(etag: string, encoding: Encoding): string {
  return etag.endsWith('"') ? `${etag.slice(0, -1)}-${encoding}"` : `${etag}-${encoding}`;
}

/** True when `tag` is `etag` itself or the tag of one of its compressed representations. */
export function namesRepresentationOf(tag: string, etag: string): boolean {
  return tag === etag || tag === encodedEtag(etag, 'gzip') || tag === encodedEtag(etag, 'br');
}

/** Adds `token` to a Vary header value, once. */
export function addVary(current: string | number | undefined, token: string): string {
  if (current === undefined || current === '') return token;
  const tokens = String(current).split(',').map((part) => part.trim().toLowerCase());
  return tokens.includes(token.toLowerCase()) ? String(current) : `${current}, ${token}`;
}
