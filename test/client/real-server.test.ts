// The typed client against the real server (createApp on port 0): every listing, user,
// analytics, webhook and operator method, the typed errors the server's answers become,
// Idempotency-Keys that make a retried POST safe, listAll's paging, and the 429 wait (server
// and client share a ManualClock, and the client's sleep advances it, so 60 s take no time).

import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { test, type TestContext } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { AdminClient, MarketplaceClient, MarketplaceNetworkError } from '../../src/client/index.ts';
import type { ClientOptions, Listing, NewListing, Role } from '../../src/client/index.ts';
import { idsInOrder, newestFirst, oldestFirst } from '../helpers/creation-order.ts';
import { ADMIN_TOKEN, startServer, type StartOptions, type TestServer } from '../helpers/server.ts';
import { apiError, fetchLosingFirstAnswer, recordingSleep } from './call-helpers.ts';

interface SentRequest {
  method: string;
  url: URL;
  idempotencyKey: string | null;
  status: number;
  requestId: string | null;
}

/** A fetch that records each exchange (for request counts and header checks) and otherwise is the real one. */
function recordingFetch(): { fetch: typeof fetch; sent: SentRequest[] } {
  const sent: SentRequest[] = [];
  const wrapped: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    const headers = new Headers(init?.headers);
    sent.push({
      method: init?.method ?? 'GET',
      url: new URL(String(input)),
      idempotencyKey: headers.get('idempotency-key'),
      status: response.status,
      requestId: response.headers.get('x-request-id'),
    });
    return response;
  };
  return { fetch: wrapped, sent };
}

async function setup(t: TestContext, options: StartOptions = { dataDir: null }) {
  const server = await startServer(t, options);
  const admin = new AdminClient({ baseUrl: server.url, token: ADMIN_TOKEN });
  return { server, admin };
}

/** A user made through the AdminClient, a key for it, and a client using that key. */
async function userClient(
  server: TestServer,
  admin: AdminClient,
  role: Role,
  permissions: string[],
  options: { rateLimit?: number; client?: Partial<ClientOptions> } = {},
) {
  const user = await admin.users.create({ name: `${role} ${Math.random().toString(36).slice(2, 8)}`, role });
  const key = await admin.keys.create({ user_id: user.id, permissions, rate_limit: options.rateLimit ?? 1000 });
  const client = new MarketplaceClient({ baseUrl: server.url, apiKey: key.key, ...options.client });
  return { user, key, client };
}

const WRITER = ['read:listings', 'write:listings', 'read:users', 'write:users'];
const pdfSkill: NewListing = { title: 'PDF summariser', type: 'SKILL', price: 9.99, description: 'Summarises long PDFs', tags: ['pdf', 'summary'] };

