// The context of a /v1 request, made by the v1 gate (src/pipeline/v1-gate.ts). Its steps record
// here the key that called (step 1), the route matched, whose permission a write checks again
// (step 3), and an Idempotency-Key's claim. Its `commit` decides a write on the key and user as
// they are when the write goes in (a key revoked or narrowed meanwhile is refused), and records
// a claimed Idempotency-Key's answer in the same write.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Caller } from '../auth/authenticate.ts';
import { callerAtCommit } from '../auth/authorize-commit.ts';
import type { PermissionRoute } from '../auth/permissions.ts';
import type { KeyRecord, UserRecord } from '../domain/records.ts';
import type { Decision, Store, Transaction } from '../store/store.ts';
import { BaseContext } from './context.ts';
import type { IdempotencyClaim, IdempotencyGuard } from './idempotency.ts';
import type { KeyContext as KeyContextShape, Reply } from './route.ts';

/** What a keyed write goes through: the store, and the idempotency records of POSTs. */
export interface KeyCommitServices {
  store: Store;
  idempotency: IdempotencyGuard;
}

export class KeyContext extends BaseContext implements KeyContextShape {
  /** Step 1 (key): the key and its user as the headers found them (the request is counted and charged to this key); null before step 1 or when refused there. */
  caller: Caller | null = null;
  /** The store's memoryGeneration() when `caller` was read (v1-gate.ts reads the key again once memory moved on). */
  keyReadAt = 0;
  /** Step 3 (route): the route matched, whose permission a write checks again when it commits. */
  apiRoute: PermissionRoute | null = null;
  /** A POST with Idempotency-Key that claimed its key: its answer is recorded with its write. */
  idempotencyClaim: IdempotencyClaim | null = null;

  private readonly services: KeyCommitServices;

  constructor(req: IncomingMessage, res: ServerResponse, services: KeyCommitServices) {
    super(req, res);
    this.services = services;
  }

  /** The caller's key; handlers run only after step 1 found one. */
  get key(): KeyRecord {
    return this.knownCaller().key;
  }

  get user(): UserRecord {
    return this.knownCaller().user;
  }

  commit(decide: (tx: Transaction, caller: Caller) => Decision<Reply>): Promise<Reply> {
    const { store, idempotency } = this.services;
    const { caller, apiRoute: route, idempotencyClaim: claim, path } = this;
    if (caller === null || route === null) return Promise.reject(new Error('A /v1 write was committed before its key and route were checked.'));
    return store.commit((tx) => {
      // Answered meanwhile (by another instance sharing the database): that answer, nothing written.
      const recorded = claim ? idempotency.recordedAnswer(tx, claim) : null;
      if (recorded !== null) return { ops: [], result: recorded };
      // The key and its user are part of what a keyed write is decided on.
      const { ops, result: reply } = decide(tx, callerAtCommit(tx, caller.key.id, route, path));
      return { ops: claim && reply.status < 300 ? [...ops, idempotency.recordOp(claim, reply)] : ops, result: reply };
    });
  }

  private knownCaller(): Caller {
    if (this.caller === null) throw new Error('A /v1 handler ran before step 1 found its key.');
    return this.caller;
  }
}
