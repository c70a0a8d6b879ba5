// The portal's self-service keys against a real server, signed in with a session cookie:
// security checks first (a member never obtains write:listings; another user's key is 404;
// at most 20 active keys), then the whole life of a key: create → use on /v1 → roll with a
// short grace (old and new, then only new) → plan switch (X-RateLimit-Limit at once) → plan
// request approved by the operator → revoke (401 from the next request), and expiry.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { eventually } from '../helpers/eventually.ts';
import { signedInUser, type PortalUser } from '../helpers/portal.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

function portal(server: TestServer, user: PortalUser, method: string, path: string, body?: unknown) {
  return server.request(method, `/portal/v1${path}`, { headers: user.headers, body });
}

test('security: a member cannot obtain write:listings in any form, on create or on change; a creator can', async (t) => {
  const server = await startServer(t);
  const member = await signedInUser(server, { role: 'member' });
  const creator = await signedInUser(server, { role: 'creator' });
  const forms = [['write:listings'], ['POST /v1/listings'], ['PUT /v1/listings/:id'], ['DELETE /v1/listings/*'], ['PUT /v1/listings/lst_abc'], ['POST /v1/*'], ['read:listings', 'write:listings']];
  for (const permissions of forms) {
    const refused = await portal(server, member, 'POST', '/keys', { permissions });
    assert.equal(refused.status, 403, `member asked for ${permissions.join(', ')}: ${refused.text}`);
    assert.match(refused.body.error, /role/);
  }
  const own = await portal(server, member, 'POST', '/keys', { permissions: ['read:listings', 'GET /v1/users/me', 'write:webhooks'] });
  assert.equal(own.status, 201, own.text);
  const widened = await portal(server, member, 'PATCH', `/keys/${own.body.data.id}`, { permissions: ['read:listings', 'write:listings'] });
  assert.equal(widened.status, 403, 'nor by widening a key it has');
  const keys = await portal(server, member, 'GET', '/keys');
  assert.deepEqual(keys.body.data[0].permissions, ['read:listings', 'GET /v1/users/me', 'write:webhooks'], 'the refused change changed nothing');
  assert.equal(keys.body.data.length, 1, 'no refused create made a key');

  const publisher = await portal(server, creator, 'POST', '/keys', { permissions: ['read:listings', 'write:listings'] });
  assert.equal(publisher.status, 201);
  const created = await server.request('POST', '/v1/listings', { key: publisher.body.data.key, body: { title: 'From the portal key', type: 'TOOL', price: 1 } });
  assert.equal(created.status, 201);
});

test("security: another user's key is 404 on every key route, and nothing about it changes", async (t) => {
  const server = await startServer(t);
  const owner = await signedInUser(server);
  const stranger = await signedInUser(server);
  const made = await portal(server, owner, 'POST', '/keys', { name: 'mine' });
  assert.equal(made.status, 201);
  const id = made.body.data.id;
  const attempts: Array<[string, string, unknown]> = [
    ['PATCH', `/keys/${id}`, { name: 'taken' }],
    ['DELETE', `/keys/${id}`, undefined],
    ['POST', `/keys/${id}/roll`, { grace_seconds: 0 }],
    ['GET', `/keys/${id}/usage`, undefined],
    ['POST', '/plan-requests', { key_id: id, plan: 'business' }],
  ];
  for (const [method, path, body] of attempts) {
    const answer = await portal(server, stranger, method, path, body);
    assert.equal(answer.status, 404, `${method} ${path} by another user: ${answer.text}`);
  }
  assert.equal((await portal(server, stranger, 'GET', '/keys')).body.data.length, 0);
  const still = await server.request('GET', '/v1/listings', { key: made.body.data.key });
  assert.equal(still.status, 200, 'the key still works with its first secret');
  assert.equal((await portal(server, owner, 'GET', '/keys')).body.data[0].name, 'mine');
});

