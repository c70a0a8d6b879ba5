// The typed client for the public API (/v1): one method per endpoint, grouped by resource.
// Single resources come back unwrapped (the `data` field); lists come back whole, with pagination.

import { abortableWait, timerSleep, type RetryOptions, type SleepFunction } from './retry.ts';
import { MarketplaceApiError } from './errors.ts';
import { segment, Transport } from './transport.ts';
import type {
  DeliveryOutcome,
  EventPage,
  EventQuery,
  Listing,
  ListingPatch,
  ListingQuery,
  ListingStatsQuery,
  ListingStatsResponse,
  ListResponse,
  MarketplaceEvent,
  NewListing,
  NewWebhook,
  PageQuery,
  PublicUser,
  QueuedRedelivery,
  RateLimitInfo,
  Recovery,
  RotatedSecret,
  Usage,
  UsageQuery,
  User,
  UserPatch,
  Webhook,
  WebhookPatch,
  WebhookWithSecret,
} from './types.ts';

export interface CallOptions {
  /** Aborts the request and any wait before a retry. */
  signal?: AbortSignal;
}

export interface PostOptions extends CallOptions {
  /** Replaces the generated Idempotency-Key, e.g. to make a call safe to repeat across restarts. */
  idempotencyKey?: string;
}

export interface ClientOptions {
  /** The server's root, e.g. `https://api.example.com` (without `/v1`). */
  baseUrl: string;
  apiKey: string;
  retry?: RetryOptions;
  /** Replaces the global fetch (a proxy agent, a test double). */
  fetch?: typeof fetch;
  /** Replaces the timer used between retries; receives the call's signal. */
  sleep?: SleepFunction;
  /** Milliseconds since the epoch; compared with X-RateLimit-Reset. */
  now?: () => number;
  /** Makes Idempotency-Keys; default crypto.randomUUID. */
  idempotencyKeys?: () => string;
}

/** Every single-resource answer: the resource under `data`. */
export interface Envelope<T> {
  data: T;
}

/**
 * @example
 * const client = new MarketplaceClient({ baseUrl: 'http://127.0.0.1:3000', apiKey: process.env.MARKETPLACE_KEY! });
 * const page = await client.listings.list({ type: 'SKILL', limit: 50 });
 */
export class MarketplaceClient {
  readonly listings: ListingsApi;
  readonly users: UsersApi;
  readonly analytics: AnalyticsApi;
  readonly webhooks: WebhooksApi;
  readonly events: EventsApi;
  private readonly transport: Transport;

  constructor(options: ClientOptions) {
    if (typeof options.apiKey !== 'string' || options.apiKey.trim() === '') throw new TypeError('apiKey is required');
    this.transport = new Transport({ ...options, authorization: `Bearer ${options.apiKey.trim()}` });
    this.listings = new ListingsApi(this.transport);
    this.users = new UsersApi(this.transport);
    this.analytics = new AnalyticsApi(this.transport);
    this.webhooks = new WebhooksApi(this.transport);
    this.events = new EventsApi(this.transport, options.sleep);
  }

  /** X-RateLimit-Limit/Remaining/Reset of the latest answer, null before the first one. */
  get rateLimit(): RateLimitInfo | null {
    return this.transport.lastRateLimit;
  }
}

export class ListingsApi {
  private readonly transport: Transport;

  constructor(transport: Transport) {
    this.transport = transport;
  }

  /** One page of active listings. */
  list(query: ListingQuery = {}, options: CallOptions = {}): Promise<ListResponse<Listing>> {
    return this.transport.json({ method: 'GET', path: '/v1/listings', query: { ...query }, signal: options.signal });
  }

