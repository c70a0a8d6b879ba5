// The client's copies of the server's types, tied to them. The typed client (src/client/) imports
// no server code, so the package's ./client export stands alone: its types are written out again
// in src/client/types.ts rather than imported. Some are the server's own types, copied: the store's
// counters, the analytics counts, the names of listing types, statuses, roles, sort orders and
// webhook events, pages, plans, audit actors, a webhook's last delivery, a listing's counts.
// Each pair below must be the same type (Equal: same fields, same optional marks, same field
// types), so `npm run typecheck`, which checks test/ too, fails as soon as one copy changes
// without the other. The server keeps its records readonly; the client's copies are plain
// objects a user may build, so those are compared without the readonly marks. Types the client
// shapes differently on purpose (a user's role as a name, a delivery outcome as answers show it)
// are left to types-match-document.test.ts, which checks them against /openapi.json.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import type * as Client from '../../src/client/types.ts';
import type { EndpointUsage, ListingCounts, UsagePoint } from '../../src/analytics/reader.ts';
import type { StatusCounts, UsageCounts } from '../../src/analytics/buckets.ts';
import type { AuditActor, ListingStatus, ListingType, Plan, PlanQuota, Role, UserStatus } from '../../src/domain/records.ts';
import type { EventType } from '../../src/domain/events.ts';
import type { LastDelivery } from '../../src/domain/webhook-records.ts';
import type { Pagination } from '../../src/http/lists.ts';
import type { SortKey } from '../../src/listings/listing-search.ts';
import type { ListingStats } from '../../src/resources/usage.ts';
import type { StoreStats } from '../../src/store/store.ts';

/** True only when A and B are the same type (readonly and optional marks included). */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Expect<T extends true> = T;
/** A server record without its readonly marks (a union member by member). */
type Writable<T> = { -readonly [K in keyof T]: T[K] };

/** Each line fails to compile ("Type 'false' does not satisfy the constraint 'true'") when its pair drifts apart. */
export type CopiesMatch = [
  // Word for word
  Expect<Equal<Client.StoreStats, StoreStats>>,
  Expect<Equal<Client.StatusCounts, StatusCounts>>,
  Expect<Equal<Client.UsageCounts, UsageCounts>>,
  Expect<Equal<Client.EndpointUsage, EndpointUsage>>,
  Expect<Equal<Client.UsagePoint, UsagePoint>>,
  Expect<Equal<Client.Pagination, Pagination>>,
  // Names
  Expect<Equal<Client.ListingType, ListingType>>,
  Expect<Equal<Client.ListingStatus, ListingStatus>>,
  Expect<Equal<Client.Role, Role>>,
  Expect<Equal<Client.UserStatus, UserStatus>>,
  Expect<Equal<Client.ListingSort, SortKey>>,
  Expect<Equal<Client.WebhookEventType, EventType>>,
  // The same fields, written another way
  Expect<Equal<Client.ListingStats, ListingStats>>,
  Expect<Equal<Pick<Client.ListingStats, 'views' | 'impressions'>, ListingCounts>>,
  // A stored plan may lack `quota` (saved before quotas); every answer has it (null when none).
  Expect<Equal<Omit<Client.Plan, 'quota'>, Writable<Omit<Plan, 'quota'>>>>,
  Expect<Equal<Client.Plan['quota'], Client.PlanQuota | null>>,
  Expect<Equal<Client.PlanQuota, Writable<PlanQuota>>>,
  Expect<Equal<Client.AuditActor, Writable<AuditActor>>>,
  Expect<Equal<Client.LastDelivery, Writable<LastDelivery>>>,
];

const CLIENT = resolve(import.meta.dirname, '../../src/client');

test('the client imports nothing from outside src/client/ (why it keeps copies of the types above)', () => {
  let seen = 0;
  for (const name of readdirSync(CLIENT).filter((file) => file.endsWith('.ts'))) {
    const text = readFileSync(join(CLIENT, name), 'utf8');
    for (const [, specifier] of text.matchAll(/^\s*(?:import|export)\s[^;]*?from\s+['"]([^'"]+)['"]/gm)) {
      seen++;
      assert.ok(specifier!.startsWith('./') || specifier!.startsWith('node:'), `src/client/${name} imports ${specifier}`);
    }
  }
  assert.ok(seen > 5, `only ${seen} imports found in src/client/: the scan is broken`);
});
