// Portal sessions: a random 256-bit value in a cookie, known to the store only by its SHA-256
// (records.ts), so a session made on one instance is honoured by every instance sharing the
// database. A session ends after 24 h without use (idle), 7 days after sign-in (absolute), at
// sign-out, and whenever its user changes password, is suspended or erased; a user holds at most
// 20 (a new one ends the oldest). Use is recorded at most every few minutes, not on every
// request, so reading pages costs no writes.

import type { IncomingMessage } from 'node:http';
import type { Clock } from '../../clock.ts';
import { isoTime } from '../../clock.ts';
import { USERS, userStatus, type UserRecord } from '../../domain/records.ts';
import { HttpError } from '../../domain/errors.ts';
import type { SignedIn } from '../../http/route.ts';
import type { RecordReader, Store, WriteOp } from '../../store/store.ts';
import { SESSIONS, type SessionRecord } from '../../domain/account-records.ts';
import { cameOverHttps, type OriginSettings } from './same-origin.ts';
import { clearSessionCookie, sessionCookieOf, setSessionCookie } from './session-cookie.ts';
import { digestOf, isWellFormedSecret, newSecret } from './secrets.ts';
import { requestOrigin } from '../../http/request-origin.ts';

export const IDLE_TIMEOUT_MS = 24 * 60 * 60 * 1000;
export const ABSOLUTE_TIMEOUT_MS = 7 * 24 * 60 * 60 * 1000;
/** Use is written down when the last record of it is older than this. */
export const TOUCH_INTERVAL_MS = 5 * 60 * 1000;
/** Live sessions a user may hold at once; a new one ends the oldest. */
export const MAX_SESSIONS_PER_USER = 20;

export const SESSION_REQUIRED = 'Sign in first: this needs a portal session.';

/** A live session and its user as they were when the request arrived. */
export type { SignedIn } from '../../http/route.ts';

/** A new session: the ops that store it and the Set-Cookie header that hands it to the browser. */
export interface NewSession {
  readonly ops: WriteOp[];
  readonly sessionId: string;
  readonly setCookie: string;
}

export interface PortalSessionsOptions {
  store: Store;
  clock: Clock;
  origin: OriginSettings;
  warn: (message: string) => void;
  /** The client's address (TRUST_PROXY), kept on each new session with its user agent for the user's list of sessions. */
  clientAddress?: (req: IncomingMessage) => string;
}

export class PortalSessions {
  private readonly store: Store;
  private readonly clock: Clock;
  readonly origin: OriginSettings;
  private readonly warn: (message: string) => void;
  private readonly clientAddress: ((req: IncomingMessage) => string) | undefined;
  /** Sessions whose use is being written right now (one write each at a time). */
  private readonly touching = new Set<string>();

  constructor(options: PortalSessionsOptions) {
    this.store = options.store;
    this.clock = options.clock;
    this.origin = options.origin;
    this.warn = options.warn;
    this.clientAddress = options.clientAddress;
  }

  https(req: IncomingMessage): boolean {
    return cameOverHttps(req, this.origin);
  }

  /** The request's live session and its active user, or null; notes the use when due. */
  signedIn(req: IncomingMessage): SignedIn | null {
    const value = sessionCookieOf(req, this.https(req));
    if (value === null || !isWellFormedSecret(value)) return null;
    const sessionId = digestOf(value);
    const now = this.clock.now();
    const session = this.store.get(SESSIONS, sessionId);
    const user = session === undefined ? undefined : liveUserOf(this.store, session, now);
    if (session === undefined || user === undefined) return null;
    if (now - Date.parse(session.last_seen_at) >= TOUCH_INTERVAL_MS) this.touch(sessionId);
    return { sessionId, user };
  }

  /** Inside a write: the session's user as they are now; 401 when the session or its user is gone. */
  userAtCommit(reader: RecordReader, sessionId: string): UserRecord {
    const session = reader.get(SESSIONS, sessionId);
    const user = session === undefined ? undefined : liveUserOf(reader, session, this.clock.now());
    if (user === undefined) throw sessionRequired();
    return user;
  }

