// Standard Webhooks signatures: secrets are `whsec_` + base64 key bytes, and a delivery is
// signed with HMAC-SHA256 over "<webhook-id>.<webhook-timestamp>.<body>". A receiver's check of
// them is verify.ts.

import { createHmac, randomBytes } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';
const SECRET_BYTES = 32;
export const SIGNATURE_VERSION = 'v1';

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

/** The HMAC-SHA256 of "<id>.<timestamp>.<body>" keyed by the secret's bytes. */
export function signatureBytes(
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
