// The typed client for the operator API (/admin/v1), authenticated with the admin token:
// users (and their moderation), API keys, plans and plan requests, listings (moderation), the
// audit log, webhooks (read-only), server stats, metrics, log compaction and backup.
// The CLI is a thin shell around it.

import { segment, Transport } from './transport.ts';
import type {
  AdminListingQuery,
  AdminUser,
  AdminUserDetail,
  AdminUserQuery,
  AuditEntry,
  AuditQuery,
  Invitation,
  Listing,
  AdminUserPatch,
  AdminWebhook,
  AdminWebhookQuery,
  ApiKeyInfo,
  CompactResult,
  KeyPatch,
  KeyQuery,
  ListResponse,
  NewApiKey,
  NewKeyInput,
  NewUser,
  Plan,
  PlanInput,
  QuotaChange,
  QuotaUsage,
  PlanRequest,
  PlanRequestQuery,
  RolledApiKey,
  ResealResult,
  ServerStats,
  TwoFactorStatus,
  Usage,
  UsageQuery,
} from './types.ts';
import type { CallOptions, ClientOptions, Envelope, PostOptions } from './marketplace-client.ts';

/** The same options as MarketplaceClient's, with the operator token instead of an API key. */
export interface AdminClientOptions extends Omit<ClientOptions, 'apiKey'> {
  /** MARKETPLACE_ADMIN_TOKEN, or the contents of DATA_DIR/admin-token. */
  token: string;
}

export class AdminClient {
  readonly users: AdminUsersApi;
  readonly keys: AdminKeysApi;
  readonly webhooks: AdminWebhooksApi;
  readonly listings: AdminListingsApi;
  readonly plans: AdminPlansApi;
  readonly planRequests: AdminPlanRequestsApi;
  private readonly transport: Transport;

  constructor(options: AdminClientOptions) {
    if (typeof options.token !== 'string' || options.token.trim() === '') throw new TypeError('token is required');
    this.transport = new Transport({ ...options, authorization: `Bearer ${options.token.trim()}` });
    this.users = new AdminUsersApi(this.transport);
    this.keys = new AdminKeysApi(this.transport);
    this.webhooks = new AdminWebhooksApi(this.transport);
    this.listings = new AdminListingsApi(this.transport);
    this.plans = new AdminPlansApi(this.transport);
    this.planRequests = new AdminPlanRequestsApi(this.transport);
  }

  /** What operators did, newest first (filters: action, target_id). */
  audit(query: AuditQuery = {}, options: CallOptions = {}): Promise<ListResponse<AuditEntry>> {
    return this.transport.json({ method: 'GET', path: '/admin/v1/audit', query: { ...query }, signal: options.signal });
  }

  /**
   * After the operator token changed: seals every stored two-factor secret again under the
   * current token, given the one they were sealed with.
   */
  async resealTwoFactorSecrets(oldToken: string, options: CallOptions = {}): Promise<ResealResult> {
    const answer = await this.transport.json<Envelope<ResealResult>>({ method: 'POST', path: '/admin/v1/two-factor/reseal', body: { old_token: oldToken }, signal: options.signal, retryOnNetworkError: true });
    return answer.data;
  }

  /** The Prometheus text of GET /metrics. */
  async metrics(options: CallOptions = {}): Promise<string> {
    const stream = await this.transport.stream({ method: 'GET', path: '/metrics', signal: options.signal, accept: 'text/plain' });
    return new Response(stream).text();
  }

  /** Uptime, user and key counts, the store's counters (log size and fsyncs, or commits; writability), and where records and limits are kept. */
  async stats(options: CallOptions = {}): Promise<ServerStats> {
    const answer = await this.transport.json<Envelope<ServerStats>>({ method: 'GET', path: '/admin/v1/stats', signal: options.signal });
    return answer.data;
  }