test('AdminClient: users and keys made, listed, changed and revoked; changes apply on the next request', async (t) => {
  const { server, admin } = await setup(t);

  const ada = await admin.users.create({ name: 'Ada', email: 'Ada@Example.com', bio: 'Builds agents' });
  assert.match(ada.id, /^usr_/);
  assert.equal(ada.role, 'member', 'the default role');
  assert.equal(ada.email, 'ada@example.com');
  const grace = await admin.users.create({ name: 'Grace', role: 'creator' });

  const secondPage = await admin.users.list({ page: 2, limit: 1 });
  assert.deepEqual(secondPage.pagination, { page: 2, limit: 1, total: 2, total_pages: 2 });
  assert.equal(secondPage.data[0]?.id, idsInOrder(oldestFirst, ada, grace)[1], 'users are listed oldest first (ties by id)');

  const promoted = await admin.users.update(ada.id, { role: 'creator', name: 'Ada L.' });
  assert.equal(promoted.role, 'creator');
  assert.equal(promoted.name, 'Ada L.');

  const created = await admin.keys.create({ user_id: ada.id, name: 'ci', permissions: ['read:listings', 'GET /v1/users/me'], rate_limit: 50, prefix: 'mk' });
  assert.match(created.key, /^mk_/);
  assert.equal(created.prefix, 'mk_');
  assert.deepEqual(created.permissions, ['read:listings', 'GET /v1/users/me']);
  assert.equal(created.rate_limit, 50);
  assert.equal(created.revoked_at, null);
  const defaults = await admin.keys.create({ user_id: grace.id });
  assert.match(defaults.key, /^market_live_/);
  assert.deepEqual(defaults.permissions, ['read:listings'], 'least privilege by default');
  assert.equal(defaults.rate_limit, 100);

  const adaKeys = await admin.keys.list({ user_id: ada.id });
  assert.equal(adaKeys.pagination.total, 1);
  assert.equal(adaKeys.data[0]?.id, created.id);
  assert.equal(created.key.endsWith(adaKeys.data[0]?.last_four ?? '-'), true);
  assert.ok(!('key' in adaKeys.data[0]!) && !('hash' in adaKeys.data[0]!), 'no secret, no hash in a list');
  assert.equal((await admin.keys.list()).pagination.total, 2);

  const client = new MarketplaceClient({ baseUrl: server.url, apiKey: created.key });
  assert.equal((await client.users.me()).id, ada.id);
  assert.equal(client.rateLimit?.limit, 50);

  const changed = await admin.keys.update(created.id, { rate_limit: 7, name: 'ci-slow' });
  assert.equal(changed.rate_limit, 7);
  await client.listings.list();
  assert.equal(client.rateLimit?.limit, 7, 'the new rate limit applies from the very next request');

  const revoked = await admin.keys.revoke(created.id);
  assert.match(revoked.revoked_at ?? '', /^\d{4}-\d\d-\d\dT/);
  const refused = await apiError(client.users.me());
  assert.equal(refused.status, 401);
  assert.match(refused.error, /missing or invalid/);
  assert.match(refused.hint ?? '', /Authorization: Bearer/);
  assert.deepEqual(await admin.keys.revoke(created.id), revoked, 'revoking twice changes nothing');
  assert.equal((await apiError(admin.keys.update(created.id, { rate_limit: 9 }))).status, 409);
});

test('AdminClient: errors carry status, details and request id; a wrong token is 401', async (t) => {
  const { server, admin } = await setup(t);
  const missing = await apiError(admin.users.update('usr_missing', { name: 'X' }));
  assert.equal(missing.status, 404);
  assert.equal(missing.error, 'User not found');
  assert.match(missing.requestId ?? '', /^[0-9a-f-]{36}$/);

  const badUser = await apiError(admin.keys.create({ user_id: 'usr_nobody' }));
  assert.equal(badUser.status, 400);
  assert.equal(badUser.details?.user_id, 'is not an existing user');

  const user = await admin.users.create({ name: 'Ada' });
  const badPermission = await apiError(admin.keys.create({ user_id: user.id, permissions: ['sudo'] }));
  assert.equal(badPermission.status, 400);
  assert.match(badPermission.details?.permissions ?? '', /"sudo"/);

  const intruder = new AdminClient({ baseUrl: server.url, token: 'not-the-operator-token' });
  const unauthorized = await apiError(intruder.users.list());
  assert.equal(unauthorized.status, 401);
  assert.match(unauthorized.hint ?? '', /Authorization: Bearer <operator token>/);
});