test('security: at most 20 active keys per user; the 21st is 409, and revoking one makes room', async (t) => {
  const server = await startServer(t);
  const user = await signedInUser(server);
  const made = await Promise.all(Array.from({ length: 20 }, (_, index) => portal(server, user, 'POST', '/keys', { name: `key ${index}` })));
  assert.deepEqual(made.map((answer) => answer.status), Array(20).fill(201));
  // Two at once: both refused, never a 21st and 22nd made by racing.
  const extra = await Promise.all([portal(server, user, 'POST', '/keys', {}), portal(server, user, 'POST', '/keys', {})]);
  assert.deepEqual(extra.map((answer) => answer.status), [409, 409]);
  assert.match(extra[0]!.body.error, /20/);
  await portal(server, user, 'DELETE', `/keys/${made[0]!.body.data.id}`);
  assert.equal((await portal(server, user, 'POST', '/keys', {})).status, 201);
});

test('a key from the portal: least privilege, secret once, used on /v1, rolled with a grace, plan switch, plan request approved, revoked', async (t) => {
  const server = await startServer(t);
  const user = await signedInUser(server);
  const created = await portal(server, user, 'POST', '/keys', { name: 'laptop' });
  assert.equal(created.status, 201);
  assert.equal(created.headers.get('cache-control'), 'no-store');
  const { id, key } = created.body.data;
  assert.deepEqual(created.body.data.permissions, ['read:listings'], 'least privilege by default');
  assert.equal(created.body.data.plan, 'free');
  assert.equal(created.body.data.rate_limit, 100);
  const listed = await portal(server, user, 'GET', '/keys');
  assert.equal(listed.body.data[0].id, id);
  assert.ok(!listed.text.includes(key), 'the secret is shown once');
  assert.equal((await server.request('GET', '/v1/listings', { key })).status, 200);

  // Roll with a 1 s grace: both secrets work, then only the new one.
  assert.equal((await portal(server, user, 'POST', `/keys/${id}/roll`, { grace_seconds: 604_801 })).status, 400);
  const rolled = await portal(server, user, 'POST', `/keys/${id}/roll`, { grace_seconds: 1 });
  assert.equal(rolled.status, 201, rolled.text);
  const fresh = rolled.body.data.key;
  assert.equal(rolled.body.data.id, id);
  assert.ok(Date.parse(rolled.body.data.previous_secret_expires_at) > Date.now() - 1_000);
  assert.equal((await server.request('GET', '/v1/listings', { key })).status, 200, 'old secret during the grace');
  assert.equal((await server.request('GET', '/v1/listings', { key: fresh })).status, 200, 'new secret at once');
  await eventually(async () => (await server.request('GET', '/v1/listings', { key })).status === 401, 5_000, 'the old secret is refused after the grace', 50);
  assert.equal((await server.request('GET', '/v1/listings', { key: fresh })).status, 200);

  // A self-service plan applies at once; another one is a request the operator decides.
  const plans = await portal(server, user, 'GET', '/plans');
  assert.deepEqual(plans.body.data.map((plan: { id: string }) => plan.id), ['free', 'pro', 'business']);
  const pro = await portal(server, user, 'PATCH', `/keys/${id}`, { plan: 'pro' });
  assert.equal(pro.status, 200);
  assert.equal((await server.request('GET', '/v1/listings', { key: fresh })).headers.get('x-ratelimit-limit'), '1000');
  assert.equal((await portal(server, user, 'PATCH', `/keys/${id}`, { plan: 'business' })).status, 400, 'business is on request');
  const asked = await portal(server, user, 'POST', '/plan-requests', { key_id: id, plan: 'business' });
  assert.equal(asked.status, 201);
  assert.equal(asked.body.data.status, 'pending');
  assert.equal((await portal(server, user, 'POST', '/plan-requests', { key_id: id, plan: 'business' })).status, 409, 'one pending request per key');
  assert.equal((await portal(server, user, 'POST', '/plan-requests', { key_id: id, plan: 'pro' })).status, 400, 'pro is self-service: no request');
  const approved = await server.admin('POST', `/admin/v1/plan-requests/${asked.body.data.id}/approve`);
  assert.equal(approved.status, 200);
  assert.equal((await server.request('GET', '/v1/listings', { key: fresh })).headers.get('x-ratelimit-limit'), '10000');

  // Usage as the operator sees it.
  const usage = await portal(server, user, 'GET', `/keys/${id}/usage`);
  assert.equal(usage.status, 200);
  assert.equal(usage.body.data.key_id, id);
  assert.ok(usage.body.data.totals.requests >= 4);

  // Rename and narrow; then revoke: 401 from the very next request.
  const renamed = await portal(server, user, 'PATCH', `/keys/${id}`, { name: 'desktop', permissions: ['GET /v1/listings'] });
  assert.equal(renamed.body.data.name, 'desktop');
  assert.equal((await server.request('GET', '/v1/users/me', { key: fresh })).status, 403, 'narrowed');
  const revoked = await portal(server, user, 'DELETE', `/keys/${id}`);
  assert.equal(revoked.status, 200);
  assert.ok(revoked.body.data.revoked_at);
  assert.equal((await server.request('GET', '/v1/listings', { key: fresh })).status, 401);
  assert.equal((await portal(server, user, 'PATCH', `/keys/${id}`, { name: 'again' })).status, 409);

  // Every step audited with the user as actor, never a secret.
  const audit = await server.admin('GET', `/admin/v1/audit?target_id=${id}`);
  const actions = audit.body.data.filter((entry: any) => entry.actor?.type === 'user' && entry.actor.id === user.userId).map((entry: any) => entry.action);
  for (const action of ['portal.key_create', 'portal.key_roll', 'portal.key_update', 'portal.key_revoke']) assert.ok(actions.includes(action), `${action} audited: ${actions}`);
  assert.ok(!audit.text.includes(fresh) && !audit.text.includes(key));
  const requests = await server.admin('GET', '/admin/v1/audit?action=portal.plan_request');
  assert.equal(requests.body.data[0].actor.id, user.userId);
});