  /** Rewrites the server's log down to its live records now, instead of waiting for the threshold. */
  async compact(options: CallOptions = {}): Promise<CompactResult> {
    // Compacting twice is harmless, so a network failure may be retried like a GET.
    const answer = await this.transport.json<Envelope<CompactResult>>({
      method: 'POST',
      path: '/admin/v1/compact',
      signal: options.signal,
      retryOnNetworkError: true,
    });
    return answer.data;
  }

  /**
   * A consistent copy of the server's log (JSON lines, application/x-ndjson) as a byte stream.
   * It holds emails and key hashes: store it as carefully as the data directory.
   */
  backup(options: CallOptions = {}): Promise<ReadableStream<Uint8Array>> {
    return this.transport.stream({ method: 'GET', path: '/admin/v1/backup', signal: options.signal, accept: 'application/x-ndjson' });
  }
}

// Admin POSTs are not retried after a network failure: the contract promises Idempotency-Key
// deduplication for /v1 only, and a blind repeat could make a second user or key. A 429 is
// still retried, since the server did nothing with a refused request.

export class AdminUsersApi {
  private readonly transport: Transport;

  constructor(transport: Transport) {
    this.transport = transport;
  }

  async create(input: NewUser, options: PostOptions = {}): Promise<AdminUser> {
    const answer = await this.transport.json<Envelope<AdminUser>>({
      method: 'POST',
      path: '/admin/v1/users',
      body: input,
      signal: options.signal,
      idempotencyKey: options.idempotencyKey,
      retryOnNetworkError: false,
    });
    return answer.data;
  }

  /** Users oldest first; `q` keeps those whose name or email contains it (any case). */
  list(query: AdminUserQuery = {}, options: CallOptions = {}): Promise<ListResponse<AdminUser>> {
    return this.transport.json({ method: 'GET', path: '/admin/v1/users', query: { ...query }, signal: options.signal });
  }

  /** One user whatever their status, with counts of their listings, keys and webhooks. */
  async get(id: string, options: CallOptions = {}): Promise<AdminUserDetail> {
    const answer = await this.transport.json<Envelope<AdminUserDetail>>({ method: 'GET', path: `/admin/v1/users/${segment(id)}`, signal: options.signal });
    return answer.data;
  }

  /** Suspends a user: their keys get 403, their listings are hidden, their webhooks receive nothing. */
  async suspend(id: string, reason: string, options: CallOptions = {}): Promise<AdminUser> {
    const answer = await this.transport.json<Envelope<AdminUser>>({ method: 'POST', path: `/admin/v1/users/${segment(id)}/suspend`, body: { reason }, signal: options.signal });
    return answer.data;
  }

  async unsuspend(id: string, options: CallOptions = {}): Promise<AdminUser> {
    const answer = await this.transport.json<Envelope<AdminUser>>({ method: 'POST', path: `/admin/v1/users/${segment(id)}/unsuspend`, signal: options.signal });
    return answer.data;
  }

  /**
   * Erases a user for good: keys revoked, webhooks removed, listings removed, personal data
   * erased from the server's data directory. Asking again is harmless.
   */
  async erase(id: string, options: CallOptions = {}): Promise<AdminUser> {
    const answer = await this.transport.json<Envelope<AdminUser>>({ method: 'DELETE', path: `/admin/v1/users/${segment(id)}`, signal: options.signal });
    return answer.data;
  }

  /**
   * A single-use link (valid 72 hours) for the user to set a password in the developer portal,
   * also how a forgotten password is reset; a new one voids the previous one.
   */
  async invite(id: string, options: CallOptions = {}): Promise<Invitation> {
    const answer = await this.transport.json<Envelope<Invitation>>({ method: 'POST', path: `/admin/v1/users/${segment(id)}/invitations`, signal: options.signal });
    return answer.data;
  }

