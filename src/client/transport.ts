// Sends one logical call to the server and retries it by the spec's rules: a 429 waits for the
// server's timing, a network failure backs off; a POST keeps one Idempotency-Key across its
// retries so the server can tell a retry from a new request. Shared by both clients.

import { isAbortError, MarketplaceApiError, MarketplaceNetworkError } from './errors.ts';
import { abortableWait, backoffDelay, rateLimitWait, retryAfterWait, RetryPolicy, timerSleep, type RetryOptions, type SleepFunction } from './retry.ts';
import type { RateLimitInfo } from './types.ts';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export type QueryValue = string | number | boolean | undefined;

export interface TransportOptions {
  baseUrl: string;
  /** The whole Authorization header value, e.g. `Bearer mk_…`. */
  authorization: string;
  retry?: RetryOptions;
  fetch?: typeof fetch;
  sleep?: SleepFunction;
  now?: () => number;
  idempotencyKeys?: () => string;
}

export interface RequestSpec {
  method: HttpMethod;
  /** Starts with `/`, relative to the base URL; ids already encoded. */
  path: string;
  query?: Record<string, QueryValue> | undefined;
  body?: unknown;
  signal?: AbortSignal | undefined;
  /** POST only: replaces the generated key. */
  idempotencyKey?: string | undefined;
  /**
   * Whether a network failure may be retried. Default: true, except for a POST the server does
   * not deduplicate by Idempotency-Key (repeating it blind could do the work twice).
   */
  retryOnNetworkError?: boolean;
  /**
   * true: a 429 is waited out only when the key's own window refused it (X-RateLimit-Remaining
   * 0, or no rate-limit headers at all). A 429 with room left in the key's window comes from
   * another limit, such as the user's 60 redeliveries per hour, whose wait can be most of an hour:
   * thrown at once instead, with `retryAfter` saying when to try again. Default false.
   */
  waitOnlyForKeyWindow?: boolean;
  accept?: string;
  /** Headers of this call beyond the usual ones (e.g. Last-Event-ID). */
  headers?: Record<string, string> | undefined;
}

/** `encodeURIComponent` for a path segment, so an id can never change the path. */
export const segment = (id: string): string => encodeURIComponent(id);

export class Transport {
  private readonly baseUrl: string;
  private readonly authorization: string;
  private readonly policy: RetryPolicy;
  private readonly fetchImpl: typeof fetch;
  private readonly sleep: SleepFunction;
  private readonly now: () => number;
  private readonly newIdempotencyKey: () => string;
  /** The rate-limit headers of the latest answer that had them. */
  lastRateLimit: RateLimitInfo | null = null;

  constructor(options: TransportOptions) {
    if (typeof options.baseUrl !== 'string' || !/^https?:\/\//i.test(options.baseUrl)) {
      throw new TypeError(`baseUrl must be an http(s) URL, got ${JSON.stringify(options.baseUrl)}`);
    }
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.authorization = options.authorization;
    this.policy = new RetryPolicy(options.retry);
    // Bound to globalThis: some runtimes refuse a fetch called as a method of another object.
    this.fetchImpl = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.sleep = options.sleep ?? timerSleep;
    this.now = options.now ?? Date.now;
    this.newIdempotencyKey = options.idempotencyKeys ?? (() => globalThis.crypto.randomUUID());
  }

  /** Sends the call and returns the parsed JSON body of its 2xx answer (undefined if empty). */
  async json<T>(spec: RequestSpec): Promise<T> {
    return this.send(spec, async (response, url) => {
      const text = await response.text();
      if (text === '') return undefined as T;
      try {
        return JSON.parse(text) as T;
      } catch {
        throw new MarketplaceApiError({
          status: response.status,
          message: 'The server answered with a body that is not JSON',
          method: spec.method,
          url,
          requestId: response.headers.get('x-request-id') ?? undefined,
          body: text,
        });
      }
    });
  }

  /** Sends the call and returns its 2xx answer's body as a stream, unread. */
  async stream(spec: RequestSpec): Promise<ReadableStream<Uint8Array>> {
    return this.send(spec, async (response) => response.body ?? new ReadableStream<Uint8Array>({ start: (controller) => controller.close() }));
  }

  private buildUrl(spec: RequestSpec): string {
    const url = new URL(this.baseUrl + spec.path);
    for (const [name, value] of Object.entries(spec.query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, String(value));
    }
    return url.toString();
  }

  private buildHeaders(spec: RequestSpec, idempotencyKey: string | undefined): Record<string, string> {
    const headers: Record<string, string> = {
      Accept: spec.accept ?? 'application/json',
      Authorization: this.authorization,
    };
    if (spec.body !== undefined) headers['Content-Type'] = 'application/json';
    if (idempotencyKey !== undefined) headers['Idempotency-Key'] = idempotencyKey;
    if (spec.headers !== undefined) Object.assign(headers, spec.headers);
    return headers;
  }

