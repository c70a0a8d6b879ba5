// What the request pipeline needs from a rate limiter, whichever back-end keeps the windows:
// the in-process SlidingWindowLimiter (the default, answering at once) or a shared one in Redis
// for many instances (answering with a promise). Both give the same decisions and headers.

import type { RateDecision } from './sliding-window.ts';

export interface RateLimiter {
  /** Records a request for `id` if its window has room; says how much room is left either way. */
  hit(id: string, limit: number): RateDecision | Promise<RateDecision>;
  /** The current state for `id` without recording a request. */
  peek(id: string, limit: number): RateDecision | Promise<RateDecision>;
}

/** The shared limiter cannot be reached: requests are refused (503) rather than let through unlimited. */
export class LimiterUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LimiterUnavailableError';
  }
}
