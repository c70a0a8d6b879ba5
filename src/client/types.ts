// The shapes the Marketplace API sends and accepts (contract sections 2, 7, 8, 10 and 11),
// written out for client users; the client never imports server code, so it ships alone.

export type ListingType = 'SKILL' | 'AGENT' | 'PROMPT' | 'TEMPLATE' | 'DATASET' | 'TOOL';
export type ListingStatus = 'active' | 'archived' | 'removed';
export type Role = 'creator' | 'member';
export type ListingSort = 'created_at' | '-created_at' | 'price' | '-price' | 'title';
export type WebhookEventType =
  | 'listing.created'
  | 'listing.updated'
  | 'listing.archived'
  | 'listing.removed'
  | 'user.updated'
  | 'ping'
  | 'quota.warning'
  | 'quota.exhausted'
  | 'key.expiring'
  | 'plan_request.decided';

export interface Pagination {
  page: number;
  limit: number;
  /** Count of every match, not only this page. */
  total: number;
  total_pages: number;
}

export interface ListResponse<T> {
  data: T[];
  pagination: Pagination;
}

export interface PageQuery {
  /** 1-based; default 1. */
  page?: number;
  /** 1–100; default 20. */
  limit?: number;
}

export interface Listing {
  id: string;
  title: string;
  description: string;
  type: ListingType;
  price: number;
  tags: string[];
  status: ListingStatus;
  owner_id: string;
  created_at: string;
  updated_at: string;
  /** Only while `status` is `removed` (taken down by the operator). */
  removal_reason?: string;
  removed_at?: string;
}

export interface ListingQuery extends PageQuery {
  type?: ListingType;
  /** Word-prefix search: every word of q starts a word of the title, description or tags (case and accents ignored). */
  q?: string;
  min_price?: number;
  max_price?: number;
  owner_id?: string;
  sort?: ListingSort;
}

export interface NewListing {
  title: string;
  type: ListingType;
  price: number;
  description?: string;
  tags?: string[];
}

/** A non-empty subset of the creatable fields. */
export type ListingPatch = Partial<NewListing>;

/** Another user's profile: never carries an email. */
export interface PublicUser {
  id: string;
  name: string;
  bio: string;
  website: string;
  avatar_url: string;
  role: Role;
  created_at: string;
}

/** The caller's own profile (`/v1/users/me`), and what the operator API shows. */
export interface User extends PublicUser {
  email: string;
  updated_at: string;
}

export interface UserPatch {
  name?: string;
  bio?: string;
  website?: string;
  avatar_url?: string;
  email?: string;
}

export interface LastDelivery {
  event_id: string;
  type: WebhookEventType;
  status: 'delivered' | 'retrying' | 'failed';
  attempts: number;
  /** The receiver's HTTP status, null when it could not be reached. */
  response_status: number | null;
  at: string;
}

export interface Webhook {
  id: string;
  url: string;
  events: WebhookEventType[];
  description: string;
  /** False while paused, once the receiver answered 410 Gone, or once every delivery failed for 5 days. */
  active: boolean;
  /** The same as `active`; `webhooks.update(id, { enabled })` pauses or resumes it. */
  enabled: boolean;
  /** Why it is sent nothing: paused by you, gone (a 410), failing (5 days of failures); null while enabled. */
  disabled_reason: 'paused' | 'gone' | 'failing' | null;
  created_at: string;
  last_delivery: LastDelivery | null;
}

/** A change to a webhook (`PATCH /v1/webhooks/:id`): only the fields given change. */
export interface WebhookPatch {
  url?: string;
  events?: WebhookEventType[];
  description?: string;
  /** `false` pauses it, `true` resumes it (keeping its id and secret). */
  enabled?: boolean;
}

/** What a secret rotation answers (201): the new secret, shown once, and the old one's end. */
export interface RotatedSecret {
  secret: string;
  previous_secret_expires_at: string;
}

/** What a recovery answers (202): how many events are sent again. */
export interface Recovery {
  events: number;
}

