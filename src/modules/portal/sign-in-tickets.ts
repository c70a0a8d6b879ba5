// Sign-in tickets: after the right password of an account with two-factor sign-in, the browser
// gets a ticket instead of a session, and trades it with a code for the session. A ticket is a
// random 256-bit value known to the store by its SHA-256, valid 5 minutes, used once (deleted in
// the write that starts the session) and voided by a password change. A user holds at most a
// few at once (a new one ends the oldest), and expired ones are swept, so they cannot pile up.

import type { Clock } from '../../clock.ts';
import { isoTime } from '../../clock.ts';
import type { RecordReader, Store, WriteOp } from '../../store/store.ts';
import { CREDENTIALS, SIGN_IN_TICKETS, type SignInTicketRecord } from '../../domain/account-records.ts';
import { digestOf, isWellFormedSecret, newSecret } from './secrets.ts';

export const TICKET_LIFETIME_MS = 5 * 60 * 1000;
export const MAX_TICKETS_PER_USER = 5;

/** A new ticket for `userId` (the value, given to the browser once) and the ops that store it. */
export function newTicket(reader: RecordReader, userId: string, passwordUpdatedAt: string, now: number): { ticket: string; ops: WriteOp[] } {
  const ticket = newSecret();
  const record: SignInTicketRecord = { id: digestOf(ticket), user_id: userId, password_updated_at: passwordUpdatedAt, created_at: isoTime(now), expires_at: isoTime(now + TICKET_LIFETIME_MS) };
  const held = ticketsOf(reader, userId).sort((a, b) => a.created_at.localeCompare(b.created_at));
  const ended = held.slice(0, Math.max(0, held.length - (MAX_TICKETS_PER_USER - 1)));
  return { ticket, ops: [...ended.map((old): WriteOp => ({ op: 'del', collection: SIGN_IN_TICKETS, id: old.id })), { op: 'put', collection: SIGN_IN_TICKETS, id: record.id, data: record }] };
}

/** The live ticket `ticket` names, or undefined (malformed, unknown, used, expired, or its password changed since). */
export function liveTicket(reader: RecordReader, ticket: unknown, now: number): SignInTicketRecord | undefined {
  if (typeof ticket !== 'string' || !isWellFormedSecret(ticket)) return undefined;
  const record = reader.get(SIGN_IN_TICKETS, digestOf(ticket));
  if (record === undefined || now >= Date.parse(record.expires_at)) return undefined;
  return reader.get(CREDENTIALS, record.user_id)?.updated_at === record.password_updated_at ? record : undefined;
}

/** Deletes every ticket of `userId` (two-factor turned off or reset, the user erased). */
export function endTicketsOps(reader: RecordReader, userId: string): WriteOp[] {
  return ticketsOf(reader, userId).map((ticket) => ({ op: 'del', collection: SIGN_IN_TICKETS, id: ticket.id }));
}

/** Deletes expired tickets; answers how many. */
export async function sweepExpiredTickets(store: Store, clock: Clock): Promise<number> {
  const now = clock.now();
  const expired = [...store.values(SIGN_IN_TICKETS)].filter((ticket) => now >= Date.parse(ticket.expires_at)).map((ticket) => ticket.id);
  if (expired.length === 0) return 0;
  return store.commit((tx) => {
    const ops: WriteOp[] = expired.filter((id) => tx.get(SIGN_IN_TICKETS, id) !== undefined).map((id) => ({ op: 'del', collection: SIGN_IN_TICKETS, id }));
    return { ops, result: ops.length };
  });
}

function ticketsOf(reader: RecordReader, userId: string): SignInTicketRecord[] {
  return [...reader.values(SIGN_IN_TICKETS)].filter((ticket) => ticket.user_id === userId);
}
