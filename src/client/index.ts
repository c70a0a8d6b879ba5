// The client package's entry (`marketplace-api/client`): the two clients, their errors and
// every resource type. Zero dependencies; runs wherever a global fetch exists (Node 18+, browsers).

export { MarketplaceClient, ListingsApi, UsersApi, AnalyticsApi, WebhooksApi, EventsApi } from './marketplace-client.ts';
export type { ClientOptions, CallOptions, PostOptions, EventStreamOptions } from './marketplace-client.ts';
export { AdminClient, AdminUsersApi, AdminKeysApi, AdminWebhooksApi, AdminListingsApi, AdminPlansApi, AdminPlanRequestsApi } from './admin-client.ts';
export type { AdminClientOptions } from './admin-client.ts';
export { MarketplaceApiError, MarketplaceNetworkError } from './errors.ts';
export { backoffDelay, rateLimitWait, timerSleep, DEFAULT_MAX_RETRIES, BACKOFF_START_MS, BACKOFF_CAP_MS } from './retry.ts';
export type { RetryOptions, SleepFunction } from './retry.ts';
export type * from './types.ts';