  /**
   * Every active listing matching the query, fetched page by page (100 per page unless
   * `limit` says otherwise) as the loop asks for them. Listings created or archived while the
   * walk runs can shift page boundaries, so an item may be seen twice or missed.
   */
  async *listAll(query: ListingQuery = {}, options: CallOptions = {}): AsyncGenerator<Listing, void, undefined> {
    let page = query.page ?? 1;
    const limit = query.limit ?? 100;
    for (;;) {
      const result = await this.list({ ...query, page, limit }, options);
      yield* result.data;
      if (result.data.length === 0 || page >= result.pagination.total_pages) return;
      page += 1;
    }
  }

  /** One listing, archived ones included (with `status: "archived"`). */
  async get(id: string, options: CallOptions = {}): Promise<Listing> {
    const answer = await this.transport.json<Envelope<Listing>>({ method: 'GET', path: `/v1/listings/${segment(id)}`, signal: options.signal });
    return answer.data;
  }

  /** Creates a listing (creators only). Safe to retry: the Idempotency-Key makes a repeat a no-op. */
  async create(input: NewListing, options: PostOptions = {}): Promise<Listing> {
    const answer = await this.transport.json<Envelope<Listing>>({
      method: 'POST',
      path: '/v1/listings',
      body: input,
      signal: options.signal,
      idempotencyKey: options.idempotencyKey,
    });
    return answer.data;
  }

  /** Changes some fields of your own active listing (409 if archived). */
  async update(id: string, patch: ListingPatch, options: CallOptions = {}): Promise<Listing> {
    const answer = await this.transport.json<Envelope<Listing>>({
      method: 'PUT',
      path: `/v1/listings/${segment(id)}`,
      body: patch,
      signal: options.signal,
    });
    return answer.data;
  }

  /** Archives your own listing (DELETE); archiving it again changes nothing. */
  async archive(id: string, options: CallOptions = {}): Promise<Listing> {
    const answer = await this.transport.json<Envelope<Listing>>({ method: 'DELETE', path: `/v1/listings/${segment(id)}`, signal: options.signal });
    return answer.data;
  }
}

export class UsersApi {
  private readonly transport: Transport;

  constructor(transport: Transport) {
    this.transport = transport;
  }

  /** The key's own user, email included. */
  async me(options: CallOptions = {}): Promise<User> {
    const answer = await this.transport.json<Envelope<User>>({ method: 'GET', path: '/v1/users/me', signal: options.signal });
    return answer.data;
  }

  async updateMe(patch: UserPatch, options: CallOptions = {}): Promise<User> {
    const answer = await this.transport.json<Envelope<User>>({ method: 'PUT', path: '/v1/users/me', body: patch, signal: options.signal });
    return answer.data;
  }

  /** Anyone's public profile (no email). */
  async get(id: string, options: CallOptions = {}): Promise<PublicUser> {
    const answer = await this.transport.json<Envelope<PublicUser>>({ method: 'GET', path: `/v1/users/${segment(id)}`, signal: options.signal });
    return answer.data;
  }
}

export class AnalyticsApi {
  private readonly transport: Transport;

  constructor(transport: Transport) {
    this.transport = transport;
  }

  /** The calling key's use: totals, per endpoint, a time series and the current window. */
  async usage(query: UsageQuery = {}, options: CallOptions = {}): Promise<Usage> {
    const answer = await this.transport.json<Envelope<Usage>>({ method: 'GET', path: '/v1/analytics/usage', query: { ...query }, signal: options.signal });
    return answer.data;
  }

  /** Views and impressions of your own listings, one page, with totals. */
  listings(query: ListingStatsQuery = {}, options: CallOptions = {}): Promise<ListingStatsResponse> {
    return this.transport.json({ method: 'GET', path: '/v1/analytics/listings', query: { ...query }, signal: options.signal });
  }
}

export class WebhooksApi {
  private readonly transport: Transport;

  constructor(transport: Transport) {
    this.transport = transport;
  }

  /** Your own webhooks, each with its last delivery. */
  list(query: PageQuery = {}, options: CallOptions = {}): Promise<ListResponse<Webhook>> {
    return this.transport.json({ method: 'GET', path: '/v1/webhooks', query: { ...query }, signal: options.signal });
  }