test('AdminClient: stats, compact and a backup stream of the on-disk log', async (t) => {
  const { server, admin } = await setup(t, {});
  const { user, key, client } = await userClient(server, admin, 'creator', WRITER);
  const listing = await client.listings.create(pdfSkill);
  for (let price = 1; price <= 5; price += 1) await client.listings.update(listing.id, { price });

  const stats = await admin.stats();
  assert.equal(stats.users, 1);
  assert.equal(stats.keys, 1);
  assert.equal(stats.store.writable, true);
  assert.ok(stats.store.opsInLog > stats.store.liveRecords, 'the updates left superseded records');

  const compacted = await admin.compact();
  assert.ok(compacted.bytes_after < compacted.bytes_before, `${compacted.bytes_after} < ${compacted.bytes_before}`);
  assert.equal(compacted.records, (await admin.stats()).store.liveRecords);
  assert.equal((await admin.stats()).store.compactions, 1);

  const text = await new Response(await admin.backup()).text();
  const lines = text.trimEnd().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
  assert.equal(lines[0]?.format, 'marketplace-api-log');
  assert.equal(lines[0]?.version, 1);
  const ids = lines.slice(1).map((line) => line.id);
  for (const id of [user.id, key.id, listing.id]) assert.ok(ids.includes(id), `the backup holds ${id}`);
  const latest = lines.find((line) => line.id === listing.id) as { d: Listing } | undefined;
  assert.equal(latest?.d.price, 5, 'the backup holds the latest state');
  assert.ok(!text.includes(key.key), 'the plain key is never in the log');
});

test('listings: create, get, update, list with filters, archive (twice), 409 once archived', async (t) => {
  const { server, admin } = await setup(t);
  const { user, client } = await userClient(server, admin, 'creator', WRITER);

  const created = await client.listings.create(pdfSkill);
  assert.match(created.id, /^lst_/);
  assert.deepEqual(
    { ...created, id: '', created_at: '', updated_at: '' },
    { ...pdfSkill, id: '', status: 'active', owner_id: user.id, created_at: '', updated_at: '' },
  );
  const free = await client.listings.create({ title: 'Prompt pack', type: 'PROMPT', price: 0 });
  assert.equal(free.price, 0);
  assert.deepEqual(free.tags, []);
  assert.equal(free.description, '');

  assert.deepEqual(await client.listings.get(created.id), created);
  const updated = await client.listings.update(created.id, { price: 4.5, tags: ['pdf'] });
  assert.equal(updated.price, 4.5);
  assert.deepEqual(updated.tags, ['pdf']);
  assert.equal(updated.title, pdfSkill.title);

  const all = await client.listings.list();
  assert.deepEqual(all.pagination, { page: 1, limit: 20, total: 2, total_pages: 1 });
  assert.deepEqual(
    all.data.map((listing) => listing.id),
    idsInOrder(newestFirst, free, created),
    'newest first by default (ties by id)',
  );
  assert.deepEqual(
    (await client.listings.list({ type: 'SKILL' })).data.map((listing) => listing.id),
    [created.id],
  );
  assert.deepEqual(
    (await client.listings.list({ q: 'PDF', max_price: 5, owner_id: user.id, sort: 'price' })).data.map((listing) => listing.id),
    [created.id],
  );
  assert.deepEqual(
    (await client.listings.list({ sort: 'price' })).data.map((listing) => listing.price),
    [0, 4.5],
  );
  assert.equal((await client.listings.list({ min_price: 100 })).pagination.total, 0);

  const archived = await client.listings.archive(created.id);
  assert.equal(archived.status, 'archived');
  assert.deepEqual(await client.listings.archive(created.id), archived, 'archiving again changes nothing');
  assert.equal((await client.listings.get(created.id)).status, 'archived');
  assert.deepEqual(
    (await client.listings.list()).data.map((listing) => listing.id),
    [free.id],
    'only active listings are listed',
  );
  const conflict = await apiError(client.listings.update(created.id, { price: 1 }));
  assert.equal(conflict.status, 409);
  assert.match(conflict.error, /archived/);
});

