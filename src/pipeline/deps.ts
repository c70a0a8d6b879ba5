// What the request pipeline is built from: the parts src/app.ts made once (the store, the
// authenticator, the limiters, the routers…). Each gate (v1-gate.ts, portal-gate.ts,
// admin-gate.ts, public-gate.ts) takes the few of them its steps use.

import type { Metering } from '../analytics/quota-counters.ts';
import type { KeyAuthenticator } from '../auth/authenticate.ts';
import type { Clock } from '../clock.ts';
import type { ClientAddress } from '../http/client-address.ts';
import type { CorsPolicy } from '../http/cors.ts';
import type { PostIdempotency } from '../http/key-context.ts';
import type { AnswerCompression } from '../http/respond.ts';
import type { ApiRoute, AdminRoute, PublicRoute } from '../http/route.ts';
import type { RateLimiter } from '../limits/rate-limiter.ts';
import type { Router } from '../router.ts';
import type { Store } from '../store/store.ts';
import type { ModuleArea } from './areas.ts';
import type { Gate, Run } from './gate.ts';
import type { RequestObserver } from './request-observer.ts';

export interface PipelineDeps {
  clock: Clock;
  store: Store;
  authenticator: KeyAuthenticator;
  keyLimiter: RateLimiter;
  /** What each key is metered as, and the plans' quotas when the plans module is loaded (contract section 23). */
  metering: Metering;
  /** Counts failed authentications per client address (contract section 3). */
  failedAuthLimiter: RateLimiter;
  failedAuthLimit: number;
  apiRoutes: Router<ApiRoute>;
  adminRoutes: Router<AdminRoute>;
  publicRoutes: Router<PublicRoute>;
  /** The modules' own areas (the portal's /portal/v1), each making its gate on the listener's `run`. */
  moduleAreas: readonly (ModuleArea & { makeGate(run: Run): Gate })[];
  operatorToken: string;
  /** Idempotency-Key on /v1 POSTs (the idempotency module); null: the header is not read. */
  idempotency: PostIdempotency | null;
  /** Which browser origins may call /v1 (CORS_ORIGINS); null when none may (its code is then never loaded). */
  cors: CorsPolicy | null;
  /** The client's address (TRUST_PROXY decides whether X-Forwarded-For is believed). */
  clientAddress: ClientAddress;
  /** Counts each request: usage, metrics, the access log, the CPU its key used (request-observer.ts). */
  observer: RequestObserver;
  /** Compresses answers for clients that accept it (the compression module); null sends them plain. */
  compression: AnswerCompression | null;
  /** Static files (the dashboard): an answer, or null when the path is not one. */
  staticAsset?: ((path: string) => { status: number; headers: Record<string, string>; body: Buffer } | null) | null;
  logError: (requestId: string, error: unknown) => void;
}
