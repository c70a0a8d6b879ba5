// Secrets the server must be able to read back (a two-factor secret: every code is computed from
// it) cannot be kept as a digest like a password or a session. They are kept sealed instead:
// AES-256-GCM under a key derived (HKDF-SHA-256) from the operator token, which every instance
// already shares and which never enters the store, its backups or its log. A copy of the data
// alone (a backup, a database dump) therefore reveals no secret. Each sealed value is bound to
// its record's id, so it cannot be moved to another user's record.

import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const FORMAT = 'aes256gcm';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** The sealer of two-factor secrets under `operatorToken`. */
export function twoFactorSealer(operatorToken: string): SecretSealer {
  return new SecretSealer(operatorToken, 'two-factor secrets');
}

export class SecretSealer {
  private readonly key: Buffer;

  /** `keyMaterial`: the operator token; `purpose` keeps keys for different uses apart. */
  constructor(keyMaterial: string, purpose: string) {
    this.key = Buffer.from(hkdfSync('sha256', keyMaterial, 'marketplace sealed secrets', purpose, 32));
  }

  /** `aes256gcm.<iv>.<tag>.<ciphertext>` (base64url), readable only with the same key and `boundTo`. */
  seal(secret: Buffer, boundTo: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(boundTo));
    const sealed = Buffer.concat([cipher.update(secret), cipher.final()]);
    return [FORMAT, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), sealed.toString('base64url')].join('.');
  }

  /** The secret, or null when `sealed` was made under another key (the operator token changed), for another record, or altered. */
  open(sealed: string, boundTo: string): Buffer | null {
    const parts = sealed.split('.');
    if (parts.length !== 4 || parts[0] !== FORMAT) return null;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(parts[1]!, 'base64url'), { authTagLength: TAG_BYTES });
      decipher.setAAD(Buffer.from(boundTo));
      decipher.setAuthTag(Buffer.from(parts[2]!, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(parts[3]!, 'base64url')), decipher.final()]);
    } catch {
      return null;
    }
  }
}