  /**
   * A session for `userId`, to be written with the sign-in (or password) change that makes it,
   * read through `reader` (the write's transaction). The session the browser had until now, if
   * any, ends in the same write: its cookie is replaced, and no session outlives its cookie.
   * A user keeps at most MAX_SESSIONS_PER_USER: the oldest end to make room (unless the caller
   * ends every other session in the same write anyway: `othersEnd`).
   */
  start(reader: RecordReader, req: IncomingMessage, userId: string, replacing: SignedIn | null, othersEnd = false): NewSession {
    const value = newSecret();
    const now = this.clock.now();
    const session: SessionRecord = {
      id: digestOf(value),
      user_id: userId,
      created_at: isoTime(now),
      last_seen_at: isoTime(now),
      expires_at: isoTime(now + ABSOLUTE_TIMEOUT_MS),
      ...(this.clientAddress === undefined ? {} : requestOrigin(req, this.clientAddress)),
    };
    const ended: WriteOp[] = replacing !== null && reader.get(SESSIONS, replacing.sessionId) !== undefined ? [{ op: 'del', collection: SESSIONS, id: replacing.sessionId }] : [];
    const evicted = othersEnd ? [] : oldestBeyondCap(reader, userId, replacing?.sessionId ?? null);
    return {
      ops: [...ended, ...evicted, { op: 'put', collection: SESSIONS, id: session.id, data: session }],
      sessionId: session.id,
      setCookie: setSessionCookie(value, this.https(req), ABSOLUTE_TIMEOUT_MS / 1000),
    };
  }

  /** The Set-Cookie header that makes the browser forget its session cookie. */
  clearCookie(req: IncomingMessage): string {
    return clearSessionCookie(this.https(req));
  }

  /** Deletes sessions past their idle or absolute end, and those of users no longer active. */
  async sweepExpired(): Promise<number> {
    const now = this.clock.now();
    const ended: string[] = [];
    for (const session of this.store.values(SESSIONS)) if (liveUserOf(this.store, session, now) === undefined) ended.push(session.id);
    if (ended.length === 0) return 0;
    // Decided on each session as it is then: one used meanwhile (a fresher last_seen_at) stays.
    return this.store.commit((tx) => {
      const ops: WriteOp[] = [];
      for (const id of ended) {
        const session = tx.get(SESSIONS, id);
        if (session !== undefined && liveUserOf(tx, session, now) === undefined) ops.push({ op: 'del', collection: SESSIONS, id });
      }
      return { ops, result: ops.length };
    });
  }

  /** Records the session's use, unless it ended meanwhile (never brings a deleted session back). */
  private touch(sessionId: string): void {
    if (this.touching.has(sessionId)) return;
    this.touching.add(sessionId);
    const now = isoTime(this.clock.now());
    this.store
      .commit((tx) => {
        const session = tx.get(SESSIONS, sessionId);
        if (session === undefined) return { ops: [], result: undefined };
        return { ops: [{ op: 'put', collection: SESSIONS, id: sessionId, data: { ...session, last_seen_at: now } }], result: undefined };
      })
      .catch((error: Error) => this.warn(`could not record a portal session's use: ${error.message}`))
      .finally(() => this.touching.delete(sessionId));
  }
}

/** Deletes the user's oldest sessions (but `keptId`, which the caller replaces) so that a new one makes no more than MAX_SESSIONS_PER_USER. */
function oldestBeyondCap(reader: RecordReader, userId: string, keptId: string | null): WriteOp[] {
  const held = [...reader.values(SESSIONS)].filter((session) => session.user_id === userId && session.id !== keptId);
  if (held.length < MAX_SESSIONS_PER_USER) return [];
  held.sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
  return held.slice(0, held.length - (MAX_SESSIONS_PER_USER - 1)).map((session) => ({ op: 'del', collection: SESSIONS, id: session.id }));
}

/** The user's live sessions (within their idle and absolute ends), newest first. */
export function liveSessionsOf(reader: RecordReader, userId: string, now: number): SessionRecord[] {
  return [...reader.values(SESSIONS)]
    .filter((session) => session.user_id === userId && liveUserOf(reader, session, now) !== undefined)
    .sort((a, b) => b.created_at.localeCompare(a.created_at) || a.id.localeCompare(b.id));
}

/**
 * The id a session is shown by: derived from the store's id (itself the SHA-256 of the cookie),
 * so neither the cookie nor the store's key for it is ever in an answer.
 */
export function publicSessionId(sessionId: string): string {
  return `ses_${digestOf(`session:${sessionId}`).slice(0, 24)}`;
}

/** The 401 of a portal route without a live session. */
export function sessionRequired(): HttpError {
  return new HttpError(401, SESSION_REQUIRED, { hint: 'POST /portal/v1/session with {"email", "password"} sets the session cookie.' });
}

/** The session's user when the session is within its idle and absolute ends and the user is active. */
function liveUserOf(reader: RecordReader, session: SessionRecord, now: number): UserRecord | undefined {
  if (now >= Date.parse(session.expires_at) || now - Date.parse(session.last_seen_at) >= IDLE_TIMEOUT_MS) return undefined;
  const user = reader.get(USERS, session.user_id);
  return user !== undefined && userStatus(user) === 'active' ? user : undefined;
}
