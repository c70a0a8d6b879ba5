// How much of the event loop's busy time its thread actually spent on a processor, so that a
// piece of work timed with the clock can be charged as the CPU time it used. On a machine with
// more runnable work than cores the process is descheduled now and then, in the middle of a
// request; the clock goes on while it waits, the processor's accounting does not. Asking the
// kernel around every request costs several microseconds, a large share of a cached page, so
// the share is measured instead every quarter of a second, on the first charge after that, and
// at the end of any piece of work that took a millisecond or more on the clock (where the read
// is a small part of the cost, and where a long wait for a core would otherwise be charged at
// the share of a quieter moment before it; the interval measured then ends with that work): the
// loop thread's own CPU time over the loop's busy time (`performance.eventLoopUtilization()
// .active`) in the same interval. The thread's own time is read from Linux's
// /proc/thread-self/schedstat, so that the other threads (garbage collection, the thread pool
// compressing answers) do not count; elsewhere the whole process's (`process.cpuUsage()`),
// which those threads can only make larger. The share is capped at 1, so a charge is never
// more than the time on the clock. An interval in which the loop was busy for less than a
// millisecond says little, and keeps the share measured before it. A short piece of work uses
// the share of the interval before it: at most a millisecond is charged at a stale share.

import { openSync, readSync } from 'node:fs';

/** How often the share is measured again, in ms of the monotonic clock. */
const SAMPLE_EVERY_MS = 250;
/** Busy time below which an interval's share is not believed. */
const LEAST_ACTIVE_MS = 1;
/** Work at least this long on the clock is charged at a share measured at its end. */
const MEASURED_AT_ONCE_MS = 1;

/** The loop thread's CPU time and the event loop's busy time so far, both in ms. */
export interface ProcessUsage {
  cpuMs: number;
  activeMs: number;
}

/** Where Linux gives the calling thread's time on a CPU (ns, the first field). */
const THREAD_SCHEDSTAT = '/proc/thread-self/schedstat';
/**
 * The file, opened once by the first thread to ask (the event loop's) and read again from its
 * start each time (about 3 µs, a tenth of opening it anew); null where it cannot be read.
 */
let threadStat: number | null | undefined;
const statText = Buffer.alloc(128);

/** The calling thread's CPU time in ms; the whole process's where the thread's own cannot be read. */
function loopThreadCpuMs(): number {
  if (threadStat === undefined) {
    try {
      threadStat = openSync(THREAD_SCHEDSTAT, 'r');
    } catch {
      threadStat = null;
    }
  }
  if (threadStat !== null) {
    try {
      const length = readSync(threadStat, statText, 0, statText.length, 0);
      return Number.parseInt(statText.toString('latin1', 0, length), 10) / 1e6;
    } catch {
      threadStat = null;
    }
  }
  const cpu = process.cpuUsage();
  return (cpu.user + cpu.system) / 1000;
}

/** What the running process says; tests give their own. */
export function readProcessUsage(): ProcessUsage {
  return { cpuMs: loopThreadCpuMs(), activeMs: performance.eventLoopUtilization().active };
}

export class OnCpuShare {
  private readonly readUsage: () => ProcessUsage;
  private share = 1;
  private last: ProcessUsage;
  private nextSampleAt: number;

  constructor(readUsage: () => ProcessUsage = readProcessUsage, now: number = performance.now()) {
    this.readUsage = readUsage;
    this.last = readUsage();
    this.nextSampleAt = now + SAMPLE_EVERY_MS;
  }

  /** `wallMs` of work timed with the clock (`now` its end, from performance.now()), as CPU time. */
  cpuOf(wallMs: number, now: number): number {
    if (wallMs >= MEASURED_AT_ONCE_MS || now >= this.nextSampleAt) this.sample(now);
    return wallMs * this.share;
  }

  /** The share now in use, between 0 and 1. */
  current(): number {
    return this.share;
  }

  private sample(now: number): void {
    this.nextSampleAt = now + SAMPLE_EVERY_MS;
    const usage = this.readUsage();
    const active = usage.activeMs - this.last.activeMs;
    if (active >= LEAST_ACTIVE_MS) this.share = Math.min(1, Math.max(0, usage.cpuMs - this.last.cpuMs) / active);
    this.last = usage;
  }
}
