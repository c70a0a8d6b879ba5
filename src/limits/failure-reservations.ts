// Reservations in failure limits: an attempt to check a secret (a password, a code, an
// invitation) first takes its place in every failure window it counts in, and one of the few
// "in flight" places of each, all at once or not at all, before any work is done. The attempt
// then gives its places back when the secret was right (or it was never checked), or keeps its
// failure places when it was wrong. Counting before the work is what holds against a burst: of
// N attempts sent at once, at most the windows' remainder are ever checked, and at most
// IN_FLIGHT_PER_PLACE at a time per account or address.
// This file holds the interface and the in-process implementation (one process, decided
// synchronously); src/backends/redis/redis-reservations.ts keeps the same places in Redis.

import { randomUUID } from 'node:crypto';
import type { SlidingWindowLimiter } from './sliding-window.ts';

/** Which failure window a place is in: the account's (by email asked for) or the client address's. */
export type FailureWindow = 'account' | 'address';

/** The window of failed sign-ins per account (the portal's sign-in limits): 15 minutes. */
export const ACCOUNT_FAILURE_WINDOW_MS = 15 * 60 * 1000;

/** At most this many attempts of one account, or from one address, are checked at the same time. */
export const IN_FLIGHT_PER_PLACE = 2;

export interface FailurePlace {
  window: FailureWindow;
  /** The account's normalised email, or the client's address. */
  id: string;
  /** Failures the window admits. */
  limit: number;
}

/** Places held by one attempt; pass it back to giveBack or keep, once. */
export interface HeldPlaces {
  readonly places: readonly FailurePlace[];
  /** Unique per reservation: what the back-end recorded it under. */
  readonly token: string;
}

export type ReserveOutcome =
  | { granted: true; held: HeldPlaces }
  | {
      granted: false;
      /** The first place that had no room. */
      place: FailurePlace;
      /** `failures`: its window is full; `in-flight`: IN_FLIGHT_PER_PLACE attempts are already being checked. */
      reason: 'failures' | 'in-flight';
      /** How long until it has room again, in ms (at least 1 s for in-flight). */
      waitMs: number;
    };

export interface FailureReservations {
  /** Takes a place in every window and an in-flight place of each, atomically, or none of them. */
  reserve(places: readonly FailurePlace[]): Promise<ReserveOutcome>;
  /** The attempt succeeded, or was never checked: it leaves the failure windows and the in-flight count. */
  giveBack(held: HeldPlaces): Promise<void>;
  /** The attempt failed: its places stay in the failure windows as the failure; it leaves the in-flight count. */
  keep(held: HeldPlaces): Promise<void>;
}

/** How long an in-flight place waits before it is tried again, when refused. */
export const IN_FLIGHT_RETRY_MS = 1000;

/** In one process: the same SlidingWindowLimiters the pipeline counts failed keys in, and in-flight counts in a map. */
export class InProcessFailureReservations implements FailureReservations {
  private readonly windows: Record<FailureWindow, SlidingWindowLimiter>;
  /** "window:id" → attempts being checked; an entry leaves at 0, so the map holds only what is in flight. */
  private readonly inFlight = new Map<string, number>();
  /** token → the monotonic time each place's window recorded, to give exactly that admission back. */
  private readonly recordedAt = new Map<string, number[]>();

  constructor(windows: Record<FailureWindow, SlidingWindowLimiter>) {
    this.windows = windows;
  }

  async reserve(places: readonly FailurePlace[]): Promise<ReserveOutcome> {
    // Decided synchronously from the first look to the last record: nothing can come between.
    for (const place of places) {
      const decision = this.windows[place.window].peek(place.id, place.limit);
      if (!decision.allowed) return { granted: false, place, reason: 'failures', waitMs: decision.resetAt - decision.decidedAt };
    }
    for (const place of places) {
      if ((this.inFlight.get(inFlightKey(place)) ?? 0) >= IN_FLIGHT_PER_PLACE) return { granted: false, place, reason: 'in-flight', waitMs: IN_FLIGHT_RETRY_MS };
    }
    const times = places.map((place) => {
      const key = inFlightKey(place);
      this.inFlight.set(key, (this.inFlight.get(key) ?? 0) + 1);
      return this.windows[place.window].hit(place.id, place.limit).decidedAt;
    });
    const token = randomUUID();
    this.recordedAt.set(token, times);
    return { granted: true, held: { places, token } };
  }

  async giveBack(held: HeldPlaces): Promise<void> {
    const times = this.release(held);
    if (times === undefined) return;
    held.places.forEach((place, index) => this.windows[place.window].giveBack(place.id, times[index]!));
  }

  async keep(held: HeldPlaces): Promise<void> {
    this.release(held);
  }

  /** Ends the in-flight places (once per reservation); the recorded times, or undefined when already released. */
  private release(held: HeldPlaces): number[] | undefined {
    const times = this.recordedAt.get(held.token);
    if (times === undefined) return undefined;
    this.recordedAt.delete(held.token);
    for (const place of held.places) {
      const key = inFlightKey(place);
      const left = (this.inFlight.get(key) ?? 1) - 1;
      if (left <= 0) this.inFlight.delete(key);
      else this.inFlight.set(key, left);
    }
    return times;
  }
}

function inFlightKey(place: FailurePlace): string {
  return `${place.window}:${place.id}`;
}