  /** Registers an endpoint; the answer holds the signing `secret`, shown this once only. */
  async create(input: NewWebhook, options: PostOptions = {}): Promise<WebhookWithSecret> {
    const answer = await this.transport.json<Envelope<WebhookWithSecret>>({
      method: 'POST',
      path: '/v1/webhooks',
      body: input,
      signal: options.signal,
      idempotencyKey: options.idempotencyKey,
    });
    return answer.data;
  }

  /** Changes, pauses (`enabled: false`) or resumes (`enabled: true`) one of your webhooks; resolves to it as it is now. */
  async update(id: string, patch: WebhookPatch, options: CallOptions = {}): Promise<Webhook> {
    const answer = await this.transport.json<Envelope<Webhook>>({ method: 'PATCH', path: `/v1/webhooks/${segment(id)}`, body: patch, signal: options.signal });
    return answer.data;
  }

  /**
   * A new signing secret, shown this once; the old one signs too (as the second signature) for
   * `graceSeconds` (a day when left out, at most 7 days).
   */
  async rotateSecret(id: string, graceSeconds?: number, options: PostOptions = {}): Promise<RotatedSecret> {
    const answer = await this.transport.json<Envelope<RotatedSecret>>({
      method: 'POST',
      path: `/v1/webhooks/${segment(id)}/rotate-secret`,
      body: graceSeconds === undefined ? {} : { grace_seconds: graceSeconds },
      signal: options.signal,
      idempotencyKey: options.idempotencyKey,
    });
    return answer.data;
  }

  /**
   * Sends again now every kept event since `since` whose outcome is not `delivered`, oldest
   * first; one redelivery against the 60 an hour (whose 429 is thrown at once, as redeliver's).
   */
  recover(id: string, since: string | Date, options: PostOptions = {}): Promise<Recovery> {
    return this.transport.json<Recovery>({
      method: 'POST',
      path: `/v1/webhooks/${segment(id)}/recover`,
      body: { since: typeof since === 'string' ? since : since.toISOString() },
      signal: options.signal,
      idempotencyKey: options.idempotencyKey,
      waitOnlyForKeyWindow: true,
    });
  }

  /** Removes one of your webhooks (its undelivered events go with it); resolves to the removed webhook. */
  async delete(id: string, options: CallOptions = {}): Promise<Webhook> {
    const answer = await this.transport.json<Envelope<Webhook>>({ method: 'DELETE', path: `/v1/webhooks/${segment(id)}`, signal: options.signal });
    return answer.data;
  }

  /** One of your webhooks' last 50 delivery outcomes, newest first, one per attempt (needs `read:webhooks`). */
  async deliveries(id: string, options: CallOptions = {}): Promise<DeliveryOutcome[]> {
    const answer = await this.transport.json<Envelope<DeliveryOutcome[]>>({ method: 'GET', path: `/v1/webhooks/${segment(id)}/deliveries`, signal: options.signal });
    return answer.data;
  }

  /**
   * Sends one of those events again now, as a new delivery with the same webhook-id and body and
   * a fresh signature (needs `write:webhooks`); resolves once it is queued (202).
   *
   * Retried like `create`: one Idempotency-Key for the call, so after a lost answer the server
   * replays its first 202 rather than queueing the event a second time. A 429 from the key's
   * own window is waited out as usual; the 429 of the user's 60 redeliveries per hour is
   * thrown at once (its wait can be most of an hour), with `retryAfter` in seconds.
   */
  async redeliver(id: string, eventId: string, options: PostOptions = {}): Promise<QueuedRedelivery> {
    const answer = await this.transport.json<Envelope<QueuedRedelivery>>({
      method: 'POST',
      path: `/v1/webhooks/${segment(id)}/deliveries/${segment(eventId)}/redeliver`,
      signal: options.signal,
      idempotencyKey: options.idempotencyKey,
      waitOnlyForKeyWindow: true,
    });
    return answer.data;
  }
}