test('users: me with email, updateMe, and a public profile without email', async (t) => {
  const { server, admin } = await setup(t);
  const other = await admin.users.create({ name: 'Grace', email: 'grace@example.com', role: 'creator', bio: 'Compilers' });
  const { user, client } = await userClient(server, admin, 'member', WRITER);
  await admin.users.update(user.id, { email: 'me@example.com' });

  const me = await client.users.me();
  assert.equal(me.id, user.id);
  assert.equal(me.email, 'me@example.com');
  assert.equal(me.role, 'member');

  const changed = await client.users.updateMe({ bio: 'I build agents', website: 'https://example.com/me', avatar_url: 'https://example.com/a.png' });
  assert.equal(changed.bio, 'I build agents');
  assert.equal(changed.website, 'https://example.com/me');
  assert.deepEqual(await client.users.me(), changed);

  const profile = await client.users.get(other.id);
  assert.deepEqual(profile, { id: other.id, name: 'Grace', bio: 'Compilers', website: '', avatar_url: '', role: 'creator', created_at: other.created_at });
  assert.ok(!('email' in profile), 'never the email in a public profile');
  assert.equal((await apiError(client.users.get('usr_missing'))).status, 404);
  const taken = await apiError(client.users.updateMe({ email: 'grace@example.com' }));
  assert.equal(taken.status, 409);
});

test('typed errors: 400 with details, 403 with required, 403 for role and owner, 404, 401 with hint; request id = X-Request-Id', async (t) => {
  const { server, admin } = await setup(t);
  const recorder = recordingFetch();
  const creator = await userClient(server, admin, 'creator', ['read:listings', 'write:listings'], { client: { fetch: recorder.fetch } });
  const member = await userClient(server, admin, 'member', ['read:listings', 'write:listings']);

  const invalid = await apiError(creator.client.listings.create({ title: ' ', type: 'GADGET' as 'SKILL', price: -1 }));
  assert.equal(invalid.status, 400);
  assert.deepEqual(Object.keys(invalid.details ?? {}).sort(), ['price', 'title', 'type']);
  assert.match(invalid.details?.price ?? '', /from 0 to 1000000/);
  assert.equal(invalid.requestId, recorder.sent.at(-1)?.requestId, 'the request id is the X-Request-Id of that answer');
  assert.equal(invalid.method, 'POST');
  assert.match(invalid.message, /^POST \/v1\/listings → 400: /);

  const readOnlyField = await apiError(creator.client.listings.create({ ...pdfSkill, status: 'archived' } as NewListing));
  assert.equal(readOnlyField.status, 400);
  assert.ok(readOnlyField.details && 'status' in readOnlyField.details, 'names the field');

  const badQuery = await apiError(creator.client.listings.list({ limit: 0 }));
  assert.equal(badQuery.status, 400);
  assert.ok(badQuery.details && 'limit' in badQuery.details);

  const noPermission = await apiError(creator.client.users.me());
  assert.equal(noPermission.status, 403);
  assert.deepEqual(noPermission.required, ['GET /v1/users/me', 'read:users']);

  const notCreator = await apiError(member.client.listings.create(pdfSkill));
  assert.equal(notCreator.status, 403);
  assert.match(notCreator.error, /creators/);

  const listing = await creator.client.listings.create(pdfSkill);
  const notOwner = await apiError(member.client.listings.archive(listing.id));
  assert.equal(notOwner.status, 403);
  assert.match(notOwner.error, /owner/);

  const missing = await apiError(creator.client.listings.get('lst_does_not_exist'));
  assert.equal(missing.status, 404);
  assert.equal(missing.error, 'Listing not found');
  assert.ok(missing.rateLimit && missing.rateLimit.limit === 1000, 'rate-limit headers ride along on errors');

  const stranger = new MarketplaceClient({ baseUrl: server.url, apiKey: 'mk_not_a_real_key' });
  const unauthorized = await apiError(stranger.listings.list());
  assert.equal(unauthorized.status, 401);
  assert.match(unauthorized.hint ?? '', /X-API-Key/);
  assert.match(unauthorized.requestId ?? '', /^[0-9a-f-]{36}$/);
});