  /**
   * The retry loop. `readBody` runs inside it, so a connection that drops while a 2xx body is
   * still arriving counts as a network failure like any other.
   */
  private async send<T>(spec: RequestSpec, readBody: (response: Response, url: string) => Promise<T>): Promise<T> {
    const { method, signal } = spec;
    const url = this.buildUrl(spec);
    // One key per call, reused by every retry of it: that is what makes a retried POST safe.
    const idempotencyKey = method === 'POST' ? (spec.idempotencyKey ?? this.newIdempotencyKey()) : undefined;
    const init: RequestInit = {
      method,
      headers: this.buildHeaders(spec, idempotencyKey),
      body: spec.body === undefined ? null : JSON.stringify(spec.body),
    };
    if (signal) init.signal = signal;
    const retryOnNetworkError = spec.retryOnNetworkError ?? true;
    let waitedMs = 0;

    for (let retries = 0; ; retries += 1) {
      signal?.throwIfAborted();
      let response: Response;
      let result: T;
      try {
        response = await this.fetchImpl(url, init);
        this.recordRateLimit(response.headers);
        if (response.ok) result = await readBody(response, url);
        else result = undefined as T;
      } catch (error) {
        if (signal?.aborted) throw signal.reason;
        if (error instanceof MarketplaceApiError || isAbortError(error)) throw error;
        const networkError = new MarketplaceNetworkError(method, url, error);
        const waitMs = backoffDelay(retries);
        if (!retryOnNetworkError || !this.policy.allows(retries, waitedMs, waitMs)) throw networkError;
        await abortableWait(this.sleep, waitMs, signal);
        waitedMs += waitMs;
        continue;
      }
      if (response.ok) return result;

      const apiError = await readApiError(response, method, url, this.now());
      if (response.status !== 429) throw apiError;
      if (spec.waitOnlyForKeyWindow && !isKeyWindowRefusal(response.headers)) throw apiError;
      const waitMs = rateLimitWait(response.headers, this.now()) ?? backoffDelay(retries);
      if (!this.policy.allows(retries, waitedMs, waitMs)) throw apiError;
      await abortableWait(this.sleep, waitMs, signal);
      waitedMs += waitMs;
    }
  }

  private recordRateLimit(headers: Headers): void {
    const info = parseRateLimit(headers);
    if (info) this.lastRateLimit = info;
  }
}

function parseRateLimit(headers: Headers): RateLimitInfo | undefined {
  const limit = Number(headers.get('x-ratelimit-limit') ?? NaN);
  const remaining = Number(headers.get('x-ratelimit-remaining') ?? NaN);
  const reset = Number(headers.get('x-ratelimit-reset') ?? NaN);
  if (![limit, remaining, reset].every(Number.isFinite)) return undefined;
  return { limit, remaining, reset };
}

/**
 * Whether a 429 was the key's own rate-limit window (or CPU budget) refusing: those say
 * X-RateLimit-Remaining 0. No rate-limit headers (a proxy's 429) counts as the key's too, so
 * it is retried as the spec says. A 429 that leaves the key room was refused by another limit.
 */
function isKeyWindowRefusal(headers: Headers): boolean {
  const remaining = headers.get('x-ratelimit-remaining');
  return remaining === null || Number(remaining) === 0;
}

/** Turns an error answer into a MarketplaceApiError; a body that is not the usual JSON still yields one. */
async function readApiError(response: Response, method: string, url: string, nowMs: number): Promise<MarketplaceApiError> {
  let text = '';
  try {
    text = await response.text();
  } catch {
    // The status alone is still worth reporting when the body is lost.
  }
  let body: unknown = text;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    // Not JSON (a proxy's HTML page, say): keep the text.
  }
  const fields = isRecord(body) ? body : {};
  const message =
    typeof fields.error === 'string' ? fields.error : `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}`;
  const requestIdInBody = typeof fields.request_id === 'string' ? fields.request_id : undefined;
  return new MarketplaceApiError({
    status: response.status,
    message,
    method,
    url,
    details: isStringRecord(fields.details) ? fields.details : undefined,
    hint: typeof fields.hint === 'string' ? fields.hint : undefined,
    required: Array.isArray(fields.required) ? fields.required.filter((entry): entry is string => typeof entry === 'string') : undefined,
    requestId: requestIdInBody ?? response.headers.get('x-request-id') ?? undefined,
    rateLimit: parseRateLimit(response.headers),
    retryAfter: secondsOrUndefined(retryAfterWait(response.headers, nowMs)),
    body,
  });
}

function secondsOrUndefined(ms: number | null): number | undefined {
  return ms === null ? undefined : Math.ceil(ms / 1000);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isStringRecord(value: unknown): value is Record<string, string> {
  return isRecord(value) && Object.values(value).every((entry) => typeof entry === 'string');
}
