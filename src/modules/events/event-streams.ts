// The open event streams (GET /v1/events/stream, Server-Sent Events): each follows one user's
// event log (event-log.ts) from a cursor, sending the events after it oldest first, then each
// new one as it is logged.
//
// No gap, no duplicate: a stream subscribes to its owner's new events before it reads anything,
// and what it sends is always read from the log after its cursor (the seq of the last event
// sent), never from the notification itself: a notification only wakes it. Whatever arrives
// while the backlog is being sent is read in its turn, and an event is never sent twice because
// the cursor only moves forward.
//
// Bounded: a stream holds no queue. It writes while the socket takes bytes and waits for
// 'drain' when it does not; a reader that stops reading is dropped once more than
// maxBufferedBytes wait (heartbeats still add to them), or by the server's write-stall check
// (src/http/socket-limits.ts). Streams are counted, per key (perKey) and in all (total): the
// handler refuses one past either with 429. Node's request deadline covers only the request's
// arrival, and a stream's response keeps writing, so neither it nor the keep-alive deadline
// cuts a stream that is being read.
//
// Ended: when its key may no longer read it (revoked, expired, permission or account gone),
// checked before each batch of events and at each heartbeat; when the client leaves; and when
// the server stops (closeAll, before the server waits for its connections).

import type { ServerResponse } from 'node:http';
import type { EventStreamLimits } from '../../config.ts';
import type { EventLog } from './event-log.ts';
import type { EventLogRecord } from '../../domain/webhook-records.ts';

/** Events read from the log per turn of a stream's pump. */
const BATCH = 100;

export interface StreamRequest {
  ownerId: string;
  keyId: string;
  /** The seq of the last event the client has (0: from the oldest kept). */
  afterSeq: number;
  /** Whether the key may still read the stream (asked before each batch and at each heartbeat). */
  allowed: () => boolean;
}

/** One event as a Server-Sent Events frame (the payload is one line of JSON). */
export function eventFrame(record: EventLogRecord, payload: string): string {
  return `id: ${record.id}\nevent: ${record.type}\ndata: ${payload}\n\n`;
}

export class EventStreams {
  private readonly log: EventLog;
  private readonly limits: EventStreamLimits;
  private readonly openByKey = new Map<string, number>();
  private readonly enders = new Set<() => void>();
  private opened = 0;

  constructor(log: EventLog, limits: EventStreamLimits) {
    this.log = log;
    this.limits = limits;
  }

  /** Streams open now. */
  openCount(): number {
    return this.opened;
  }

  /** Why another stream for `keyId` is refused now (a 429's message), or null when it may open. */
  refusal(keyId: string): string | null {
    if ((this.openByKey.get(keyId) ?? 0) >= this.limits.perKey) return `This key already has ${this.limits.perKey} event streams open, the most one key may hold. Close one first.`;
    if (this.opened >= this.limits.total) return 'The server holds as many event streams as it can. Retry later.';
    return null;
  }

  /**
   * Opens a stream on `res` with the request's `headers`; resolves with 200 once it has ended.
   * The caller asked `refusal` first, in the same turn.
   */
  open(res: ServerResponse, headers: Record<string, string | number>, request: StreamRequest): Promise<number> {
    const { ownerId, keyId, allowed } = request;
    this.opened += 1;
    this.openByKey.set(keyId, (this.openByKey.get(keyId) ?? 0) + 1);
    let cursor = request.afterSeq;
    let pumping = false;
    let waitingForDrain = false;
    let ended = false;
    let heartbeat: NodeJS.Timeout | null = null;
    let unsubscribe: () => void = () => {};

    return new Promise<number>((resolve) => {
      const end = () => {
        if (ended) return;
        ended = true;
        if (heartbeat !== null) clearInterval(heartbeat);
        unsubscribe();
        this.enders.delete(end);
        this.opened -= 1;
        const left = (this.openByKey.get(keyId) ?? 1) - 1;
        if (left === 0) this.openByKey.delete(keyId);
        else this.openByKey.set(keyId, left);
        if (!res.destroyed && !res.writableEnded) res.end();
        resolve(200);
      };
      /** Writes `text`; false when the reader is not keeping up (it then waits for 'drain', or is dropped past the bound). */
      const write = (text: string): boolean => {
        const taken = res.write(text);
        if (res.writableLength > this.limits.maxBufferedBytes) {
          res.destroy();
          end();
          return false;
        }
        return taken;
      };
      const pump = () => {
        if (pumping || waitingForDrain || ended) return;
        pumping = true;
        try {
          for (;;) {
            const batch = this.log.after(ownerId, cursor, BATCH);
            if (batch.length === 0) return;
            if (!allowed()) return end();
            for (const record of batch) {
              cursor = record.seq;
              const payload = this.log.payloadOf(record);
              if (payload === null) continue;
              if (!write(eventFrame(record, payload))) {
                if (ended) return;
                waitingForDrain = true;
                res.once('drain', () => {
                  waitingForDrain = false;
                  pump();
                });
                return;
              }
            }
          }
        } finally {
          pumping = false;
        }
      };

      this.enders.add(end);
      res.once('close', end);
      headers['Content-Type'] = 'text/event-stream; charset=utf-8';
      // Never stored, never transformed (compressed or buffered) on the way.
      headers['Cache-Control'] = 'no-store, no-transform';
      headers['X-Accel-Buffering'] = 'no';
      delete headers['Content-Length'];
      res.writeHead(200, headers);
      res.flushHeaders();
      // Subscribed before the backlog is read: an event logged from here on wakes the pump.
      unsubscribe = this.log.subscribe(ownerId, pump);
      heartbeat = setInterval(() => {
        if (!allowed()) return end();
        write(': keep-alive\n\n');
      }, this.limits.heartbeatMs);
      heartbeat.unref();
      pump();
    });
  }

  /** Ends every open stream (the server is stopping). */
  closeAll(): void {
    for (const end of [...this.enders]) end();
  }
}
