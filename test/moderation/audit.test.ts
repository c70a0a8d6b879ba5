// The audit log: every operator write route (found by walking the operator router, so a new
// write route without an entry fails here) leaves exactly one entry naming its action, target
// and request id; under a failing disk neither the change nor the entry happens (one write);
// GET /admin/v1/audit lists newest first with its filters.

import assert from 'node:assert/strict';
import test from 'node:test';
import { PLAN_REQUESTS, type PlanRequestRecord } from '../../src/domain/records.ts';
import { startServer, type TestResponse, type TestServer } from '../helpers/server.ts';
import { FaultyFileSystem } from '../store/fault-fs.ts';
import { errorWithCode } from '../store/helpers.ts';

interface WriteCall {
  method: string;
  path: string;
  body?: unknown;
  action: string;
  /** The target id, or a function of the answer when the target is made by the call. */
  targetId: string | ((response: TestResponse) => string);
}

/** For each operator write route: the state it needs, and one call that succeeds. */
const WRITE_CALLS: Record<string, (server: TestServer) => Promise<WriteCall>> = {
  'POST /admin/v1/users': async () => ({ method: 'POST', path: '/admin/v1/users', body: { name: 'New person', email: 'new@example.com' }, action: 'user.create', targetId: (response) => response.body.data.id }),
  'PATCH /admin/v1/users/:id': async (server) => {
    const user = await server.createUser();
    return { method: 'PATCH', path: `/admin/v1/users/${user.id}`, body: { role: 'creator' }, action: 'user.update', targetId: user.id };
  },
  'DELETE /admin/v1/users/:id': async (server) => {
    const user = await server.createUser();
    return { method: 'DELETE', path: `/admin/v1/users/${user.id}`, action: 'user.erase', targetId: user.id };
  },
  'POST /admin/v1/users/:id/suspend': async (server) => {
    const user = await server.createUser();
    return { method: 'POST', path: `/admin/v1/users/${user.id}/suspend`, body: { reason: 'spam' }, action: 'user.suspend', targetId: user.id };
  },
  'POST /admin/v1/users/:id/unsuspend': async (server) => {
    const user = await server.createUser();
    await server.admin('POST', `/admin/v1/users/${user.id}/suspend`, { reason: 'spam' });
    return { method: 'POST', path: `/admin/v1/users/${user.id}/unsuspend`, action: 'user.unsuspend', targetId: user.id };
  },
  'POST /admin/v1/keys': async (server) => {
    const user = await server.createUser();
    return { method: 'POST', path: '/admin/v1/keys', body: { user_id: user.id }, action: 'key.create', targetId: (response) => response.body.data.id };
  },
  'PATCH /admin/v1/keys/:id': async (server) => {
    const key = await server.createKey((await server.createUser()).id);
    return { method: 'PATCH', path: `/admin/v1/keys/${key.id}`, body: { rate_limit: 7 }, action: 'key.update', targetId: key.id };
  },
  'DELETE /admin/v1/keys/:id': async (server) => {
    const key = await server.createKey((await server.createUser()).id);
    return { method: 'DELETE', path: `/admin/v1/keys/${key.id}`, action: 'key.revoke', targetId: key.id };
  },
  'POST /admin/v1/keys/:id/roll': async (server) => {
    const key = await server.createKey((await server.createUser()).id);
    return { method: 'POST', path: `/admin/v1/keys/${key.id}/roll`, body: { grace_seconds: 60 }, action: 'key.roll', targetId: key.id };
  },
  'POST /admin/v1/keys/:id/quota': async (server) => {
    await server.admin('PUT', '/admin/v1/plans', { plans: [{ id: 'free', name: 'Free', rate_limit: 100, self_service: true, quota: { requests: 10, period: 'day' } }, { id: 'pro', name: 'Pro', rate_limit: 1_000, self_service: true }, { id: 'business', name: 'Business', rate_limit: 10_000, self_service: false }] });
    const key = await server.createKey((await server.createUser()).id);
    return { method: 'POST', path: `/admin/v1/keys/${key.id}/quota`, body: { add: 5 }, action: 'key.quota', targetId: key.id };
  },
  'PUT /admin/v1/plans': async () => ({
    method: 'PUT',
    path: '/admin/v1/plans',
    body: { plans: [{ id: 'free', name: 'Free', rate_limit: 100, self_service: true }, { id: 'pro', name: 'Pro', rate_limit: 1_000, self_service: true }, { id: 'business', name: 'Business', rate_limit: 10_000, self_service: false }, { id: 'team', name: 'Team', rate_limit: 5_000, self_service: false }] },
    action: 'plans.replace',
    targetId: 'plans',
  }),
  'POST /admin/v1/plan-requests/:id/approve': async (server) => {
    const id = await pendingPlanRequest(server);
    return { method: 'POST', path: `/admin/v1/plan-requests/${id}/approve`, action: 'plan_request.approve', targetId: id };
  },
  'POST /admin/v1/plan-requests/:id/decline': async (server) => {
    const id = await pendingPlanRequest(server);
    return { method: 'POST', path: `/admin/v1/plan-requests/${id}/decline`, action: 'plan_request.decline', targetId: id };
  },
  'POST /admin/v1/users/:id/invitations': async (server) => {
    const user = await server.createUser({ email: `invited-${Math.random().toString(36).slice(2)}@example.com` });
    return { method: 'POST', path: `/admin/v1/users/${user.id}/invitations`, action: 'user.invite', targetId: user.id };
  },
  'DELETE /admin/v1/users/:id/two-factor': async (server) => {
    const user = await server.createUser();
    return { method: 'DELETE', path: `/admin/v1/users/${user.id}/two-factor`, action: 'user.two_factor_reset', targetId: user.id };
  },
  'POST /admin/v1/two-factor/reseal': async () => ({ method: 'POST', path: '/admin/v1/two-factor/reseal', body: { old_token: 'the-previous-operator-token-000' }, action: 'two_factor.reseal', targetId: 'two_factor' }),
  'POST /admin/v1/compact': async () => ({ method: 'POST', path: '/admin/v1/compact', action: 'store.compact', targetId: 'log' }),
  'POST /admin/v1/listings/:id/remove': async (server) => {
    const listing = await listingOf(server);
    return { method: 'POST', path: `/admin/v1/listings/${listing}/remove`, body: { reason: 'spam' }, action: 'listing.remove', targetId: listing };
  },
  'POST /admin/v1/listings/:id/restore': async (server) => {
    const listing = await listingOf(server);
    await server.admin('POST', `/admin/v1/listings/${listing}/remove`, { reason: 'spam' });
    return { method: 'POST', path: `/admin/v1/listings/${listing}/restore`, action: 'listing.restore', targetId: listing };
  },
};