export interface EventStreamOptions extends CallOptions {
  /** Start after this event (one of your kept events); without it, from your oldest kept event. */
  lastEventId?: string;
  /** How long to wait before reconnecting a stream that ended or dropped (default 1,000 ms). */
  reconnectDelayMs?: number;
}

/** Your event log (needs `read:webhooks`): the events your webhooks would receive, kept 30 days. */
export class EventsApi {
  private readonly transport: Transport;
  private readonly sleep: SleepFunction;

  constructor(transport: Transport, sleep?: SleepFunction) {
    this.transport = transport;
    this.sleep = sleep ?? timerSleep;
  }

  /** A page of your events, oldest first, after `after`. */
  list(query: EventQuery = {}, options: CallOptions = {}): Promise<EventPage> {
    return this.transport.json({ method: 'GET', path: '/v1/events', query: { ...query }, signal: options.signal });
  }

  /**
   * Your events as they happen (GET /v1/events/stream), oldest kept first or after
   * `lastEventId`. When the stream ends or drops (a server restart, a network failure) it
   * reconnects by itself with the last id it yielded, so nothing is missed or repeated. Ends
   * when `signal` aborts; throws the server's refusal (401 for a revoked key, 403, 400 for an
   * id no longer kept).
   * @example for await (const event of client.events.stream({ signal })) console.log(event.type, event.data);
   */
  async *stream(options: EventStreamOptions = {}): AsyncGenerator<MarketplaceEvent, void, undefined> {
    const { signal } = options;
    let lastEventId = options.lastEventId;
    const delayMs = options.reconnectDelayMs ?? 1_000;
    for (;;) {
      if (signal?.aborted) return;
      const headers: Record<string, string> | undefined = lastEventId === undefined ? undefined : { 'Last-Event-ID': lastEventId };
      let body: ReadableStream<Uint8Array> | null = null;
      try {
        body = await this.transport.stream({ method: 'GET', path: '/v1/events/stream', accept: 'text/event-stream', headers, signal });
        for await (const frame of serverSentEvents(body, signal)) {
          if (frame.id === undefined || frame.data === undefined) continue;
          lastEventId = frame.id;
          yield JSON.parse(frame.data) as MarketplaceEvent;
        }
      } catch (error) {
        if (signal?.aborted) return;
        // The server refused (a revoked key, a lost permission, an unknown id): reconnecting cannot help.
        if (error instanceof MarketplaceApiError) throw error;
      }
      if (signal?.aborted) return;
      try {
        await abortableWait(this.sleep, delayMs, signal);
      } catch {
        return;
      }
    }
  }
}

/** The frames of a text/event-stream body as they arrive: id, event and data of each (comments skipped). */
async function* serverSentEvents(body: ReadableStream<Uint8Array>, signal: AbortSignal | undefined): AsyncGenerator<{ id?: string; event?: string; data?: string }> {
  const decoder = new TextDecoder();
  const reader = body.getReader();
  const cancel = () => void reader.cancel().catch(() => {});
  signal?.addEventListener('abort', cancel, { once: true });
  let buffer = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true }).replace(/\r\n?/g, '\n');
      for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const frame: { id?: string; event?: string; data?: string } = {};
        for (const line of block.split('\n')) {
          if (line === '' || line.startsWith(':')) continue;
          const colon = line.indexOf(':');
          const field = colon === -1 ? line : line.slice(0, colon);
          const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
          if (field === 'id') frame.id = value;
          else if (field === 'event') frame.event = value;
          else if (field === 'data') frame.data = frame.data === undefined ? value : `${frame.data}\n${value}`;
        }
        if (frame.id !== undefined || frame.data !== undefined) yield frame;
      }
    }
  } finally {
    signal?.removeEventListener('abort', cancel);
    cancel();
  }
}