test('a POST whose answer is lost after the server acted is retried with the same Idempotency-Key: one listing, not two', async (t) => {
  const { server, admin } = await setup(t);
  // The first POST is carried out, then its answer is lost on the way back.
  const { fetch: flakyFetch, seen } = fetchLosingFirstAnswer();
  const { sleep, waits } = recordingSleep();
  const { client } = await userClient(server, admin, 'creator', WRITER, { client: { fetch: flakyFetch, sleep } });

  const listing = await client.listings.create(pdfSkill);
  assert.equal(seen.length, 2);
  assert.match(seen[0]?.key ?? '', /^[0-9a-f-]{36}$/);
  assert.equal(seen[1]?.key, seen[0]?.key, 'the retry carries the same Idempotency-Key');
  assert.deepEqual(
    seen.map((exchange) => [exchange.status, exchange.replayed]),
    [
      [201, null],
      [201, 'true'],
    ],
    'the server replays its first answer',
  );
  assert.deepEqual(waits, [500]);
  const page = await client.listings.list();
  assert.equal(page.pagination.total, 1, 'exactly one listing was created');
  assert.equal(page.data[0]?.id, listing.id);
});

test('Idempotency-Key: every POST gets a fresh one; a manual repeat with the same key returns the same listing; another body → 422', async (t) => {
  const { server, admin } = await setup(t);
  const recorder = recordingFetch();
  const { client } = await userClient(server, admin, 'creator', WRITER, { client: { fetch: recorder.fetch } });

  const first = await client.listings.create(pdfSkill);
  const second = await client.listings.create(pdfSkill);
  assert.notEqual(first.id, second.id, 'two calls are two listings');
  const [keyOne, keyTwo] = recorder.sent.filter((sent) => sent.method === 'POST').map((sent) => sent.idempotencyKey);
  assert.ok(keyOne && keyTwo && keyOne !== keyTwo, 'each call has its own key');
  await client.listings.get(first.id);
  assert.equal(recorder.sent.at(-1)?.idempotencyKey, null, 'GETs carry none');

  const once = await client.listings.create(pdfSkill, { idempotencyKey: 'order-42' });
  const again = await client.listings.create(pdfSkill, { idempotencyKey: 'order-42' });
  assert.deepEqual(again, once);
  assert.equal((await client.listings.list()).pagination.total, 3);

  const reused = await apiError(client.listings.create({ ...pdfSkill, price: 1 }, { idempotencyKey: 'order-42' }));
  assert.equal(reused.status, 422);
  assert.match(reused.error, /different request/);
});

test('listAll walks every page: 45 listings, limit 20 → 45 items in 3 requests', async (t) => {
  const { server, admin } = await setup(t);
  const { client: writer } = await userClient(server, admin, 'creator', WRITER);
  const made = new Set<string>();
  for (let index = 0; index < 45; index += 1) {
    made.add((await writer.listings.create({ title: `Tool ${index}`, type: 'TOOL', price: index })).id);
  }
  await writer.listings.create({ title: 'Not a tool', type: 'AGENT', price: 1 });

  const recorder = recordingFetch();
  const reader = new MarketplaceClient({ baseUrl: server.url, apiKey: (await admin.keys.create({ user_id: (await writer.users.me()).id })).key, fetch: recorder.fetch });
  const seen: string[] = [];
  for await (const listing of reader.listings.listAll({ type: 'TOOL', limit: 20 })) seen.push(listing.id);
  assert.equal(seen.length, 45);
  assert.deepEqual(new Set(seen), made, 'every listing once');
  assert.deepEqual(
    recorder.sent.map((sent) => [sent.url.searchParams.get('page'), sent.url.searchParams.get('limit'), sent.url.searchParams.get('type')]),
    [
      ['1', '20', 'TOOL'],
      ['2', '20', 'TOOL'],
      ['3', '20', 'TOOL'],
    ],
  );

  // Without a limit it asks for 100 per page: one request here.
  let count = 0;
  for await (const _listing of reader.listings.listAll()) count += 1;
  assert.equal(count, 46);
  assert.equal(recorder.sent.length, 4);
});