/** Only the creation answer carries the signing secret (`whsec_…`). */
export interface WebhookWithSecret extends Webhook {
  secret: string;
}

/** One attempt to deliver an event to a webhook (`GET /v1/webhooks/:id/deliveries`); never its body. */
export interface DeliveryOutcome {
  /** When the attempt's outcome was known. */
  at: string;
  event_id: string;
  /** The event kind, e.g. `ping` (the document gives it as a plain string). */
  event: string;
  /** `retrying`: this attempt failed and another is scheduled; `skipped`: the webhook was paused, nothing was sent. */
  status: 'delivered' | 'retrying' | 'failed' | 'skipped';
  /** Which attempt this was; a redelivery counts from 1 again; 0 when skipped. */
  attempts: number;
  /** The receiver's HTTP status, null when none arrived (timeout, refused connection). */
  response_status: number | null;
  /** From dialling to the end of the receiver's answer or the failure. */
  duration_ms: number;
  /** While `retrying`: when the next attempt is due; otherwise null. */
  next_attempt_at: string | null;
}

/** What a redelivery answers (202): the event queued again for the webhook. */
export interface QueuedRedelivery {
  webhook_id: string;
  event_id: string;
  type: WebhookEventType;
  status: 'pending';
}

export interface NewWebhook {
  url: string;
  /** A non-empty subset; default every event kind. */
  events?: WebhookEventType[];
  description?: string;
}

export interface StatusCounts {
  '2xx': number;
  '3xx': number;
  '4xx': number;
  '5xx': number;
}

/** Requests counted, by status class, and how many of them were refused with 429. */
export interface UsageCounts {
  requests: number;
  by_status: StatusCounts;
  rate_limited: number;
}

export interface UsageQuery {
  /** Bucket size of the series; default `hour`. */
  granularity?: 'hour' | 'day';
  /** ISO 8601 time with `Z` or an offset, or a date; rounded down to a whole bucket. Default: 24 h (hour) or 30 days (day) before `to`. */
  from?: string;
  /** Rounded up to a whole bucket; default the end of the current bucket. */
  to?: string;
}

export interface EndpointUsage extends UsageCounts {
  /** `METHOD /route/:pattern`, e.g. `GET /v1/listings/:id` (never a raw path with ids). */
  endpoint: string;
  method: string;
  route: string;
}

export interface UsagePoint extends UsageCounts {
  /** Start of the bucket, ISO. */
  start: string;
  /** 4xx and 5xx answers other than 429. */
  errors: number;
}

export interface Usage {
  key_id: string;
  granularity: 'hour' | 'day';
  /** The range actually covered, on bucket boundaries. */
  from: string;
  to: string;
  /** Over the range. */
  totals: UsageCounts;
  /** Most requests first. */
  endpoints: EndpointUsage[];
  /** One point per bucket of the range, empty ones included, oldest first. */
  series: { granularity: 'hour' | 'day'; from: string; to: string; points: UsagePoint[] };
  /** The key's rate-limit window now (`reset` in Unix seconds), read without counting a request; shared by its user's keys on its plan. */
  window: { limit: number; remaining: number; reset: number };
  /** The quota of the key's plan, shared by its user's keys on the plan; null when the plan has none. */
  quota: QuotaUsage | null;
}

/** A plan quota's count now (the usage reads, and the operator's top-up). */
export interface QuotaUsage {
  requests: number;
  used: number;
  remaining: number;
  period: QuotaPeriod;
  /** When the UTC day or month ends and the count starts again at 0. */
  resets_at: string;
}

export type QuotaPeriod = 'day' | 'month';

/** Requests per UTC day or month that a plan allows, shared by one user's keys on it. */
export interface PlanQuota {
  requests: number;
  period: QuotaPeriod;
}

/** The operator's change of a count: set it (`used`) or top it up (`add` taken off it). */
export type QuotaChange = { used: number } | { add: number };

export type ListingStatsSort = '-views' | 'views' | '-impressions' | 'impressions';

export interface ListingStatsQuery extends PageQuery {
  /** Default `-views`; ties by listing id. */
  sort?: ListingStatsSort;
  /** Whole hours; both open by default (every count kept). */
  from?: string;
  to?: string;
}

