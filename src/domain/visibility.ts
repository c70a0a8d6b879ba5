// Who sees what once the operator has stepped in: a suspended (or erased) user's listings are
// hidden from everyone else, a removed listing is seen by its owner alone, and a suspended
// user's webhooks receive nothing (its keys are refused by src/auth/suspension.ts). One place, so lists, look-ups and events agree.

import { USERS, userStatus, type ListingRecord } from './records.ts';
import type { RecordReader } from '../store/store.ts';

/** True when the user is suspended or erased (an unknown id is not held back). */
export function isUserBarred(store: RecordReader, userId: string): boolean {
  const user = store.get(USERS, userId);
  return user !== undefined && userStatus(user) !== 'active';
}

/** Whether `viewerId` may see `listing` by id (the owner always may, unless it is gone). */
export function isListingVisibleTo(store: RecordReader, listing: ListingRecord, viewerId: string): boolean {
  if (listing.owner_id === viewerId) return true;
  if (listing.status === 'removed') return false;
  return !isUserBarred(store, listing.owner_id);
}
