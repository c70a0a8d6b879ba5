// The context of a /portal/v1 route that needs a signed-in user, made by the portal gate
// (src/pipeline/portal-gate.ts), which records the live session before the handler runs (and
// answers 401 without one). Its `commit` decides a write on the session's user as she is when
// the write goes in: a session ended meanwhile (sign-out, password change, expiry) or a user
// suspended or erased is refused with 401.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { UserRecord } from '../../domain/records.ts';
import type { Decision, Store, Transaction } from '../../store/store.ts';
import { BaseContext } from '../../http/context.ts';
import type { PortalContext as PortalContextShape, Reply, SignedIn } from '../../http/route.ts';

/** What a signed-in portal write goes through: the store, and the sessions to read the user again. */
export interface SessionCommitServices {
  store: Store;
  /** Reads a portal session's user again inside a write (401 when it ended). */
  sessions: { userAtCommit(reader: Transaction, sessionId: string): UserRecord };
}

export class PortalContext extends BaseContext implements PortalContextShape {
  /** The live session the cookie names, and its user; recorded by the gate before the handler runs. */
  signedIn: SignedIn | null = null;

  private readonly services: SessionCommitServices;

  constructor(req: IncomingMessage, res: ServerResponse, services: SessionCommitServices) {
    super(req, res);
    this.services = services;
  }

  /** The signed-in user as of the request's arrival (fine for reads). */
  get user(): UserRecord {
    return this.session().user;
  }

  commit(decide: (tx: Transaction, user: UserRecord) => Decision<Reply>): Promise<Reply> {
    const { store, sessions } = this.services;
    const { signedIn } = this;
    if (signedIn === null) return Promise.reject(new Error('A portal write was committed before its session was checked.'));
    return store.commit((tx) => decide(tx, sessions.userAtCommit(tx, signedIn.sessionId)));
  }

  private session(): SignedIn {
    if (this.signedIn === null) throw new Error('A signed-in portal handler ran before its session was checked.');
    return this.signedIn;
  }
}