export interface ListingStats {
  listing_id: string;
  title: string;
  /** Archived listings are included: their counts so far stay their owner's. */
  status: ListingStatus;
  /** Successful `GET /v1/listings/:id`. */
  views: number;
  /** Appearances on a served `GET /v1/listings` page, cached pages included. */
  impressions: number;
}

export interface ListingStatsResponse extends ListResponse<ListingStats> {
  /** Over every one of your listings, not just this page. */
  totals: { views: number; impressions: number };
}

// Operator API (/admin/v1)

/** The operator sees every user field, email included (the same shape as `/v1/users/me`). */
export type UserStatus = 'active' | 'suspended' | 'erased';

/** A user as the operator sees them: the private view plus moderation state. */
export interface AdminUser extends User {
  status: UserStatus;
  suspended_at: string | null;
  suspension_reason: string | null;
  /** Whether the user signs in to the portal with a second factor. */
  two_factor: boolean;
}

/** GET /admin/v1/users: a page, and part of the name or email to look for. */
export interface AdminUserQuery extends PageQuery {
  q?: string;
}

/** GET /admin/v1/users/:id: the user with counts of what they own. */
export interface AdminUserDetail extends AdminUser {
  counts: { listings: number; keys: number; active_keys: number; webhooks: number };
}

export interface AdminListingQuery extends PageQuery {
  status?: ListingStatus;
  owner_id?: string;
  q?: string;
}

/** One operator action, recorded with the change it made. */
/** Who did an audited action: the operator, or a user in the developer portal. */
export type AuditActor = { type: 'operator' } | { type: 'user'; id: string };

export interface AuditEntry {
  id: string;
  at: string;
  actor: AuditActor;
  action: string;
  target_type: 'user' | 'key' | 'listing' | 'store' | 'plan' | 'webhook';
  target_id: string;
  changes: Record<string, unknown>;
  request_id: string;
}

/** A portal invitation: the link to hand the user (the token is in its fragment), shown once. */
/** A user's two-factor sign-in, as the operator's reset answers it. */
export interface TwoFactorStatus {
  enabled: boolean;
  recovery_codes_left: number;
}

/** What sealing the two-factor secrets again under the current operator token did. */
export interface ResealResult {
  resealed: number;
  already_current: number;
  /** Secrets opened by neither token. */
  unreadable: number;
}

export interface Invitation {
  url: string;
  token: string;
  expires_at: string;
}

export interface AuditQuery extends PageQuery {
  action?: string;
  target_id?: string;
}

export interface NewUser {
  name: string;
  email?: string;
  role?: Role;
  bio?: string;
}

export interface AdminUserPatch {
  role?: Role;
  name?: string;
  email?: string;
  bio?: string;
}

/** A key as the operator API shows it: never the secret, never its hash. */
export interface ApiKeyInfo {
  id: string;
  user_id: string;
  name: string;
  /** The key's visible start, e.g. `market_live_`; with `last_four` it identifies a key to a person. */
  prefix: string;
  last_four: string;
  permissions: string[];
  /** Requests per minute. */
  rate_limit: number;
  created_at: string;
  updated_at: string;
  /** Set once the key is revoked; it is refused (401) from then on. */
  revoked_at: string | null;
  /** When the key stops working (401 saying it expired); null: never. */
  expires_at: string | null;
  /** The plan that sets `rate_limit`; null when the operator gave the key a limit of its own. */
  plan: string | null;
  /** After a roll with a grace period: until when the previous secret is also accepted. */
  previous_secret_expires_at: string | null;
  /** The latest request made with the key (from the analytics counters), null if never or unknown. */
  last_used_at: string | null;
}

/** A rolled key: the new plain key (shown once) and when the previous secret stops working. */
export interface RolledApiKey extends ApiKeyInfo {
  key: string;
  previous_secret_expires_at: string;
}

