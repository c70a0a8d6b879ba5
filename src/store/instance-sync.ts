// What only many servers sharing one log need from it: following the others' writes, and
// read-your-writes whichever server a client's next request reaches. The shared back-end
// (PostgresLog, src/backends/postgres/) implements this beside Log (log.ts); the store is given
// it only in that setup. With the file or memory-only log there is no other server and no such
// object: the store then never pulls, acknowledges a write as soon as it is durable, and is
// never behind.
//
// The promise is kept at read time, not at write time (the idea of Raft's ReadIndex): a writer
// does not wait for the others to have its write; it raises a commit watermark and answers, and
// every request first learns the watermark and, when its server has applied less, catches up
// before answering (or answers 503 when it cannot within a bound).
//
// The contract:
//
// 1. pull(apply) hands over the writes other servers committed since the last pull (ops with a
//    version, the version this server's memory gives them). The store calls it in its write
//    queue, so nothing else changes memory meanwhile: before re-deciding a write the log refused
//    as a conflict, and to catch up (a request behind the watermark, the `onOthersWrote`
//    callback). It never hands back writes this server appended itself.
//
// 2. onOthersWrote(callback) registers what the back-end calls when others may have written (a
//    periodic catch-up); the store then queues one pull.
//
// 3. published(version) resolves once this server's writes up to `version` are in the commit
//    watermark (every server's next request will catch up with them); the store acknowledges a
//    committed write only then, without holding its write queue meanwhile. It rejects when that
//    cannot be told: the write is then answered as failed (it may still have committed).
//
// 4. watermark() reads the commit watermark now (what every server has committed and
//    acknowledged); covers(watermark) says whether this server's memory holds all of it. A
//    watermark a request already holds (the rate limiter's reply carries one) is used as is when
//    `trusts` says it was read from a source that cannot have gone back in time.
//
// 5. problems() says what keeps this server from being ready (for /readyz).
//
// 6. orderedBelow() says below which `seq` the order of ordered records (log.ts, point 8) is
//    settled here: every such record with a lower `seq` that will ever commit is in this
//    server's memory, so a reader that serves them in `seq` order never learns of one that
//    belongs before what it served. Each pull moves it on (a pull then reads everything settled).

import type { WriteOp } from './format.ts';

/** One write another server committed: its ops, all with one version. */
export interface PulledWrite {
  ops: readonly WriteOp[];
  version: number;
}

/** How far each writer's slot of the log has committed: slot → its last sequence. */
export type Watermark = ReadonlyMap<string, number>;

/** The many-instance seam of a shared log (points 1–5 above). */
export interface InstanceSync {
  /** Point 1: others' writes since the last pull. */
  pull(apply: (write: PulledWrite) => void): Promise<void>;
  /** Point 2: the callback called when others may have written (the store then pulls). */
  onOthersWrote(callback: () => void): void;
  /** Point 3: resolves once this server's writes up to `version` are in the watermark. */
  published(version: number): Promise<void>;
  /** Point 4: the watermark now. */
  watermark(): Promise<Watermark>;
  /** Point 4: a watermark read elsewhere (the limiter's reply) may be used as is. */
  trusts(watermark: Watermark): boolean;
  /** Point 4: this server's memory holds every write the watermark names. */
  covers(watermark: Watermark): boolean;
  /** Point 5: what keeps this server from being ready (empty when nothing). */
  problems(): string[];
  /** Point 6: ordered records below this `seq` are all here. */
  orderedBelow(): number;
}
