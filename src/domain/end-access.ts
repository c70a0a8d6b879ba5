// What ends a user's portal access, for the operator's writes that must do it in the same store
// write as their change: a suspension ends every session (ended, not paused: an unsuspension
// brings none back); an erasure also forgets the password, any open invitation, the second
// factor and any sign-in ticket.

import type { RecordReader, WriteOp } from '../store/store.ts';
import { CREDENTIALS, INVITATIONS, SESSIONS, SIGN_IN_TICKETS, TWO_FACTOR } from './account-records.ts';

/** Deletes every session of `userId` but `exceptSessionId`; read through `reader` (a write's transaction). */
export function endSessionsOps(reader: RecordReader, userId: string, exceptSessionId: string | null = null): WriteOp[] {
  const ops: WriteOp[] = [];
  for (const session of reader.values(SESSIONS)) {
    if (session.user_id === userId && session.id !== exceptSessionId) ops.push({ op: 'del', collection: SESSIONS, id: session.id });
  }
  return ops;
}

/** Every portal record of `userId`: sessions, stored password, open invitation, second factor, tickets. */
export function forgetPortalAccountOps(reader: RecordReader, userId: string): WriteOp[] {
  const ops = endSessionsOps(reader, userId);
  if (reader.get(CREDENTIALS, userId) !== undefined) ops.push({ op: 'del', collection: CREDENTIALS, id: userId });
  if (reader.get(INVITATIONS, userId) !== undefined) ops.push({ op: 'del', collection: INVITATIONS, id: userId });
  if (reader.get(TWO_FACTOR, userId) !== undefined) ops.push({ op: 'del', collection: TWO_FACTOR, id: userId });
  for (const ticket of reader.values(SIGN_IN_TICKETS)) if (ticket.user_id === userId) ops.push({ op: 'del', collection: SIGN_IN_TICKETS, id: ticket.id });
  return ops;
}
