// Each user's event log: every event the user's webhooks would receive (listing and profile
// events, the same payload and id as a webhook delivery of it), kept EVENT_RETENTION_DAYS
// whether or not a webhook is registered, for GET /v1/events and GET /v1/events/stream.
//
// Storage: one record per event in its own collection (EVENT_LOG), written in the same write as
// the change that made it (through the outbox's eventOps), so an acknowledged change never lacks
// its logged event. It is kept apart from the webhook outbox's EVENTS records, which live only
// while a delivery or outcome names them (the two lifetimes differ), but the payload is stored
// once: while an EVENTS record of the same id exists it holds the payload and the log record is
// a small one without it; the write deleting the EVENTS record moves the payload into the log
// record (outbox.ts). An event no webhook receives has its payload in the log record at once.
//
// Order: each record carries `seq`, and each owner's events are read in seq order. How the
// numbers are given depends on whether other instances write to the same store (decided once,
// in composition/core.ts):
//
// - One process (the file or memory store): one counter for all owners, taken as the write is
//   decided. Writes are decided and applied one after the other in this process, so seq order is
//   the order the events reached the store, and many writes of one owner share a batch.
//
// - Several instances on one database (`shared`): a per-process counter would give two
//   instances the same numbers, and the order would differ from instance to instance. There the
//   number is the event's place in its owner's log (1, 2, 3…), given in the write itself: the
//   write reads the owner's head record (EVENT_LOG_HEADS: the last number given) through its
//   transaction and rewrites it. Two writes logging events for one owner therefore never take the
//   same number and never skip one, whichever instances decide them: in one batch the second
//   reads a record the first changes and is decided in the next batch; across instances the
//   store refuses the one decided on an older head as a conflict and decides it again
//   (store/transaction.ts). Nothing depends on a version the instances share, only on the store
//   keeping writes serializable. The cost: one owner's events take one write per batch (as
//   events for an owner with webhooks already do, through their targets record).
//   Reading in order (readyAfter): a number missing below a kept one is then an event already
//   written that this instance has not applied yet; readers stop before it and are woken when it
//   arrives, so a stream never sends an event after a later one, and a client resuming on any
//   instance with the id it last got misses nothing and gets nothing twice (instances apply each
//   other's writes in no common order). Numbers are missing for good only up to the head's
//   swept_through (the sweep deletes each owner's oldest first and says how far, in the same
//   write) and before the first number a head gave (first_seq: events numbered by one process).
//
// In memory: each owner's records sorted by seq (a reference to the stored record, nothing more).
//
// Bounded: sweep() deletes every record older than the retention (app.ts runs it hourly, with
// the other retention sweeps), and erasure deletes the user's; so memory and the log's live
// records are at most EVENT_RETENTION_DAYS (+1 h) of events.

import type { Clock } from '../clock.ts';
import { EVENT_LOG, EVENT_LOG_HEADS, EVENTS } from '../domain/records.ts';
import type { EventLogHeadRecord, EventLogRecord } from '../domain/webhook-records.ts';
import type { EventType } from '../domain/events.ts';
import type { WriteOp } from '../store/format.ts';
import type { Store } from '../store/store.ts';
import type { RecordChange, RecordReader } from '../store/collections.ts';

const DAY_MS = 24 * 60 * 60 * 1000;
/** Deletes per write of a sweep, so one sweep of a large backlog does not make one huge write. */
const SWEEP_CHUNK = 1_000;

/** Told of each event newly logged for an owner. */
export type EventLogListener = (record: EventLogRecord) => void;

export class EventLog {
  private readonly store: Store;
  private readonly clock: Clock;
  private readonly retentionMs: number;
  /** Whether other instances write to the same store: numbers then come from each owner's head (see the header). */
  private readonly shared: boolean;
  /** One process: the next number of the one counter. */
  private nextSeq = 1;
  /** The heads a decision has already moved, by owner: a write logging two events for one owner numbers them apart. */
  private readonly headsDecided = new WeakMap<RecordReader, Map<string, EventLogHeadRecord>>();
  /** Each owner's records, ascending by seq. */
  private readonly byOwner = new Map<string, EventLogRecord[]>();
  private readonly listeners = new Map<string, Set<EventLogListener>>();

