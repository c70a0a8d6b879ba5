// Plan requests a user can follow, against a real server with a session cookie: the user's own
// list (state, dates, the operator's note), cancelling a pending one, and no plan request or
// plan change for a key that is expired or revoked (409, nothing written).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { eventually } from '../helpers/eventually.ts';
import { signedInUser, type PortalUser } from '../helpers/portal.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

function portal(server: TestServer, user: PortalUser, method: string, path: string, body?: unknown) {
  return server.request(method, `/portal/v1${path}`, { headers: user.headers, body });
}

test('an expired or revoked key gets no plan request and no plan change (409), and nothing is written', async (t) => {
  const server = await startServer(t);
  const user = await signedInUser(server);
  const expiring = await portal(server, user, 'POST', '/keys', { name: 'short', expires_at: new Date(Date.now() + 800).toISOString() });
  assert.equal(expiring.status, 201);
  const keyId = expiring.body.data.id;
  await eventually(async () => (await server.request('GET', '/v1/listings', { key: expiring.body.data.key })).status === 401, 5_000, 'the key expires', 50);

  const asked = await portal(server, user, 'POST', '/plan-requests', { key_id: keyId, plan: 'business' });
  assert.equal(asked.status, 409, asked.text);
  assert.match(asked.body.error, /expired/);
  const switched = await portal(server, user, 'PATCH', `/keys/${keyId}`, { plan: 'pro' });
  assert.equal(switched.status, 409, switched.text);
  assert.equal((await portal(server, user, 'GET', '/keys')).body.data[0].plan, 'free', 'the plan is unchanged');
  assert.equal((await portal(server, user, 'GET', '/plan-requests')).body.data.length, 0, 'no request was kept');

  // The operator cannot move an expired key either, unless the same change gives it a new expiry.
  assert.equal((await server.admin('PATCH', `/admin/v1/keys/${keyId}`, { plan: 'pro' })).status, 409);
  const revived = await server.admin('PATCH', `/admin/v1/keys/${keyId}`, { plan: 'pro', expires_at: null });
  assert.equal(revived.status, 200, revived.text);

  const revokedKey = await portal(server, user, 'POST', '/keys', { name: 'gone' });
  await portal(server, user, 'DELETE', `/keys/${revokedKey.body.data.id}`);
  assert.equal((await portal(server, user, 'POST', '/plan-requests', { key_id: revokedKey.body.data.id, plan: 'business' })).status, 409);
  assert.equal((await portal(server, user, 'PATCH', `/keys/${revokedKey.body.data.id}`, { plan: 'pro' })).status, 409);
});

test("a user follows their plan requests: pending, declined with the operator's note, cancelled; never another user's", async (t) => {
  const server = await startServer(t);
  const ada = await signedInUser(server);
  const bob = await signedInUser(server);
  const first = (await portal(server, ada, 'POST', '/keys', { name: 'one' })).body.data.id;
  const second = (await portal(server, ada, 'POST', '/keys', { name: 'two' })).body.data.id;
  const bobs = (await portal(server, bob, 'POST', '/keys', { name: 'bob' })).body.data.id;

  const declinedOne = await portal(server, ada, 'POST', '/plan-requests', { key_id: first, plan: 'business' });
  assert.equal(declinedOne.status, 201);
  assert.equal(declinedOne.body.data.note, null);
  const declined = await server.admin('POST', `/admin/v1/plan-requests/${declinedOne.body.data.id}/decline`, { note: 'Write to sales first, please.' });
  assert.equal(declined.status, 200, declined.text);
  assert.equal(declined.body.data.note, 'Write to sales first, please.');
  const tooLong = await server.admin('POST', `/admin/v1/plan-requests/${declinedOne.body.data.id}/decline`, { note: 'x'.repeat(501) });
  assert.equal(tooLong.status, 400, 'a note is at most 500 characters');

  const pending = await portal(server, ada, 'POST', '/plan-requests', { key_id: second, plan: 'business' });
  const bobsRequest = await portal(server, bob, 'POST', '/plan-requests', { key_id: bobs, plan: 'business' });

  const listed = await portal(server, ada, 'GET', '/plan-requests');
  assert.equal(listed.status, 200);
  assert.deepEqual(listed.body.data.map((request: any) => [request.key_id, request.status]), [[second, 'pending'], [first, 'declined']], 'newest first, only her own');
  assert.equal(listed.body.data[1].note, 'Write to sales first, please.');
  assert.ok(listed.body.data[1].decided_at);
  const forOneKey = await portal(server, ada, 'GET', `/plan-requests?key_id=${first}`);
  assert.deepEqual(forOneKey.body.data.map((request: any) => request.id), [declinedOne.body.data.id]);

  // Cancelling: another user's request is 404 and stays pending; many cancels at once give one 200.
  assert.equal((await portal(server, ada, 'DELETE', `/plan-requests/${bobsRequest.body.data.id}`)).status, 404);
  const cancels = await Promise.all(Array.from({ length: 8 }, () => portal(server, ada, 'DELETE', `/plan-requests/${pending.body.data.id}`)));
  const statuses = cancels.map((answer) => answer.status).sort();
  assert.deepEqual(statuses, [200, 409, 409, 409, 409, 409, 409, 409]);
  const cancelled = cancels.find((answer) => answer.status === 200)!;
  assert.equal(cancelled.body.data.status, 'cancelled');
  assert.ok(cancelled.body.data.decided_at);
  assert.equal((await portal(server, ada, 'DELETE', `/plan-requests/${declinedOne.body.data.id}`)).status, 409, 'a decided request is not cancelled');
  assert.equal((await server.admin('POST', `/admin/v1/plan-requests/${pending.body.data.id}/approve`)).status, 409, 'a cancelled request cannot be approved');
  assert.equal((await server.admin('GET', '/admin/v1/plan-requests?status=pending')).body.data.length, 1, "only bob's is still pending");
  assert.equal((await server.admin('GET', '/admin/v1/plan-requests?status=cancelled')).body.data.length, 1);

  // Once cancelled, the key may ask again.
  assert.equal((await portal(server, ada, 'POST', '/plan-requests', { key_id: second, plan: 'business' })).status, 201);
  const audit = await server.admin('GET', '/admin/v1/audit?action=portal.plan_request_cancel');
  assert.equal(audit.body.data.length, 1);
  assert.equal(audit.body.data[0].actor.id, ada.userId);
  assert.equal((await portal(server, ada, 'GET', '/plan-requests?key_id=key_nope&colour=red')).status, 400, 'unknown query names are refused');
});