  /**
   * Turns the user's two-factor sign-in off (they lost their app and recovery codes) and ends
   * every session of theirs; `reason` is kept in the audit log.
   */
  async resetTwoFactor(id: string, reason: string, options: CallOptions = {}): Promise<TwoFactorStatus> {
    const answer = await this.transport.json<Envelope<TwoFactorStatus>>({ method: 'DELETE', path: `/admin/v1/users/${segment(id)}/two-factor`, body: { reason }, signal: options.signal });
    return answer.data;
  }

  /** Changes a user's role (e.g. to `creator`), name, email or bio. */
  async update(id: string, patch: AdminUserPatch, options: CallOptions = {}): Promise<AdminUser> {
    const answer = await this.transport.json<Envelope<AdminUser>>({
      method: 'PATCH',
      path: `/admin/v1/users/${segment(id)}`,
      body: patch,
      signal: options.signal,
    });
    return answer.data;
  }
}

export class AdminKeysApi {
  private readonly transport: Transport;

  constructor(transport: Transport) {
    this.transport = transport;
  }

  /** Makes a key; the answer's `key` is the plain secret, which the server never shows again. */
  async create(input: NewKeyInput, options: PostOptions = {}): Promise<NewApiKey> {
    const answer = await this.transport.json<Envelope<NewApiKey>>({
      method: 'POST',
      path: '/admin/v1/keys',
      body: input,
      signal: options.signal,
      idempotencyKey: options.idempotencyKey,
      retryOnNetworkError: false,
    });
    return answer.data;
  }

  list(query: KeyQuery = {}, options: CallOptions = {}): Promise<ListResponse<ApiKeyInfo>> {
    return this.transport.json({ method: 'GET', path: '/admin/v1/keys', query: { ...query }, signal: options.signal });
  }

  /** Changes permissions, rate limit or name; the server applies it from the very next request. */
  async update(id: string, patch: KeyPatch, options: CallOptions = {}): Promise<ApiKeyInfo> {
    const answer = await this.transport.json<Envelope<ApiKeyInfo>>({
      method: 'PATCH',
      path: `/admin/v1/keys/${segment(id)}`,
      body: patch,
      signal: options.signal,
    });
    return answer.data;
  }

  /** Any key's usage: the same answer as `/v1/analytics/usage` gives the key itself. */
  async usage(id: string, query: UsageQuery = {}, options: CallOptions = {}): Promise<Usage> {
    const answer = await this.transport.json<Envelope<Usage>>({
      method: 'GET',
      path: `/admin/v1/keys/${segment(id)}/usage`,
      query: { ...query },
      signal: options.signal,
    });
    return answer.data;
  }

  /**
   * A new secret for the same key (permissions, plan and usage kept); the previous secret keeps
   * working for `graceSeconds` (0 to 604800), then is refused. The answer's `key` is shown once.
   */
  async roll(id: string, graceSeconds = 0, options: CallOptions = {}): Promise<RolledApiKey> {
    const answer = await this.transport.json<Envelope<RolledApiKey>>({
      method: 'POST',
      path: `/admin/v1/keys/${segment(id)}/roll`,
      body: { grace_seconds: graceSeconds },
      signal: options.signal,
      retryOnNetworkError: false,
    });
    return answer.data;
  }

  /**
   * Sets (`{used}`) or tops up (`{add}`) the count of the key's user and plan against the plan's
   * quota in the current period (POST /admin/v1/keys/:id/quota); every key of the user on the
   * plan gets the room. Not retried on a network error: a top-up sent twice would add twice.
   */
  async setQuota(id: string, change: QuotaChange, options: CallOptions = {}): Promise<QuotaUsage> {
    const answer = await this.transport.json<Envelope<QuotaUsage>>({ method: 'POST', path: `/admin/v1/keys/${segment(id)}/quota`, body: change, signal: options.signal, retryOnNetworkError: false });
    return answer.data;
  }

  /** Revokes a key for good (DELETE); it is refused from the very next request. */
  async revoke(id: string, options: CallOptions = {}): Promise<ApiKeyInfo> {
    const answer = await this.transport.json<Envelope<ApiKeyInfo>>({ method: 'DELETE', path: `/admin/v1/keys/${segment(id)}`, signal: options.signal });
    return answer.data;
  }
}