  constructor(store: Store, clock: Clock, retentionDays: number, options: { shared: boolean }) {
    this.store = store;
    this.clock = clock;
    this.retentionMs = retentionDays * DAY_MS;
    this.shared = options.shared;
    const all = [...store.values(EVENT_LOG)].sort((a, b) => a.seq - b.seq);
    for (const record of all) this.insert(record);
    if (all.length > 0) this.nextSeq = all[all.length - 1]!.seq + 1;
  }

  /**
   * The ops that log an event for `ownerId`, decided through `tx`: the record with its number
   * (and, when shared, the owner's head moved on by one). `eventId` is that of the webhook event,
   * so a reader of the log and a receiver see one event. `payload` null: the EVENTS record
   * written in the same write holds it.
   */
  recordOps(tx: RecordReader, ownerId: string, eventId: string, type: EventType, createdAt: string, payload: string | null): WriteOp[] {
    const ops: WriteOp[] = [];
    let seq: number;
    if (this.shared) {
      const head = this.nextHead(tx, ownerId);
      ops.push({ op: 'put', collection: EVENT_LOG_HEADS, id: ownerId, data: head });
      seq = head.last_seq;
    } else {
      seq = this.nextSeq++;
    }
    const base = { id: eventId, owner_id: ownerId, type, created_at: createdAt, seq };
    const record: EventLogRecord = payload === null ? base : { ...base, payload };
    ops.push({ op: 'put', collection: EVENT_LOG, id: eventId, data: record });
    return ops;
  }

  /** The owner's head once this event is numbered: read through `tx`, or as this decision already moved it. */
  private nextHead(tx: RecordReader, ownerId: string): EventLogHeadRecord {
    let decided = this.headsDecided.get(tx);
    if (decided === undefined) {
      decided = new Map();
      this.headsDecided.set(tx, decided);
    }
    const head = decided.get(ownerId) ?? tx.get(EVENT_LOG_HEADS, ownerId);
    // Without a head, or behind events a single process numbered since (the data moved between
    // back-ends), numbering starts again after the newest kept event.
    const kept = this.lastKeptSeq(ownerId);
    const continues = head !== undefined && head.last_seq >= kept;
    const seq = (continues ? head.last_seq : kept) + 1;
    const next: EventLogHeadRecord = { ...head, id: ownerId, last_seq: seq, first_seq: continues ? head.first_seq : seq };
    decided.set(ownerId, next);
    return next;
  }

  /** The event's JSON body: its own, or the webhook event record's while that holds it (null if neither: never expected). */
  payloadOf(record: EventLogRecord): string | null {
    return record.payload ?? this.store.get(EVENTS, record.id)?.payload ?? null;
  }

  /** The owner's event `eventId`, or undefined when unknown, no longer kept, or another user's. */
  find(ownerId: string, eventId: string): EventLogRecord | undefined {
    const record = this.store.get(EVENT_LOG, eventId);
    return record !== undefined && record.owner_id === ownerId ? record : undefined;
  }

  /**
   * Up to `limit` of the owner's events after seq `afterSeq` (0: from the oldest kept), oldest
   * first, stopping before a number not applied here yet (see the header): what follows it is
   * read once it arrives.
   */
  readyAfter(ownerId: string, afterSeq: number, limit: number): EventLogRecord[] {
    const records = this.byOwner.get(ownerId);
    if (records === undefined) return [];
    const start = firstAbove(records, afterSeq);
    // One process applies its events in seq order: a missing number is never still to come.
    const head = this.shared ? this.store.get(EVENT_LOG_HEADS, ownerId) : undefined;
    const ready: EventLogRecord[] = [];
    let previous = afterSeq;
    for (let index = start; index < records.length && ready.length < limit; index += 1) {
      const record = records[index]!;
      if (record.seq > previous + 1 && head !== undefined && mayStillArrive(head, record.seq - 1)) break;
      ready.push(record);
      previous = record.seq;
    }
    return ready;
  }

  /** How many events are kept for `ownerId`. */
  countOf(ownerId: string): number {
    return this.byOwner.get(ownerId)?.length ?? 0;
  }

  /** Calls `listener` for each event logged for `ownerId` from now on; returns the unsubscribe. */
  subscribe(ownerId: string, listener: EventLogListener): () => void {
    let set = this.listeners.get(ownerId);
    if (set === undefined) {
      set = new Set();
      this.listeners.set(ownerId, set);
    }
    set.add(listener);
    return () => {
      const current = this.listeners.get(ownerId);
      current?.delete(listener);
      if (current?.size === 0) this.listeners.delete(ownerId);
    };
  }

