// Random values handed to a browser or a person once (session cookies, invitation tokens) and
// the digests the store keeps of them instead.

import { createHash, randomBytes } from 'node:crypto';

/** 256 random bits, URL-safe (43 characters). */
export function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** The SHA-256 (hex) the store keeps of a secret. */
export function digestOf(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** True for what newSecret makes: exactly 43 URL-safe base64 characters (nothing else is hashed or looked up). */
export function isWellFormedSecret(text: string): boolean {
  return text.length === 43 && /^[A-Za-z0-9_-]+$/.test(text);
}