/** A pending request for a plan the key may not pick itself, written as the portal writes one. */
async function pendingPlanRequest(server: TestServer): Promise<string> {
  const user = await server.createUser();
  const key = await server.createKey(user.id);
  const id = `prq_${key.id.slice(4)}`;
  const request: PlanRequestRecord = { id, key_id: key.id, user_id: user.id, plan: 'business', status: 'pending', created_at: new Date().toISOString(), decided_at: null };
  await server.app.store.write([{ op: 'put', collection: PLAN_REQUESTS, id, data: request }]);
  return id;
}

async function listingOf(server: TestServer): Promise<string> {
  const creator = await server.userWithKey('creator', ['write:listings']);
  const response = await server.request('POST', '/v1/listings', { key: creator.key, body: { title: 'Audited', type: 'TOOL', price: 1 } });
  assert.equal(response.status, 201, response.text);
  return response.body.data.id;
}

function writeRoutes(server: TestServer): string[] {
  return server.app.adminRoutes.filter((route) => route.method !== 'GET').map((route) => `${route.method} ${route.pattern}`);
}

function call(server: TestServer, write: WriteCall): Promise<TestResponse> {
  return server.admin(write.method, write.path, write.body);
}

test('every operator write route leaves one audit entry with its action, target, changes and request id', async (t) => {
  const server = await startServer(t);
  const routes = writeRoutes(server);
  assert.ok(routes.length >= 11, `found ${routes.length} write routes`);
  for (const route of routes) {
    await t.test(route, async () => {
      const fixture = WRITE_CALLS[route];
      assert.ok(fixture, `${route} has no audit test: add one to WRITE_CALLS (and an audit entry to the route)`);
      const write = await fixture(server);
      const before = (await server.admin('GET', '/admin/v1/audit?limit=1')).body.pagination.total;
      const response = await call(server, write);
      assert.ok(response.status >= 200 && response.status < 300, `${route} → ${response.status} ${response.text}`);
      const requestId = response.headers.get('x-request-id');
      const listed = await server.admin('GET', `/admin/v1/audit?limit=100`);
      assert.equal(listed.body.pagination.total, before + 1, `${route} wrote exactly one entry`);
      const entry = listed.body.data[0];
      assert.equal(entry.request_id, requestId, `${route}: the newest entry is this request's`);
      assert.equal(entry.action, write.action);
      const targetId = typeof write.targetId === 'string' ? write.targetId : write.targetId(response);
      assert.equal(entry.target_id, targetId);
      assert.deepEqual(Object.keys(entry).sort(), ['action', 'actor', 'at', 'changes', 'id', 'request_id', 'target_id', 'target_type']);
      assert.deepEqual(entry.actor, { type: 'operator' });
      assert.equal(typeof entry.changes, 'object');
      const text = JSON.stringify(entry);
      assert.ok(!/"(key|hash|secret)":|whsec_/.test(text), `no secret in an audit entry: ${text}`);
      if (typeof response.body?.data?.key === 'string') assert.ok(!text.includes(response.body.data.key), 'the new plain key is not in the audit log');
      if (typeof response.body?.data?.token === 'string') assert.ok(!text.includes(response.body.data.token), 'the invitation token is not in the audit log');
    });
  }
});

