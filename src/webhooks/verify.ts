// Checking a delivery's Standard Webhooks signature, as a receiver does: the server never runs
// it (it only signs, signing.ts), but tests and receivers written in Node check deliveries with
// the very HMAC we sign them with.

import { timingSafeEqual } from 'node:crypto';
import { SIGNATURE_VERSION, signatureBytes } from './signing.ts';

const DEFAULT_TOLERANCE_SECONDS = 300;

/** The three Standard Webhooks headers; Node's `req.headers` fits this shape as it is. */
export interface SignatureHeaders {
  readonly [name: string]: string | string[] | undefined;
  'webhook-id'?: string | string[] | undefined;
  'webhook-timestamp'?: string | string[] | undefined;
  'webhook-signature'?: string | string[] | undefined;
}

function singleHeader(value: string | string[] | undefined): string | undefined {
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

/**
 * True when one of the space-separated `v1,` signatures matches and the timestamp lies within
 * `toleranceSeconds` of `nowSeconds` either way (an old one may be a replay).
 * @example verifySignature(secret, req.headers, rawBody, Math.floor(Date.now() / 1000))
 */
export function verifySignature(
  secret: string,
  headers: SignatureHeaders,
  body: string | Buffer,
  nowSeconds: number,
  toleranceSeconds = DEFAULT_TOLERANCE_SECONDS,
): boolean {
  const messageId = singleHeader(headers['webhook-id']);
  const timestamp = singleHeader(headers['webhook-timestamp']);
  const signatures = singleHeader(headers['webhook-signature']);
  if (messageId === undefined || timestamp === undefined || signatures === undefined) return false;
  if (!/^\d{1,15}$/.test(timestamp)) return false;
  if (Math.abs(nowSeconds - Number(timestamp)) > toleranceSeconds) return false;

  // Signed with the header's own text, so "0123" cannot pass for "123".
  const expected = signatureBytes(secret, messageId, timestamp, body);
  let matched = false;
  for (const candidate of signatures.split(' ')) {
    const comma = candidate.indexOf(',');
    if (comma === -1 || candidate.slice(0, comma) !== SIGNATURE_VERSION) continue;
    const given = Buffer.from(candidate.slice(comma + 1), 'base64');
    // No early return: every candidate is compared, in constant time each.
    if (given.length === expected.length && timingSafeEqual(given, expected)) matched = true;
  }
  return matched;
}
