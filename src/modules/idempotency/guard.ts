// Idempotency-Key on POST, as Stripe does it: the first 2xx answer for (API key, Idempotency-Key)
// is stored in the same atomic write as the change it made; a repeat with the same request
// within 24 h gets that answer again and changes nothing; the same key with another request
// gets 422. Records live in the store, so they survive a restart. They are bounded in count
// too (IDEMPOTENCY_MAX_RECORDS, checked by each sweep): past it the oldest go first, so a
// steady stream of creates cannot fill memory with a day of answers.

import { createHash } from 'node:crypto';
import { IDEMPOTENCY, type IdempotencyRecord } from '../../domain/records.ts';
import type { IdempotencyClaim, PostIdempotency } from '../../http/key-context.ts';
import type { WriteOp } from '../../store/format.ts';
import type { RecordReader, Store } from '../../store/store.ts';
import { HttpError } from '../../domain/errors.ts';
import type { Reply } from '../../http/route.ts';

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/** One claimed key: its record's id, whose API key claimed it, and the hash of the request. */
interface Claim extends IdempotencyClaim {
  recordId: string;
  keyId: string;
  requestHash: string;
}

export class IdempotencyGuard implements PostIdempotency {
  private readonly store: Store;
  private readonly now: () => number;
  private readonly inFlight = new Set<string>();

  private readonly maxRecords: number;

  constructor(store: Store, now: () => number, maxRecords = Infinity) {
    this.store = store;
    this.now = now;
    this.maxRecords = maxRecords;
  }

  /** Either the stored answer to replay, or a claim to pass to recordOp/release. */
  claim(keyId: string, idempotencyKey: string, method: string, path: string, rawBody: Buffer): { replay: Reply } | { claim: Claim } {
    if (!/^[\x21-\x7e]{1,255}$/.test(idempotencyKey)) {
      throw new HttpError(400, 'The Idempotency-Key header must be 1 to 255 visible ASCII characters.');
    }
    const recordId = 'idem_' + sha256(`${keyId}\n${idempotencyKey}`).slice(0, 40);
    const requestHash = sha256(`${method} ${path}\n`, rawBody);
    const claim: Claim = {
      recordId,
      keyId,
      requestHash,
      recordedAnswer: (records) => this.recordedAnswer(records, claim),
      recordOp: (reply) => this.recordOp(claim, reply),
    };
    const replay = this.recordedAnswer(this.store, claim);
    if (replay !== null) return { replay };
    if (this.inFlight.has(recordId)) {
      throw new HttpError(409, 'A request with this Idempotency-Key is still being processed; retry in a moment.');
    }
    this.inFlight.add(recordId);
    return { claim };
  }

  /**
   * The answer already recorded for this claim's key within 24 h (422 for another request), or
   * null. Asked again when the write commits: with many instances, the same request may have
   * been answered by another instance since the claim (its record arrives through the store).
   */
  recordedAnswer(records: RecordReader, claim: Claim): Reply | null {
    const existing = records.get(IDEMPOTENCY, claim.recordId);
    if (!existing || Date.parse(existing.created_at) <= this.now() - IDEMPOTENCY_TTL_MS) return null;
    if (existing.request_hash !== claim.requestHash) {
      throw new HttpError(422, 'This Idempotency-Key was already used with a different request. Use a new key for a new request.');
    }
    return {
      status: existing.status,
      bytes: Buffer.from(existing.body),
      headers: { 'Idempotent-Replayed': 'true', ...(existing.cache_control ? { 'Cache-Control': existing.cache_control } : {}) },
    };
  }

  /** The op that remembers `reply` for `claim`, written with the change itself. */
  recordOp(claim: Claim, reply: Reply): WriteOp {
    const record: IdempotencyRecord = {
      id: claim.recordId,
      key_id: claim.keyId,
      request_hash: claim.requestHash,
      status: reply.status,
      body: reply.bytes ? reply.bytes.toString('utf8') : JSON.stringify(reply.body),
      // A replayed secret must stay out of caches as the first answer did.
      ...(typeof reply.headers?.['Cache-Control'] === 'string' ? { cache_control: reply.headers['Cache-Control'] } : {}),
      created_at: new Date(this.now()).toISOString(),
    };
    return { op: 'put', collection: IDEMPOTENCY, id: record.id, data: record };
  }

  release(claim: IdempotencyClaim): void {
    this.inFlight.delete((claim as Claim).recordId);
  }

  /**
   * Deletes records older than 24 h (they are ignored once expired anyway) and, past the
   * maximum count, the oldest of the rest; run now and then.
   */
  async sweepExpired(): Promise<number> {
    let cutoff = this.now() - IDEMPOTENCY_TTL_MS;
    const count = this.store.size(IDEMPOTENCY);
    if (count > this.maxRecords) {
      // The created_at of the newest record to drop: everything at or before it goes.
      const times = [...this.store.values(IDEMPOTENCY)].map((record) => Date.parse(record.created_at)).sort((left, right) => left - right);
      cutoff = Math.max(cutoff, times[count - this.maxRecords - 1]!);
    }
    const isExpired = (record: IdempotencyRecord | undefined): boolean => record !== undefined && Date.parse(record.created_at) <= cutoff;
    const expired: string[] = [];
    for (const record of this.store.values(IDEMPOTENCY)) if (isExpired(record)) expired.push(record.id);
    let swept = 0;
    for (let start = 0; start < expired.length; start += 1000) {
      const ids = expired.slice(start, start + 1000);
      // Decided when it commits: a record written again meanwhile (the same key reused) is kept.
      swept += await this.store.commit((tx) => {
        const ops: WriteOp[] = ids.filter((id) => isExpired(tx.get(IDEMPOTENCY, id))).map((id) => ({ op: 'del', collection: IDEMPOTENCY, id }));
        return { ops, result: ops.length };
      });
    }
    return swept;
  }
}

function sha256(...parts: Array<string | Buffer>): string {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part);
  return hash.digest('hex');
}
