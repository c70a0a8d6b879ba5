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
// record (src/webhooks/outbox.ts). An event no webhook receives has its payload in the log record at once.
//
// Order: each record carries `seq`, an ordered record of the store (src/store/log.ts, point 8).
// With one server it is taken from one counter as the write is decided: writes are decided and
// applied one after the other, so seq order is the order the events reached the store, and
// after a restart the counter continues from the highest kept. Where many servers share
// PostgreSQL the commit sets it instead, the same on every server, and a server learns only by
// its next catch-up that no event can still commit below one it holds: readers are served only
// what the store says is settled (`store.orderedBelow()`), and are woken again after each
// catch-up. So every server serves one order, and a cursor never passes an event still to come.
// In memory: each owner's records sorted by seq (a reference to the stored record, nothing more).
//
// Bounded: sweep() deletes every record older than the retention (index.ts runs it hourly, as
// the other retention sweeps), and erasure deletes the user's; so memory and the log's live
// records are at most EVENT_RETENTION_DAYS (+1 h) of events.

import type { Clock } from '../../clock.ts';
import { EVENT_LOG, EVENTS } from '../../domain/records.ts';
import type { EventLogRecord } from '../../domain/webhook-records.ts';
import type { EventType } from '../../domain/events.ts';
import type { WriteOp } from '../../store/format.ts';
import type { Store } from '../../store/store.ts';
import type { RecordChange } from '../../store/collections.ts';

const DAY_MS = 24 * 60 * 60 * 1000;
/** Deletes per write of a sweep, so one sweep of a large backlog does not make one huge write. */
const SWEEP_CHUNK = 1_000;

/** Told when an owner has new settled events to read (it reads them from the log). */
export type EventLogListener = () => void;

export class EventLog {
  private readonly store: Store;
  private readonly clock: Clock;
  private readonly retentionMs: number;
  private nextSeq = 1;
  /** Each owner's records, ascending by seq. */
  private readonly byOwner = new Map<string, EventLogRecord[]>();
  private readonly listeners = new Map<string, Set<EventLogListener>>();
  /** Owners told of events not yet settled (many servers): told again once they are. */
  private readonly unsettledOwners = new Set<string>();

  constructor(store: Store, clock: Clock, retentionDays: number) {
    this.store = store;
    this.clock = clock;
    this.retentionMs = retentionDays * DAY_MS;
    const all = [...store.values(EVENT_LOG)].sort((a, b) => a.seq - b.seq);
    for (const record of all) this.insert(record);
    if (all.length > 0) this.nextSeq = all[all.length - 1]!.seq + 1;
    store.onCaughtUp(() => this.tellSettled());
  }

  /**
   * The op that logs an event for `ownerId`: `eventId` is that of the webhook event, so a reader
   * of the log and a receiver see one event. `payload` null: the EVENTS record written in the
   * same write holds it.
   */
  recordOp(ownerId: string, eventId: string, type: EventType, createdAt: string, payload: string | null): WriteOp {
    const base = { id: eventId, owner_id: ownerId, type, created_at: createdAt, seq: this.nextSeq++ };
    const record: EventLogRecord = payload === null ? base : { ...base, payload };
    return { op: 'put', collection: EVENT_LOG, id: eventId, data: record, ordered: true };
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

  /** Up to `limit` of the owner's settled events after seq `afterSeq` (0: from the oldest kept), oldest first. */
  after(ownerId: string, afterSeq: number, limit: number): EventLogRecord[] {
    const records = this.byOwner.get(ownerId);
    if (records === undefined) return [];
    const start = firstAbove(records, afterSeq);
    const settled = this.store.orderedBelow();
    const page = records.slice(start, start + limit);
    if (page.length === 0 || page[page.length - 1]!.seq < settled) return page;
    return page.slice(0, firstAbove(page, settled - 1));
  }

  /** Resolves once every event acknowledged before the call is settled here (at once with one server). */
  async settle(): Promise<void> {
    await this.store.settleOrder();
  }

  /** How many events are kept for `ownerId`. */
  countOf(ownerId: string): number {
    return this.byOwner.get(ownerId)?.length ?? 0;
  }

  /** Calls `listener` whenever `ownerId` may have new settled events, from now on; returns the unsubscribe. */
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

  /** Keeps the per-owner order current and tells subscribers; wired to the store's changes in index.ts. */
  onStoreChange(change: RecordChange<EventLogRecord>): void {
    const { before, after } = change;
    if (before !== undefined) this.remove(before);
    if (after === undefined) return;
    this.insert(after);
    // The payload moved in from the webhook event record: not a new event.
    if (after.seq >= this.nextSeq) this.nextSeq = after.seq + 1;
    if (before !== undefined) return;
    // Not settled yet: its readers are woken after the catch-up that settles it (whoever reads by then).
    if (after.seq >= this.store.orderedBelow()) this.unsettledOwners.add(after.owner_id);
    else this.tell(after.owner_id);
  }

  /** After a catch-up: wakes the readers of owners with events that were not settled before it. */
  private tellSettled(): void {
    if (this.unsettledOwners.size === 0) return;
    const settled = this.store.orderedBelow();
    for (const ownerId of [...this.unsettledOwners]) {
      const newest = this.byOwner.get(ownerId)?.at(-1);
      if (newest === undefined || newest.seq < settled) this.unsettledOwners.delete(ownerId);
      this.tell(ownerId);
    }
  }

  private tell(ownerId: string): void {
    for (const listener of this.listeners.get(ownerId) ?? []) {
      try {
        listener();
      } catch {
        // A stream's failure is its own (it ends itself); the others are still told.
      }
    }
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
        for (const id of chunk) if (tx.get(EVENT_LOG, id) !== undefined) ops.push({ op: 'del', collection: EVENT_LOG, id });
        return { ops, result: ops.length };
      });
    }
    return deleted;
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
