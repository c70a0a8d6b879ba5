// What only many servers sharing one log need from it: following the others' writes, and
// acknowledging a write only once every running server has it (read-your-writes whichever
// server a client's next request reaches). The shared back-end (PostgresLog,
// src/backends/postgres/) implements this beside Log (log.ts); the store is given it only in
// that setup. With the file or memory-only log there is no other server and no such object:
// the store then never pulls, acknowledges a write as soon as it is durable, and is never stale.
//
// The contract:
//
// 1. pull(apply) hands over, in commit order, the writes other servers committed since the last
//    pull (ops with their version). The store calls it in its write queue, so nothing else
//    changes memory meanwhile: before re-deciding a write the log refused as a conflict, after
//    an append when `needsPull()` says others committed before it (their writes must be in
//    memory before the next decision), and when the `onOthersWrote` callback asks for it. It
//    never hands back writes this server appended itself.
//
// 2. onOthersWrote(callback) registers what the back-end calls when others wrote (a
//    notification, a reconnection, a periodic catch-up); the store then queues one pull.
//
// 3. untilAppliedEverywhere(version) resolves once every other running server has `version` in
//    memory (or can no longer answer requests); the store acknowledges a committed write only
//    then, without holding its write queue meanwhile.
//
// 4. staleness() says why this server must not answer now (it cannot vouch it holds every
//    acknowledged write), or null; problems() what keeps it from being ready (for /readyz).

import type { WriteOp } from './format.ts';

/** One write another server committed: its ops, all with one version. */
export interface PulledWrite {
  ops: readonly WriteOp[];
  version: number;
}

/** The many-instance seam of a shared log (points 1–4 above). */
export interface InstanceSync {
  /** Point 1: others' writes since the last pull, in commit order. */
  pull(apply: (write: PulledWrite) => void): Promise<void>;
  /** Point 1: after an append, true when others committed writes this server has not pulled yet. */
  needsPull(): boolean;
  /** Point 2: the callback called when others wrote (the store then pulls). */
  onOthersWrote(callback: () => void): void;
  /** Point 3: resolves once every other running server has applied `version`. */
  untilAppliedEverywhere(version: number): Promise<void>;
  /** Point 4: why this server must not answer now, or null. */
  staleness(): string | null;
  /** Point 4: what keeps this server from being ready (empty when nothing). */
  problems(): string[];
}
