// What the client tests against a real server share: a sleep that records waits instead of
// waiting, the typed error a call must fail with, and a fetch that loses one POST's answer after
// the server acted on it (a dropped connection, the one fault a real server cannot be asked for).

import assert from 'node:assert/strict';
import { MarketplaceApiError } from '../../src/client/index.ts';

/** A sleep that records the waits and does not really wait. */
export function recordingSleep(onWait: (ms: number) => void = () => {}) {
  const waits: number[] = [];
  const sleep = async (ms: number) => {
    waits.push(ms);
    onWait(ms);
  };
  return { sleep, waits };
}

/** The rejection of `promise`, which must be a MarketplaceApiError. */
export async function apiError(promise: Promise<unknown>): Promise<MarketplaceApiError> {
  const error = await promise.then(
    () => assert.fail('expected the call to fail'),
    (reason: unknown) => reason,
  );
  assert.ok(error instanceof MarketplaceApiError, `expected a MarketplaceApiError, got ${String(error)}`);
  return error;
}

/** One POST exchange as the lossy fetch saw it: the Idempotency-Key sent, the status, whether the server replayed. */
export interface PostExchange {
  key: string | null;
  status: number;
  replayed: string | null;
}

/**
 * The real fetch, except that the first POST to a URL `matches` accepts reaches the server and is
 * carried out, then "drops" before the client reads the answer: exactly what a retry without an
 * Idempotency-Key would duplicate. `seen` records every such POST.
 */
export function fetchLosingFirstAnswer(matches: (url: string) => boolean = () => true): { fetch: typeof fetch; seen: PostExchange[] } {
  const seen: PostExchange[] = [];
  const lossy: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    if (init?.method === 'POST' && matches(String(input))) {
      seen.push({ key: new Headers(init.headers).get('idempotency-key'), status: response.status, replayed: response.headers.get('idempotent-replayed') });
      if (seen.length === 1) {
        await response.arrayBuffer();
        throw new TypeError('fetch failed', { cause: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }) });
      }
    }
    return response;
  };
  return { fetch: lossy, seen };
}