/** A tier of requests per minute; users switch to `self_service` plans themselves, and request the others. */
export interface Plan {
  id: string;
  name: string;
  rate_limit: number;
  self_service: boolean;
  /** Requests per UTC day or month, shared by one user's keys on the plan; null: none. */
  quota: PlanQuota | null;
}

/** A plan as saved with `plans.replace`: its quota may be left out (meaning none). */
export type PlanInput = Omit<Plan, 'quota'> & { quota?: PlanQuota | null };

export interface PlanRequest {
  id: string;
  key_id: string;
  user_id: string;
  plan: string;
  status: 'pending' | 'approved' | 'declined' | 'cancelled';
  created_at: string;
  decided_at: string | null;
  /** The operator's note on the decision, or null. */
  note: string | null;
}

export interface PlanRequestQuery extends PageQuery {
  status?: PlanRequest['status'];
}

/** The creation answer: `key` is the plain secret, shown this once only. */
export interface NewApiKey extends ApiKeyInfo {
  key: string;
}

export interface NewKeyInput {
  user_id: string;
  name?: string;
  /** Default `["read:listings"]`. */
  permissions?: string[];
  /** 1 to 1,000,000 requests per minute (the key is then on no plan); not with `plan`. */
  rate_limit?: number;
  /** A plan id: the key's limit comes from the plan. With neither, the lowest self-service plan (Free). */
  plan?: string;
  /** A future instant (ISO 8601) when the key stops working. */
  expires_at?: string | null;
  /** Default `live` (`<brand>_live_…`). */
  prefix?: 'mk' | 'live';
}

export interface KeyPatch {
  permissions?: string[];
  rate_limit?: number;
  plan?: string;
  /** null: never expires. */
  expires_at?: string | null;
  name?: string;
}

export interface KeyQuery extends PageQuery {
  user_id?: string;
}

/** What the server reports after compacting its log. */
export interface CompactResult {
  bytes_before: number;
  bytes_after: number;
  /** Records in the compacted log. */
  records: number;
}

/** The store's counters, as `GET /admin/v1/stats` shows them. */
export interface StoreStats {
  /** Operations acknowledged since start. */
  writes: number;
  batches: number;
  /** Writes decided again because another server changed what they read (a shared database only). */
  conflicts: number;
  /** The same writes by the collections they were to change (a write counts once under each). */
  conflictsByCollection: Record<string, number>;
  /** The log file's fsyncs (a server on the file log only). */
  fsyncs?: number;
  /** Batches committed to PostgreSQL (a server on PostgreSQL only). */
  commits?: number;
  opsInLog: number;
  liveRecords: number;
  /** The log file's size (a server on the file log only). */
  logBytes?: number;
  compactions: number;
  /** False after a failed write until the next one succeeds. */
  writable: boolean;
  lastWriteError: string | null;
}

export interface ServerStats {
  /** The server's version (package.json). */
  version: string;
  uptime_seconds: number;
  users: number;
  keys: number;
  store: StoreStats;
  /** Where records and rate limits are kept, in words ("file log in ./data", "Redis at cache:6380 (TLS)"). */
  backends?: { records: string; limits: string };
}

/** A webhook as the operator sees it: the owner's view plus whose it is; never the secret. */
export interface AdminWebhook extends Webhook {
  user_id: string;
}

export interface AdminWebhookQuery extends PageQuery {
  user_id?: string;
}

/** The rate-limit headers of the last answer (contract section 6). */
export interface RateLimitInfo {
  limit: number;
  remaining: number;
  /** Unix seconds at which the window has room again. */
  reset: number;
}

/** One of your events (GET /v1/events and its stream): the same id and body your webhooks get. */
export interface MarketplaceEvent {
  id: string;
  type: WebhookEventType;
  created_at: string;
  data: Record<string, unknown>;
}

/** A page of your events, oldest first; ask again with `after` = the last id while `has_more`. */
export interface EventPage {
  data: MarketplaceEvent[];
  has_more: boolean;
}

export interface EventQuery {
  /** The id of one of your kept events: the page starts after it. */
  after?: string;
  /** 1-100, default 50. */
  limit?: number;
}