export class AdminWebhooksApi {
  private readonly transport: Transport;

  constructor(transport: Transport) {
    this.transport = transport;
  }

  /** Every user's webhooks (or one user's with `user_id`), newest first; never a secret. */
  list(query: AdminWebhookQuery = {}, options: CallOptions = {}): Promise<ListResponse<AdminWebhook>> {
    return this.transport.json({ method: 'GET', path: '/admin/v1/webhooks', query: { ...query }, signal: options.signal });
  }
}

export class AdminListingsApi {
  private readonly transport: Transport;

  constructor(transport: Transport) {
    this.transport = transport;
  }

  /** Every listing whatever its status, newest first (filters: status, owner_id, q). */
  list(query: AdminListingQuery = {}, options: CallOptions = {}): Promise<ListResponse<Listing>> {
    return this.transport.json({ method: 'GET', path: '/admin/v1/listings', query: { ...query }, signal: options.signal });
  }

  /** Takes a listing down: gone from lists, 404 to all but its owner, who can no longer change it. */
  async remove(id: string, reason: string, options: CallOptions = {}): Promise<Listing> {
    const answer = await this.transport.json<Envelope<Listing>>({ method: 'POST', path: `/admin/v1/listings/${segment(id)}/remove`, body: { reason }, signal: options.signal });
    return answer.data;
  }

  /** Makes a removed listing active again. */
  async restore(id: string, options: CallOptions = {}): Promise<Listing> {
    const answer = await this.transport.json<Envelope<Listing>>({ method: 'POST', path: `/admin/v1/listings/${segment(id)}/restore`, signal: options.signal });
    return answer.data;
  }
}

export class AdminPlansApi {
  private readonly transport: Transport;

  constructor(transport: Transport) {
    this.transport = transport;
  }

  /** The plans in force (Free, Pro, Business until the operator saves a list). */
  async list(options: CallOptions = {}): Promise<Plan[]> {
    const answer = await this.transport.json<Envelope<Plan[]>>({ method: 'GET', path: '/admin/v1/plans', signal: options.signal });
    return answer.data;
  }

  /** Replaces the whole list; keys on a plan whose limit changed get the new limit at once. */
  async replace(plans: PlanInput[], options: CallOptions = {}): Promise<Plan[]> {
    // Replacing with the same list twice is harmless, so a network failure may be retried.
    const answer = await this.transport.json<Envelope<Plan[]>>({ method: 'PUT', path: '/admin/v1/plans', body: { plans }, signal: options.signal });
    return answer.data;
  }
}

export class AdminPlanRequestsApi {
  private readonly transport: Transport;

  constructor(transport: Transport) {
    this.transport = transport;
  }

  /** Requests newest first; `status` filters (e.g. `pending`). */
  list(query: PlanRequestQuery = {}, options: CallOptions = {}): Promise<ListResponse<PlanRequest>> {
    return this.transport.json({ method: 'GET', path: '/admin/v1/plan-requests', query: { ...query }, signal: options.signal });
  }

  /** Approves: the key moves to the plan, and its rate limit with it, from its next request. */
  async approve(id: string, options: CallOptions = {}): Promise<PlanRequest> {
    const answer = await this.transport.json<Envelope<PlanRequest>>({ method: 'POST', path: `/admin/v1/plan-requests/${segment(id)}/approve`, signal: options.signal, retryOnNetworkError: false });
    return answer.data;
  }

  async decline(id: string, options: CallOptions = {}): Promise<PlanRequest> {
    const answer = await this.transport.json<Envelope<PlanRequest>>({ method: 'POST', path: `/admin/v1/plan-requests/${segment(id)}/decline`, signal: options.signal, retryOnNetworkError: false });
    return answer.data;
  }
}
