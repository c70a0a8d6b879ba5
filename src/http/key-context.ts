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
import type { RateDecision } from '../limits/sliding-window.ts';
import type { WriteOp } from '../store/format.ts';
import type { Watermark } from '../store/instance-sync.ts';
import type { Decision, RecordReader, Store, Transaction } from '../store/store.ts';
import { BaseContext } from './context.ts';
import type { KeyContext as KeyContextShape, Reply } from './route.ts';

/** What a keyed write goes through. */
export interface KeyCommitServices {
  store: Store;
}

/** Idempotency-Key on POST: the idempotency module's (src/modules/idempotency/); without it the header is not read. */
export interface PostIdempotency {
  /** The stored answer to replay, or the claim of a new key (400 for a malformed key, 409 while it runs, 422 for another request). */
  claim(keyId: string, idempotencyKey: string, method: string, path: string, rawBody: Buffer): { replay: Reply } | { claim: IdempotencyClaim };
  /** The claimed request is over (answered or failed): its key may be claimed again. */
  release(claim: IdempotencyClaim): void;
}

/** A POST's claimed Idempotency-Key, whose answer is recorded in the same write as its change. */
export interface IdempotencyClaim {
  /** The answer recorded for this key meanwhile (another instance may have answered it), or null; 422 for another request. */
  recordedAnswer(records: RecordReader): Reply | null;
  /** The op that remembers `reply`, written with the change itself. */
  recordOp(reply: Reply): WriteOp;
}

export class KeyContext extends BaseContext implements KeyContextShape {
  /** Step 1 (key): the key and its user as the headers found them (the request is counted and charged to this key); null before step 1 or when refused there. */
  caller: Caller | null = null;
  /** The store's memoryGeneration() when `caller` was read (v1-gate.ts reads the key again once memory moved on). */
  keyReadAt = 0;
  /** A watermark the gate did not wait for (a route checked at its commit): the commit's refusals must cover it. */
  freshAs: Watermark | undefined = undefined;
  /**
   * Set by the gate for a write it decided without waiting for a catch-up: the rate limit as the
   * key stands at commit (a limit lowered on another instance a moment ago). `over` gives the
   * decision under the key's current limit when that refuses; `refuse` answers it (429).
   */
  limitAtCommit: { over: (key: KeyRecord) => RateDecision | null; refuse: (decision: RateDecision) => Reply } | null = null;
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
    const { store } = this.services;
    const { caller, apiRoute: route, idempotencyClaim: claim, path } = this;
    if (caller === null || route === null) return Promise.reject(new Error('A /v1 write was committed before its key and route were checked.'));
    const limit = this.limitAtCommit;
    let overLimit: RateDecision | null = null;
    const committed = store.commit((tx) => {
      overLimit = null;
      // Answered meanwhile (by another instance sharing the database): that answer, nothing written.
      const recorded = claim ? claim.recordedAnswer(tx) : null;
      if (recorded !== null) return { ops: [], result: recorded };
      // The key and its user are part of what a keyed write is decided on.
      const callerNow = callerAtCommit(tx, caller.key.id, route, path);
      overLimit = limit?.over(callerNow.key) ?? null;
      if (overLimit !== null) return { ops: [], result: null };
      const { ops, result: reply } = decide(tx, callerNow);
      return { ops: claim && reply.status < 300 ? [...ops, claim.recordOp(reply)] : ops, result: reply };
    }, this.freshAs === undefined ? {} : { freshAs: this.freshAs });
    // The refusal is answered once it is final (a decision made behind is made again after a catch-up).
    return committed.then((reply) => (overLimit !== null && limit !== null ? limit.refuse(overLimit) : reply!));
  }

  private knownCaller(): Caller {
    if (this.caller === null) throw new Error('A /v1 handler ran before step 1 found its key.');
    return this.caller;
  }
}
