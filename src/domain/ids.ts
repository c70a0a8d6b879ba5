// Opaque ids with a type prefix (lst_, usr_, key_, wh_, evt_, dlv_, aud_): 20 random base62
// characters after it, so ids neither collide nor reveal counts or times.

import { randomBase62 } from '../auth/keys.ts';

export type IdPrefix = 'lst' | 'usr' | 'key' | 'wh' | 'evt' | 'dlv' | 'aud';

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBase62(20)}`;
}
