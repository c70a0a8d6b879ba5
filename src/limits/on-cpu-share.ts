// How much of the event loop's busy time this process actually spent on a processor, so that a
// piece of work timed with the clock can be charged as the CPU time it used. On a machine with
// more runnable work than cores the process is descheduled now and then, in the middle of a
// request; the clock goes on while it waits, the processor's accounting does not. Asking the
// kernel around every request (`process.cpuUsage()`) costs several microseconds, a large share
// of a cached page, so the share is measured instead every quarter of a second, on the first
// charge after that: the process's CPU time (`process.cpuUsage()`, every thread) over the
// loop's busy time (`performance.eventLoopUtilization().active`) in the same interval. Other
// threads (garbage collection, the thread pool compressing answers) can make the CPU time
// exceed the loop's busy time; the share is then capped at 1, so a charge is never more than
// the time on the clock. An interval in which the loop was busy for less than a millisecond
// says little, and keeps the share measured before it. Each charge uses the share of the
// interval before it: it follows the machine's load a quarter of a second late.

/** How often the share is measured again, in ms of the monotonic clock. */
const SAMPLE_EVERY_MS = 250;
/** Busy time below which an interval's share is not believed. */
const LEAST_ACTIVE_MS = 1;

/** The process's CPU time and the event loop's busy time so far, both in ms. */
export interface ProcessUsage {
  cpuMs: number;
  activeMs: number;
}

/** What the running process says; tests give their own. */
export function readProcessUsage(): ProcessUsage {
  const cpu = process.cpuUsage();
  return { cpuMs: (cpu.user + cpu.system) / 1000, activeMs: performance.eventLoopUtilization().active };
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
    if (now >= this.nextSampleAt) this.sample(now);
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