test('429 from the real server (rate_limit 2): the client waits until X-RateLimit-Reset, then is admitted', async (t) => {
  const clock = new ManualClock(Date.UTC(2026, 0, 1, 12, 0, 0));
  const { server, admin } = await setup(t, { dataDir: null, clock });
  const recorder = recordingFetch();
  // The client's sleep moves the server's clock: waiting 60 s takes no time.
  const { sleep, waits } = recordingSleep((ms) => clock.advance(ms));
  const { client } = await userClient(server, admin, 'member', ['read:listings'], {
    rateLimit: 2,
    client: { fetch: recorder.fetch, sleep, now: () => clock.now() },
  });

  await client.listings.list();
  clock.advance(1_000);
  await client.listings.list();
  assert.equal(client.rateLimit?.remaining, 0);
  const page = await client.listings.list();
  assert.equal(page.pagination.total, 0);

  assert.deepEqual(
    recorder.sent.map((sent) => sent.status),
    [200, 200, 429, 200],
  );
  // The first request (at t = 0) leaves the window at t = 60 s; the third was refused at t = 1 s.
  assert.deepEqual(waits, [59_000]);
  assert.equal(client.rateLimit?.limit, 2);
});

test('429 from the real server with retries off, or a total-wait cap below the wait: thrown at once with the rate-limit facts', async (t) => {
  const clock = new ManualClock(Date.UTC(2026, 0, 1, 12, 0, 0));
  const { server, admin } = await setup(t, { dataDir: null, clock });
  const { sleep, waits } = recordingSleep((ms) => clock.advance(ms));
  const { key } = await userClient(server, admin, 'member', ['read:listings'], { rateLimit: 2 });
  const options = { baseUrl: server.url, apiKey: key.key, sleep, now: () => clock.now() };
  const noRetries = new MarketplaceClient({ ...options, retry: { enabled: false } });
  const capped = new MarketplaceClient({ ...options, retry: { maxTotalWaitMs: 30_000 } });

  await noRetries.listings.list();
  await noRetries.listings.list();
  const refused = await apiError(noRetries.listings.list());
  assert.equal(refused.status, 429);
  assert.match(refused.error, /Rate limit of 2 requests per minute/);
  assert.deepEqual(refused.rateLimit, { limit: 2, remaining: 0, reset: Date.UTC(2026, 0, 1, 12, 1, 0) / 1000 });
  assert.equal((await apiError(capped.listings.list())).status, 429, 'a 60 s wait does not fit a 30 s cap');
  assert.deepEqual(waits, []);
});

test('abort while waiting out a real 429 ends the call with the abort reason; nothing more is sent', async (t) => {
  const clock = new ManualClock(Date.UTC(2026, 0, 1, 12, 0, 0));
  const { server, admin } = await setup(t, { dataDir: null, clock });
  const recorder = recordingFetch();
  const controller = new AbortController();
  const { client } = await userClient(server, admin, 'member', ['read:listings'], {
    rateLimit: 1,
    client: {
      fetch: recorder.fetch,
      now: () => clock.now(),
      // The wait starts, then the caller gives up.
      sleep: () => {
        controller.abort();
        return new Promise<void>(() => {});
      },
    },
  });
  await client.listings.list();
  await assert.rejects(client.listings.list({}, { signal: controller.signal }), { name: 'AbortError' });
  assert.deepEqual(
    recorder.sent.map((sent) => sent.status),
    [200, 429],
  );
});

test('a server that is not there is a MarketplaceNetworkError after the backoff retries', async (t) => {
  const { server, admin } = await setup(t);
  const { key } = await userClient(server, admin, 'member', ['read:listings']);
  const url = server.url;
  await server.close();
  const { sleep, waits } = recordingSleep();
  const client = new MarketplaceClient({ baseUrl: url, apiKey: key.key, sleep });
  await assert.rejects(client.listings.list(), (error: unknown) => {
    assert.ok(error instanceof MarketplaceNetworkError);
    assert.match(error.message, /ECONNREFUSED/);
    return true;
  });
  assert.deepEqual(waits, [500, 1000, 2000, 4000, 8000]);
});