test('a portal key with expires_at: refused with 401 saying it expired once the instant passes; a past instant is 400', async (t) => {
  const server = await startServer(t);
  const user = await signedInUser(server);
  assert.equal((await portal(server, user, 'POST', '/keys', { expires_at: '2000-01-01T00:00:00Z' })).status, 400);
  const expiresAt = new Date(Date.now() + 1_000).toISOString();
  const made = await portal(server, user, 'POST', '/keys', { expires_at: expiresAt, plan: 'pro' });
  assert.equal(made.status, 201);
  assert.equal(made.body.data.expires_at, expiresAt);
  assert.equal((await server.request('GET', '/v1/listings', { key: made.body.data.key })).status, 200);
  await eventually(async () => (await server.request('GET', '/v1/listings', { key: made.body.data.key })).status === 401, 5_000, 'refused after expiry', 50);
  const refused = await server.request('GET', '/v1/listings', { key: made.body.data.key });
  assert.match(refused.body.error, /expired/);
  // An expired key no longer counts against the 20.
  const listed = await portal(server, user, 'GET', '/keys');
  assert.equal(listed.body.data[0].expires_at, expiresAt);
});

test('portal key input: unknown fields, bad permissions, unknown plan and a missing session are refused', async (t) => {
  const server = await startServer(t);
  const user = await signedInUser(server);
  const cases: Array<[unknown, number]> = [
    [{ rate_limit: 5000 }, 400],
    [{ permissions: ['fly:anywhere'] }, 400],
    [{ permissions: [] }, 400],
    [{ plan: 'gold' }, 400],
    [{ plan: 'business' }, 400],
    [{ name: 'x'.repeat(101) }, 400],
  ];
  for (const [body, status] of cases) assert.equal((await portal(server, user, 'POST', '/keys', body)).status, status, JSON.stringify(body));
  assert.equal((await server.request('GET', '/portal/v1/keys')).status, 401);
  assert.equal((await portal(server, user, 'GET', '/keys')).body.data.length, 0);
});
