// A write is authorized against the key's state when it commits, not only when its headers
// arrived: inside the write's decision the key and its user are read again, so a key revoked,
// or stripped of the permission, while the request was on its way is refused (401/403) and a
// user's role is the one she has at that moment.

import { KEYS, USERS } from '../domain/records.ts';
import { HttpError } from '../domain/errors.ts';
import type { RecordReader } from '../store/collections.ts';
import { AUTH_ERROR, AUTH_HINT, type Caller } from './authenticate.ts';
import { assertNotSuspended } from './suspension.ts';
import { permissionSetOf, requiredEntries, type PermissionRoute } from './permissions.ts';

/** The 403 for a key whose permissions do not cover the route. */
export function permissionRefused(route: PermissionRoute): HttpError {
  return new HttpError(403, `This API key may not ${route.method} ${route.pattern}.`, { required: requiredEntries(route) });
}

/** The caller as the records are now; throws 401 (revoked, gone) or 403 (suspended, permission lost). */
export function callerAtCommit(reader: RecordReader, keyId: string, route: PermissionRoute, path: string): Caller {
  const key = reader.get(KEYS, keyId);
  const user = key === undefined ? undefined : reader.get(USERS, key.user_id);
  if (key === undefined || key.revoked_at !== null || user === undefined) throw new HttpError(401, AUTH_ERROR, { hint: AUTH_HINT });
  // Suspended while the request was on its way: refused like at the door.
  assertNotSuspended(user);
  if (!permissionSetOf(key.permissions).allows(route, path)) throw permissionRefused(route);
  return { key, user };
}