test('under a failing disk an operator write answers 503 and neither its change nor its audit entry exists', async (t) => {
  const fileSystem = new FaultyFileSystem();
  const server = await startServer(t, { fileSystem, expectedServerErrors: [503] });
  for (const route of writeRoutes(server)) {
    await t.test(route, async () => {
      const write = await WRITE_CALLS[route]!(server);
      const backupBefore = await server.admin('GET', '/admin/v1/backup');
      fileSystem.inject({ operation: 'write', error: errorWithCode('EIO', 'EIO: i/o error, write') });
      const response = await call(server, write);
      fileSystem.clearFaults();
      assert.equal(response.status, 503, `${route} → ${response.status} ${response.text}`);
      const backupAfter = await server.admin('GET', '/admin/v1/backup');
      // Everything but the header line (its time) is the same: no change, no entry.
      assert.deepEqual(backupAfter.text.split('\n').slice(1), backupBefore.text.split('\n').slice(1), `${route} changed nothing`);
      // And once the disk is back the same call works and is audited.
      const retried = await call(server, write);
      assert.ok(retried.status < 300, `${route} after recovery → ${retried.status} ${retried.text}`);
      const newest = (await server.admin('GET', '/admin/v1/audit?limit=1')).body.data[0];
      assert.equal(newest.request_id, retried.headers.get('x-request-id'));
    });
  }
});

test('GET /admin/v1/audit: newest first, filters action and target_id, paginated, bad query → 400', async (t) => {
  const server = await startServer(t, { dataDir: null });
  const alice = await server.createUser({ name: 'Alice' });
  const bob = await server.createUser({ name: 'Bob' });
  await server.admin('PATCH', `/admin/v1/users/${alice.id}`, { name: 'Alice B.' });
  await server.admin('POST', `/admin/v1/users/${bob.id}/suspend`, { reason: 'spam' });

  const all = await server.admin('GET', '/admin/v1/audit');
  assert.equal(all.status, 200);
  assert.deepEqual(all.body.data.map((entry: { action: string }) => entry.action), ['user.suspend', 'user.update', 'user.create', 'user.create']);
  const times = all.body.data.map((entry: { at: string }) => entry.at);
  assert.deepEqual([...times].sort().reverse(), times);
  assert.deepEqual(all.body.data[1].changes, { name: { from: 'Alice', to: 'Alice B.' } });
  assert.deepEqual(all.body.data[0].changes.reason, 'spam');

  const aliceOnly = await server.admin('GET', `/admin/v1/audit?target_id=${alice.id}`);
  assert.deepEqual(aliceOnly.body.data.map((entry: { action: string }) => entry.action), ['user.update', 'user.create']);
  const creations = await server.admin('GET', '/admin/v1/audit?action=user.create&limit=1&page=2');
  assert.equal(creations.body.data.length, 1);
  assert.equal(creations.body.data[0].target_id, alice.id);
  assert.deepEqual(creations.body.pagination, { page: 2, limit: 1, total: 2, total_pages: 2 });

  assert.equal((await server.admin('GET', '/admin/v1/audit?limit=101')).status, 400);
  assert.equal((await server.admin('GET', '/admin/v1/audit?actor=x')).status, 400);
  assert.equal((await server.request('GET', '/admin/v1/audit')).status, 401);
});
