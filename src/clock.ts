// Time, injected. Wall time (Date.now) stamps records and headers; monotonic time measures
// windows and timeouts, so a wall-clock jump neither grants a burst nor locks anyone out.

export interface Clock {
  /** Milliseconds since the Unix epoch (may jump). */
  now(): number;
  /** Milliseconds from an arbitrary origin; never goes backwards. */
  monotonic(): number;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
};

/** A clock for tests: time moves only when the test says so. */
export class ManualClock implements Clock {
  private wallMs: number;
  private monoMs = 0;

  constructor(startWallMs = Date.UTC(2026, 0, 1)) {
    this.wallMs = startWallMs;
  }

  now(): number {
    return this.wallMs;
  }

  monotonic(): number {
    return this.monoMs;
  }

  /** Moves both clocks forward, as real time passing does. */
  advance(ms: number): void {
    this.wallMs += ms;
    this.monoMs += ms;
  }

  /** Moves only the wall clock (an NTP step or an operator changing the date). */
  jumpWall(ms: number): void {
    this.wallMs += ms;
  }
}

let lastIsoMs = Number.NaN;
let lastIsoText = '';

/** The ISO 8601 text of `ms`; writes decided together mostly share a millisecond, so the last one is kept. */
export function isoTime(ms: number): string {
  if (ms !== lastIsoMs) {
    lastIsoText = new Date(ms).toISOString();
    lastIsoMs = ms;
  }
  return lastIsoText;
}