/** A local webhook receiver that answers 200 and keeps what it got. */
async function receiver(t: TestContext) {
  const received: Array<{ headers: IncomingHttpHeaders; body: string }> = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString() });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, received };
}

/** Polls until `check` returns a value (deliveries run in the background), at most 5 s. */
async function eventually<T>(check: () => Promise<T | undefined> | T | undefined): Promise<T> {
  for (let tries = 0; tries < 250; tries += 1) {
    const value = await check();
    if (value !== undefined) return value;
    await delay(20);
  }
  throw new Error('timed out waiting');
}

/** Standard Webhooks verification, written here from the spec rather than imported from the server. */
function signatureOk(secret: string, headers: IncomingHttpHeaders, body: string): boolean {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const expected = createHmac('sha256', key).update(`${headers['webhook-id']}.${headers['webhook-timestamp']}.${body}`).digest('base64');
  return String(headers['webhook-signature']).split(' ').includes(`v1,${expected}`);
}

test('webhooks: create (secret once), ping and listing.created signed, list with last_delivery, delete; another user gets 404', async (t) => {
  const { server, admin } = await setup(t, { dataDir: null, env: { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_DELAYS_MS: '10,10' } });
  const hooks = await receiver(t);
  const owner = await userClient(server, admin, 'creator', ['read:listings', 'write:listings', 'read:webhooks', 'write:webhooks']);
  const other = await userClient(server, admin, 'creator', ['read:webhooks', 'write:webhooks']);

  const created = await owner.client.webhooks.create({ url: hooks.url, events: ['ping', 'listing.created'], description: 'CI' });
  assert.match(created.id, /^wh_/);
  assert.match(created.secret, /^whsec_/);
  assert.deepEqual(created.events, ['ping', 'listing.created']);
  assert.equal(created.active, true);
  assert.equal(created.last_delivery, null);

  const listing = await owner.client.listings.create(pdfSkill);
  await owner.client.listings.update(listing.id, { price: 1 }); // listing.updated: not subscribed
  const deliveries = await eventually(() => (hooks.received.length >= 2 ? hooks.received : undefined));
  const events = deliveries.map((delivery) => JSON.parse(delivery.body) as { id: string; type: string; data: { id: string } });
  assert.deepEqual(
    events.map((event) => event.type).sort(),
    ['listing.created', 'ping'],
  );
  assert.equal(events.find((event) => event.type === 'listing.created')?.data.id, listing.id);
  for (const delivery of deliveries) assert.ok(signatureOk(created.secret, delivery.headers, delivery.body), 'signed with the secret');

  const listed = await eventually(async () => {
    const page = await owner.client.webhooks.list();
    return page.data[0]?.last_delivery?.status === 'delivered' ? page : undefined;
  });
  assert.deepEqual(listed.pagination, { page: 1, limit: 20, total: 1, total_pages: 1 });
  assert.ok(!('secret' in listed.data[0]!), 'never the secret again');
  assert.equal(listed.data[0]?.last_delivery?.response_status, 200);
  assert.equal((await admin.webhooks.list({ user_id: owner.user.id })).data[0]?.user_id, owner.user.id);
  assert.equal(hooks.received.length, 2, 'listing.updated was not subscribed, so never sent');

  assert.equal((await other.client.webhooks.list()).pagination.total, 0, "another user's webhooks are not listed");
  assert.equal((await apiError(other.client.webhooks.delete(created.id))).status, 404, "another user's webhook is not found");
  const removed = await owner.client.webhooks.delete(created.id);
  assert.equal(removed.id, created.id);
  assert.equal((await owner.client.webhooks.list()).pagination.total, 0);
  assert.equal((await apiError(owner.client.webhooks.delete(created.id))).status, 404);
});

