// Base62 text (digits and both cases of letters): the alphabet of ids and API keys, and random
// strings over it with every character equally likely.

import { randomBytes } from 'node:crypto';

export const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** `length` random base62 characters, from `source`'s bytes (the system's generator by default). */
export function randomBase62(length: number, source: (size: number) => Buffer = randomBytes): string {
  let out = '';
  while (out.length < length) {
    const bytes = source(length * 2);
    for (let index = 0; index < bytes.length && out.length < length; index++) {
      const byte = bytes[index]!;
      // 248 = 4 × 62: rejecting the top bytes keeps every character equally likely.
      if (byte < 248) out += BASE62[byte % 62];
    }
  }
  return out;
}
