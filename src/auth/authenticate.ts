// Who is calling: finds the API key in the request headers and resolves it to a live key and
// its user. Checks are cached ~60 s (hits and misses) by the key's SHA-256, never by the plain
// key: a secret stays out of caches even in memory. The cache holds only the key's id; the key
// record itself is read fresh on every request, so a revoked or changed key takes effect on the
// very next request without waiting for the cache. That record also says which secrets open it
// at this instant (key-lifetime.ts): none once it is revoked or past `expires_at`, and after a
// roll the new secret plus, until its grace ends, the previous one. So expiry and the end of a
// grace period count from the very next request, however long an entry stays cached.

import type { IncomingHttpHeaders } from 'node:http';
import { KEYS, USERS, type KeyRecord, type UserRecord } from '../domain/records.ts';
import { TtlCache } from '../limits/ttl-cache.ts';
import type { ChangeEvent, Store } from '../store/store.ts';
import { secretRefusal, type SecretRefusal } from './key-lifetime.ts';
import { hashApiKey, isWellFormedApiKey, MAX_API_KEY_LENGTH } from './keys.ts';

export interface Caller {
  key: KeyRecord;
  user: UserRecord;
}

export const AUTH_ERROR = 'The API key is missing or invalid.';
export const AUTH_HINT =
  'Send your key in the "Authorization: Bearer <key>" header (or the raw key in Authorization) or in the "X-API-Key: <key>" header. Keys start with "mk_" or "<brand>_live_".';

/** The key as sent: Authorization (Bearer or raw) wins over X-API-Key; query strings are never read. */
export function presentedKey(headers: IncomingHttpHeaders): string | null {
  const authorization = headers.authorization;
  if (authorization !== undefined) {
    const value = authorization.trim();
    const bearer = /^bearer\s+/i.exec(value);
    return bearer ? value.slice(bearer[0].length).trim() : value;
  }
  const apiKey = headers['x-api-key'];
  if (typeof apiKey === 'string') return apiKey.trim();
  return null;
}

export class KeyAuthenticator {
  private readonly store: Store;
  private readonly brand: string;
  /** Every secret's SHA-256 → key id: the current one, and a rolled key's previous one. */
  private readonly keyIdByHash = new Map<string, string>();
  /** SHA-256 of a well-formed key → key id, or null when it matches nothing. */
  private readonly checks: TtlCache<string, string | null>;
  /** Wall time, against which expiry and grace periods are read. */
  private readonly now: () => number;

  constructor(store: Store, brand: string, monotonicNow: () => number, now: () => number = Date.now) {
    this.store = store;
    this.brand = brand;
    this.now = now;
    this.checks = new TtlCache({ ttlMs: 60_000, maxEntries: 10_000, monotonicNow });
    for (const key of store.values(KEYS)) this.addHashes(key);
  }

  /** Keeps the hash → key id map current; wired to the store's changes in app.ts. */
  onStoreChange({ collection, before, after }: ChangeEvent): void {
    if (collection !== KEYS) return;
    const previous = before as KeyRecord | undefined;
    const current = after as KeyRecord | undefined;
    if (previous) {
      this.keyIdByHash.delete(previous.hash);
      if (previous.previous_hash) this.keyIdByHash.delete(previous.previous_hash);
    }
    if (current) this.addHashes(current);
    // A new key, or a rolled key's new secret, may be one that was cached as unknown.
    if (current && (!previous || previous.hash !== current.hash)) this.checks.clear();
  }

  private addHashes(key: KeyRecord): void {
    this.keyIdByHash.set(key.hash, key.id);
    if (key.previous_hash) this.keyIdByHash.set(key.previous_hash, key.id);
  }

  /** The live key and its user, or null when the key is missing, malformed, unknown or revoked. */
  authenticate(plainKey: string | null): Caller | null {
    if (!plainKey || plainKey.length > MAX_API_KEY_LENGTH) return null; // never hash what cannot be a key
    const hash = hashApiKey(plainKey);
    let keyId = this.checks.get(hash);
    if (keyId === undefined) {
      if (!isWellFormedApiKey(plainKey, this.brand)) return null;
      keyId = this.keyIdByHash.get(hash) ?? null;
      this.checks.set(hash, keyId);
    }
    if (keyId === null) return null;
    const key = this.store.get(KEYS, keyId);
    if (!key || secretRefusal(key, hash, this.now()) !== null) return null;
    const user = this.store.get(USERS, key.user_id);
    return user ? { key, user } : null;
  }

  /**
   * Why a refused key was refused, when it names a key that exists: it expired, or it is the
   * secret a roll replaced and its grace has ended (with the instant), or it was revoked. Null
   * for anything else. Asked only on the refusal path, so the accepted path pays nothing.
   */
  refusalOf(plainKey: string | null): { reason: SecretRefusal; at: string | null } | null {
    if (!plainKey || plainKey.length > MAX_API_KEY_LENGTH || !isWellFormedApiKey(plainKey, this.brand)) return null;
    const hash = hashApiKey(plainKey);
    const keyId = this.keyIdByHash.get(hash);
    const key = keyId === undefined ? undefined : this.store.get(KEYS, keyId);
    if (!key) return null;
    const reason = secretRefusal(key, hash, this.now());
    if (reason === 'expired') return { reason, at: key.expires_at ?? null };
    if (reason === 'rolled') return { reason, at: key.previous_hash === hash ? (key.previous_hash_expires_at ?? null) : null };
    return reason === null ? null : { reason, at: key.revoked_at };
  }
}
