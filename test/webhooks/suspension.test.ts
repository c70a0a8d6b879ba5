// A suspension drops the user's waiting deliveries unsent, as docs/operations-moderation.md
// promises: a delivery retrying when the user is suspended is not sent after the unsuspension.
// Through a real server, with a real receiver that fails the first attempt.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DELIVERIES } from '../../src/domain/records.ts';
import type { DeliveryRecord } from '../../src/webhooks/records.ts';
import { startServer } from '../helpers/server.ts';
import { startReceiver, waitFor } from './fixtures.ts';

const PERMISSIONS = ['read:webhooks', 'write:webhooks', 'read:listings', 'write:listings'];

test('a delivery waiting for its retry when the user is suspended is dropped, and not sent after the unsuspension', async (t) => {
  // The first request fails (so the ping waits for its retry); later ones succeed.
  const receiver = await startReceiver(t, (_request, response, index) => {
    response.writeHead(index === 0 ? 500 : 200);
    response.end();
  });
  // Retried 1.5 s after the failure: long enough to suspend and unsuspend before it is due.
  const server = await startServer(t, { dataDir: null, env: { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_DELAYS_MS: '1500' } });
  const { userId, key } = await server.userWithKey('creator', PERMISSIONS);
  const registered = await server.request('POST', '/v1/webhooks', { key, body: { url: receiver.url, events: ['ping', 'listing.created'] } });
  assert.equal(registered.status, 201, registered.text);
  const hookId = registered.body.data.id as string;
  const waiting = () => [...server.app.store.values<DeliveryRecord>(DELIVERIES)].filter((delivery) => delivery.webhook_id === hookId);
  await waitFor('the ping to wait for its retry', () => waiting()[0]?.status === 'retrying');

  assert.equal((await server.admin('POST', `/admin/v1/users/${userId}/suspend`, { reason: 'spam' })).status, 200);
  assert.deepEqual(waiting(), [], 'the suspension dropped the waiting delivery');
  assert.equal((await server.admin('POST', `/admin/v1/users/${userId}/unsuspend`)).status, 200);

  // An event after the unsuspension is delivered; the dropped ping never is.
  const created = await server.request('POST', '/v1/listings', { key, body: { title: 'After', type: 'TOOL', price: 1 } });
  assert.equal(created.status, 201, created.text);
  await waitFor('the new event to arrive', () => receiver.received.some((request) => JSON.parse(request.body).type === 'listing.created'), 5_000);
  assert.deepEqual(
    receiver.received.map((request) => JSON.parse(request.body).type),
    ['ping', 'listing.created'],
    'the ping was tried once, before the suspension, and never again',
  );
});