  /** Keeps the per-owner order current and tells subscribers; wired to the store's changes in composition/core.ts. */
  onStoreChange(change: RecordChange<EventLogRecord>): void {
    const { before, after } = change;
    if (before !== undefined) this.remove(before);
    if (after === undefined) return;
    this.insert(after);
    if (after.seq >= this.nextSeq) this.nextSeq = after.seq + 1;
    // The payload moved in from the webhook event record: not a new event.
    if (before !== undefined) return;
    // Told once the whole write is applied, not in the middle of it: the owner's head, written
    // with the record, may be applied after it (another instance's write arrives in its own
    // order of ops), and a reader woken before would take the record for one not numbered by it.
    queueMicrotask(() => {
      for (const listener of this.listeners.get(after.owner_id) ?? []) {
        try {
          listener(after);
        } catch {
          // A stream's failure is its own (it ends itself); the others are still told.
        }
      }
    });
  }

  /** Deletes every event older than the retention; returns how many. */
  async sweep(): Promise<number> {
    const cutoffMs = this.clock.now() - this.retentionMs;
    const old: string[] = [];
    for (const records of this.byOwner.values()) {
      for (const record of records) {
        if (Date.parse(record.created_at) >= cutoffMs) break;
        old.push(record.id);
      }
    }
    let deleted = 0;
    for (let i = 0; i < old.length; i += SWEEP_CHUNK) {
      const chunk = old.slice(i, i + SWEEP_CHUNK);
      deleted += await this.store.commit((tx) => {
        const ops: WriteOp[] = [];
        /** Shared: the highest number deleted per owner, told to readers through the owner's head. */
        const sweptThrough = new Map<string, number>();
        for (const id of chunk) {
          const record = tx.get(EVENT_LOG, id);
          if (record === undefined) continue;
          ops.push({ op: 'del', collection: EVENT_LOG, id });
          if (this.shared) sweptThrough.set(record.owner_id, Math.max(sweptThrough.get(record.owner_id) ?? 0, record.seq));
        }
        const deletes = ops.length;
        for (const [ownerId, seq] of sweptThrough) {
          const head = tx.get(EVENT_LOG_HEADS, ownerId);
          if (head === undefined || seq <= (head.swept_through ?? 0)) continue;
          const moved: EventLogHeadRecord = { ...head, swept_through: seq };
          ops.push({ op: 'put', collection: EVENT_LOG_HEADS, id: ownerId, data: moved });
        }
        return { ops, result: deletes };
      });
    }
    return deleted;
  }

  /** The seq of the owner's newest kept event (0 when none). */
  private lastKeptSeq(ownerId: string): number {
    const records = this.byOwner.get(ownerId);
    return records?.[records.length - 1]?.seq ?? 0;
  }

  private insert(record: EventLogRecord): void {
    let records = this.byOwner.get(record.owner_id);
    if (records === undefined) {
      records = [];
      this.byOwner.set(record.owner_id, records);
    }
    const last = records[records.length - 1];
    if (last === undefined || last.seq < record.seq) records.push(record);
    else records.splice(firstAbove(records, record.seq - 1), 0, record);
  }

  private remove(record: EventLogRecord): void {
    const records = this.byOwner.get(record.owner_id);
    if (records === undefined) return;
    // The sweep removes the oldest first: usually the head.
    const index = records[0]?.id === record.id ? 0 : firstAbove(records, record.seq - 1);
    if (records[index]?.id === record.id) records.splice(index, 1);
    if (records.length === 0) this.byOwner.delete(record.owner_id);
  }
}

/**
 * Whether the owner's event `seq`, not applied here, may still arrive: numbered by the head
 * (not before it) and not swept. Only then is it written elsewhere and on its way.
 */
function mayStillArrive(head: EventLogHeadRecord, seq: number): boolean {
  return seq >= head.first_seq && seq > (head.swept_through ?? 0);
}

/** The index of the first record whose seq is above `seq` (records ascending by seq). */
function firstAbove(records: readonly EventLogRecord[], seq: number): number {
  let low = 0;
  let high = records.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (records[middle]!.seq <= seq) low = middle + 1;
    else high = middle;
  }
  return low;
}
