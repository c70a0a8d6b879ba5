// Standard Webhooks signatures: secrets are `whsec_` + base64 key bytes, and a delivery is
// signed with HMAC-SHA256 over "<webhook-id>.<webhook-timestamp>.<body>". Verification lives
// here too, so tests and receivers written in Node check deliveries the same way we sign them.

import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';
const SECRET_BYTES = 32;
const SIGNATURE_VERSION = 'v1';
const DEFAULT_TOLERANCE_SECONDS = 300;

/** The three Standard Webhooks headers; Node's `req.headers` fits this shape as it is. */
export interface SignatureHeaders {
  readonly [name: string]: string | string[] | undefined;
  'webhook-id'?: string | string[] | undefined;
  'webhook-timestamp'?: string | string[] | undefined;
  'webhook-signature'?: string | string[] | undefined;
}

/** A new secret: `whsec_` + base64 of 32 random bytes. Shown to the webhook's owner once. */
export function generateWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64');
}

/** The HMAC key is the bytes the base64 after `whsec_` stands for, not the text itself. */
function secretKey(secret: string): Buffer {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  const key = Buffer.from(encoded, 'base64');
  if (key.length === 0) throw new Error('webhook secret is empty');
  return key;
}

function signatureBytes(
  secret: string,
  messageId: string,
  timestampSeconds: number | string,
  body: string | Buffer,
): Buffer {
  return createHmac('sha256', secretKey(secret))
    .update(`${messageId}.${timestampSeconds}.`)
    .update(body)
    .digest();
}

/**
 * The `webhook-signature` value for one delivery.
 * @example signPayload('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'msg_p5jXN8AQM9LWM0D4loKWxJek',
 *   1614265330, '{"test": 2432232314}') // 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE='
 */
export function signPayload(
  secret: string,
  messageId: string,
  timestampSeconds: number,
  body: string | Buffer,
): string {
  return `${SIGNATURE_VERSION},${signatureBytes(secret, messageId, timestampSeconds, body).toString('base64')}`;
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

/**
 * Every header a delivery carries besides those Node adds (host, content-length, connection).
 * Several secrets (a rotation's grace) give one `v1,` signature each, space-separated, in order.
 */
export function buildDeliveryHeaders(
  secret: string | readonly string[],
  messageId: string,
  timestampSeconds: number,
  body: string | Buffer,
): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': 'marketplace-api-webhooks/1',
    'webhook-id': messageId,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': (typeof secret === 'string' ? [secret] : secret).map((one) => signPayload(one, messageId, timestampSeconds, body)).join(' '),
  };
}
