// One webhook POST and what came of it. Only a 2xx counts as delivered; redirects are not
// followed; the address dialled passes the SSRF guard; the receiver's body is read (at most
// 4 KiB) only to let the exchange finish, and never returned. Never throws.

import http from 'node:http';
import https from 'node:https';
import type { IncomingMessage } from 'node:http';
import { systemClock } from '../clock.ts';
import type { Clock } from '../clock.ts';
import { guardedLookup, validateWebhookUrl } from './address-guard.ts';
import type { BaseLookup } from './address-guard.ts';
import { isDeliveredStatus, isGoneStatus, type SendOutcome } from './outcome-rules.ts';

const DEFAULT_TIMEOUT_MS = 10_000;
const MAX_RESPONSE_BYTES = 4096;

export interface SendOptions {
  url: string;
  body: Buffer;
  headers: Record<string, string>;
  /** Bounds the whole exchange: look-up, connect, request and response. */
  timeoutMs?: number;
  allowPrivate: boolean;
  /** The DNS look-up underneath the guard; tests pass a stub. */
  lookup?: BaseLookup;
  /** Reads the wall clock for a `Retry-After` given as a date. */
  clock?: Clock;
}

// What one attempt came to is declared with the rules that read it (outcome-rules.ts).
export type { SendOutcome };

/**
 * `Retry-After` (delta seconds or an HTTP date) as milliseconds from `nowMs`, or undefined.
 * @example parseRetryAfter('7', Date.now()) // 7000
 */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // Every HTTP-date form starts with a day name; Date.parse alone would also take "-5".
  if (!/^[A-Za-z]{3}/.test(text)) return undefined;
  const dateMs = Date.parse(text);
  if (Number.isNaN(dateMs)) return undefined;
  return Math.max(0, dateMs - nowMs);
}

function failure(error: string): SendOutcome {
  return { delivered: false, status: null, error, gone: false };
}

/** A short, stack-free description of a network error. */
function describeError(error: NodeJS.ErrnoException): string {
  if (error.code === 'EWEBHOOKADDR') return 'address not allowed';
  if (typeof error.code === 'string') return error.code;
  return error.message.split('\n')[0]?.slice(0, 200) ?? 'request failed';
}

function outcomeOf(response: IncomingMessage, nowMs: number): SendOutcome {
  const status = response.statusCode ?? 0;
  const outcome: SendOutcome = { delivered: isDeliveredStatus(status), status, gone: isGoneStatus(status) };
  if (status === 429 || status === 503) {
    const retryAfterMs = parseRetryAfter(response.headers['retry-after'], nowMs);
    if (retryAfterMs !== undefined) outcome.retryAfterMs = retryAfterMs;
  }
  return outcome;
}

/**
 * POSTs `body` with exactly `headers` (plus the host, content-length and connection Node adds).
 * @example await sendWebhook({ url, body, headers: buildDeliveryHeaders(secret, id, ts, body), allowPrivate: false })
 */
export function sendWebhook(options: SendOptions): Promise<SendOutcome> {
  const checked = validateWebhookUrl(options.url, options.allowPrivate);
  if (!checked.ok) return Promise.resolve(failure(`refused: ${checked.reason}`));
  const clock = options.clock ?? systemClock;

  return new Promise((resolve) => {
    let settled = false;
    let outcome: SendOutcome | undefined;

    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(options.headers)) {
      // The length is always the body's own, whatever the caller passed.
      if (name.toLowerCase() !== 'content-length') headers[name] = value;
    }
    headers['content-length'] = String(options.body.length);

    const transport = checked.url.protocol === 'https:' ? https : http;
    let request: http.ClientRequest;
    try {
      request = transport.request(checked.url, {
        method: 'POST',
        headers,
        // A fresh connection per delivery: no pooled socket outlives the exchange or skips the guard.
        agent: false,
        lookup: guardedLookup(options.allowPrivate, options.lookup),
      });
    } catch (error) {
      // Node refuses some requests before sending, e.g. a header value holding a line break.
      resolve(failure(describeError(error as NodeJS.ErrnoException)));
      return;
    }

    const finish = (result: SendOutcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      request.destroy();
      resolve(result);
    };

    // A status that arrived in time stands even if the body then dawdles past the deadline.
    const deadline = setTimeout(() => finish(outcome ?? failure('timeout')), options.timeoutMs ?? DEFAULT_TIMEOUT_MS);

    request.on('error', (error: NodeJS.ErrnoException) => finish(outcome ?? failure(describeError(error))));
    request.on('response', (response) => {
      outcome = outcomeOf(response, clock.now());
      const settledOutcome = outcome;
      let bytesRead = 0;
      response.on('data', (chunk: Buffer) => {
        bytesRead += chunk.length;
        if (bytesRead >= MAX_RESPONSE_BYTES) finish(settledOutcome);
      });
      response.on('end', () => finish(settledOutcome));
      response.on('error', () => finish(settledOutcome));
      response.on('close', () => finish(settledOutcome));
    });
    request.end(options.body);
  });
}