test('webhooks: a private address is refused with details unless WEBHOOK_ALLOW_PRIVATE; bad events name the field', async (t) => {
  const { server, admin } = await setup(t);
  const { client } = await userClient(server, admin, 'member', ['read:webhooks', 'write:webhooks']);
  const refused = await apiError(client.webhooks.create({ url: 'http://127.0.0.1:9/hooks' }));
  assert.equal(refused.status, 400);
  assert.match(refused.details?.url ?? '', /refused/);
  const badEvents = await apiError(client.webhooks.create({ url: 'https://example.com/hooks', events: ['listing.sold' as 'ping'] }));
  assert.equal(badEvents.status, 400);
  assert.match(badEvents.details?.events ?? '', /listing\.sold/);
});

test('analytics: usage counts only the calling key, per endpoint, with the current window; listing views and impressions', async (t) => {
  const { server, admin } = await setup(t);
  const creator = await userClient(server, admin, 'creator', ['read:listings', 'write:listings', 'read:analytics'], { rateLimit: 50 });
  const reader = await userClient(server, admin, 'member', ['read:listings', 'read:analytics'], { rateLimit: 50 });

  const popular = await creator.client.listings.create({ title: 'Popular', type: 'AGENT', price: 3 });
  const quiet = await creator.client.listings.create({ title: 'Quiet', type: 'AGENT', price: 2 });
  for (let view = 0; view < 3; view += 1) await reader.client.listings.get(popular.id);
  await reader.client.listings.list(); // one page showing both: an impression each
  await reader.client.listings.list(); // the cached page counts too
  await apiError(reader.client.listings.get('lst_missing'));

  const usage = await reader.client.analytics.usage({ granularity: 'day' });
  assert.equal(usage.key_id, reader.key.id);
  assert.equal(usage.granularity, 'day');
  assert.deepEqual(usage.totals, { requests: 6, by_status: { '2xx': 5, '3xx': 0, '4xx': 1, '5xx': 0 }, rate_limited: 0 });
  assert.deepEqual(
    usage.endpoints.map((endpoint) => [endpoint.endpoint, endpoint.requests]),
    [
      ['GET /v1/listings/:id', 4],
      ['GET /v1/listings', 2],
    ],
  );
  assert.equal(usage.series.points.length, 30, 'a day series covers 30 days by default');
  assert.equal(usage.series.points.at(-1)?.requests, 6);
  assert.equal(usage.series.points.at(-1)?.errors, 1);
  assert.equal(usage.window.limit, 50);
  assert.equal(usage.window.remaining, 43, 'six requests plus this one');
  const adminView = await admin.keys.usage(reader.key.id, { granularity: 'day' });
  assert.equal(adminView.totals.requests, 7, 'the usage call itself is counted once answered');

  const creatorUsage = await creator.client.analytics.usage();
  assert.equal(creatorUsage.totals.requests, 2, "the other key's traffic is not in it");
  assert.equal(creatorUsage.series.points.length, 24, 'an hour series covers 24 hours by default');

  const stats = await creator.client.analytics.listings();
  assert.deepEqual(stats.totals, { views: 3, impressions: 4 });
  assert.deepEqual(
    stats.data.map((row) => [row.listing_id, row.views, row.impressions]),
    [
      [popular.id, 3, 2],
      [quiet.id, 0, 2],
    ],
  );
  assert.deepEqual(
    (await creator.client.analytics.listings({ sort: 'views', limit: 1 })).data.map((row) => row.listing_id),
    [quiet.id],
  );
  assert.equal((await reader.client.analytics.listings()).pagination.total, 0, "a reader sees only their own listings' stats");
  const badRange = await apiError(reader.client.analytics.usage({ from: 'yesterday' }));
  assert.equal(badRange.status, 400);
  assert.ok(badRange.details && 'from' in badRange.details);
});
