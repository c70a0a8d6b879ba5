// Request accounting, in one place. The listener (src/server.ts) tells the observer the few
// moments that matter in each request's life: it arrived (`arrived`), a piece of its work on the
// event loop began and paused (`workBegins`, `workPauses`; a waiting handler's answer is a second
// piece), and its answer went out with a status (`finished`). The observer tells whoever counts:
// the key's usage (analytics), the request metrics of GET /metrics, the access log, and the key's
// CPU budget (the cpu-budget module, src/modules/cpu-budget/), which is also charged the time a
// thread-pool job spent compressing the answer (`poolWorkCharge`). Only a /v1 request whose key step 1 found is
// counted and charged to anyone: the key of its KeyContext (its CPU to the key's meter, which
// a user's keys on one plan share, with the plans module).
//
// A cached page passes here too, so nothing here allocates per request, and the clock is read
// only when something uses the reading: the arrival only when metrics or the access log time
// requests, the work only when a CPU budget is on.

import type { UsageRecorder } from '../analytics/recorder.ts';
import type { Metering } from '../analytics/quota-counters.ts';
import type { Clock } from '../clock.ts';
import type { AccessLog } from '../http/access-log.ts';
import type { ClientAddress } from '../http/client-address.ts';
import type { BaseContext } from '../http/context.ts';
import { KeyContext } from '../http/key-context.ts';
import type { Reply } from '../http/route.ts';

/** What the observer tells the request metrics (src/metrics/server-metrics.ts). */
export interface RequestMetrics {
  recordRequest(method: string, route: string | null, status: number, durationMs: number): void;
  /** Told each 429 of the cpu-budget module's step (also counted by `recordRequest`). */
  countCpuBudgetRefusal?(): void;
}

/** Each key's share of the event loop (the cpu-budget module): charged here, asked by the /v1 gate's step 2. */
export interface KeyCpuBudget {
  /** Step 2: null when the meter may go on; else its 429, with its rate-limit headers set. */
  refusal(context: KeyContext, meterId: string, rateLimit: number): Reply | null;
  /** Charges `ms` of the meter's work, timed with performance.now() and ending at `now`. */
  chargeTimed(meterId: string, ms: number, now: number): void;
}

/** Who counts requests: made once by src/app.ts. */
export interface RequestObserverParts {
  clock: Clock;
  usage: UsageRecorder;
  /** One line per request; null when ACCESS_LOG is off. */
  accessLog: AccessLog | null;
  /** The client's address, for the access log. */
  clientAddress: ClientAddress;
  /** Counts every answered request for GET /metrics. */
  metrics?: RequestMetrics | null;
  /** Each key's share of the event loop (the cpu-budget module); null without it. */
  cpuBudget?: KeyCpuBudget | null;
  /** What a key's CPU time is charged to (its meter); each key alone when absent. */
  metering?: Pick<Metering, 'meterOf'>;
}

/** Told the ms a thread-pool job spent on a request's answer (src/http/respond.ts `sendReply`). */
export type PoolWorkCharge = (context: BaseContext, ms: number) => void;

export class RequestObserver {
  /** The budget charged here, which the /v1 gate's step 2 asks; null without the cpu-budget module. */
  readonly cpuBudget: KeyCpuBudget | null;
  private readonly clock: Clock;
  private readonly usage: UsageRecorder;
  private readonly accessLog: AccessLog | null;
  private readonly clientAddress: ClientAddress;
  private readonly metrics: RequestMetrics | null;
  private readonly metering: Pick<Metering, 'meterOf'>;
  /** Timed only for the access log and metrics: clock reads are a measurable share of a cached page. */
  private readonly timed: boolean;

  constructor(parts: RequestObserverParts) {
    this.clock = parts.clock;
    this.usage = parts.usage;
    this.accessLog = parts.accessLog;
    this.clientAddress = parts.clientAddress;
    this.metrics = parts.metrics ?? null;
    this.cpuBudget = parts.cpuBudget ?? null;
    this.metering = parts.metering ?? { meterOf: (key) => key.id };
    this.timed = this.accessLog !== null || this.metrics !== null;
  }

  /** A request arrived: its monotonic time, to hand back to `finished` (0 when nothing times requests). */
  arrived(): number {
    return this.timed ? this.clock.monotonic() : 0;
  }

  /** A piece of a request's work on the event loop begins: its time, to hand back to `workPauses` (0 when nothing is charged). */
  workBegins(): number {
    return this.cpuBudget === null ? 0 : performance.now();
  }

  /** The piece of work begun at `began` paused or ended: charged to the request's key, if it has one. */
  workPauses(context: BaseContext, began: number): void {
    const budget = this.cpuBudget;
    if (budget === null) return;
    const meterId = this.meterOf(context);
    if (meterId === null) return;
    const now = performance.now();
    budget.chargeTimed(meterId, now - began, now);
  }

  /** What to tell a thread-pool job's time for this request's answer: null when nobody is charged for it. */
  poolWorkCharge(context: BaseContext): PoolWorkCharge | null {
    return this.cpuBudget !== null && keyIdOf(context) !== null ? this.chargePoolWork : null;
  }

  /** The request was answered (or its connection dropped) with `status`: one usage count for its key, its metrics, one access-log line. */
  finished(context: BaseContext, status: number, arrivedAt: number): void {
    const keyId = keyIdOf(context);
    if (keyId !== null) this.usage.recordRequest(keyId, context.routeLabel ?? `${context.method} (unknown route)`, status, this.clock.now());
    if (!this.timed) return;
    const durationMs = this.clock.monotonic() - arrivedAt;
    this.metrics?.recordRequest(context.method, context.routeLabel, status, durationMs);
    if (this.accessLog !== null) {
      this.accessLog.record({
        method: context.method,
        route: context.routeLabel,
        path: context.path,
        status,
        durationMs,
        keyId,
        requestId: context.requestId,
        client: this.clientAddress(context.req),
      });
    }
  }

  private readonly chargePoolWork: PoolWorkCharge = (context, ms) => {
    const meterId = this.meterOf(context);
    if (meterId !== null) this.cpuBudget?.chargeTimed(meterId, ms, performance.now());
  };

  /** What a request's CPU time is charged to: its key's meter (shared by its user's keys on one plan, with the plans module). */
  private meterOf(context: BaseContext): string | null {
    if (!(context instanceof KeyContext)) return null;
    const caller = context.caller;
    return caller === null ? null : this.metering.meterOf(caller.key);
  }
}

/** The key a request is counted to: a /v1 request's, once step 1 found it; else null. */
function keyIdOf(context: BaseContext): string | null {
  return context instanceof KeyContext ? (context.caller?.key.id ?? null) : null;
}

