// Webhook work stays bounded under hostile owners, through a real server: a webhook never holds
// more than 1,000 pending deliveries however many writes pile up behind a dead receiver (so the
// log stops growing with them), and one user's hung receivers never hold up another user's
// deliveries: the other user's ping arrives while the hung attempts are still waiting, not after
// one of them is given up. How soon it arrives is a benchmark figure (npm run bench:timings,
// docs/performance.md).
// Not in test:unit (slow: minutes of writes behind dead receivers); npm test runs it.

import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { DELIVERIES } from '../../src/domain/records.ts';
import { LOG_FILE_NAME } from '../../src/store/format.ts';
import type { DeliveryRecord } from '../../src/domain/webhook-records.ts';
import { startServer } from '../helpers/server.ts';
import type { TestServer } from '../helpers/server.ts';
import { answer, startReceiver, waitFor } from './fixtures.ts';

const WEBHOOK_PERMISSIONS = ['read:webhooks', 'write:webhooks', 'read:listings', 'write:listings'];
const PENDING_CAP = 1_000;

/** A port on 127.0.0.1 where nothing listens: every delivery there is refused at once. */
async function deadPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

function pendingPerWebhook(server: TestServer): Map<string, number> {
  const counts = new Map<string, number>();
  for (const delivery of server.app.store.values<DeliveryRecord>(DELIVERIES)) {
    counts.set(delivery.webhook_id, (counts.get(delivery.webhook_id) ?? 0) + 1);
  }
  return counts;
}

/** `count` PUTs of one listing, `inFlight` at a time; each one queues an event for every webhook. */
async function putMany(server: TestServer, key: string, listingId: string, count: number, inFlight = 8): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) {
      const index = next++;
      const response = await server.request('PUT', `/v1/listings/${listingId}`, { key, body: { title: `Edition ${index}` } });
      assert.equal(response.status, 200, response.text);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
}

test('20 webhooks to a dead host, many PUTs: at most 1,000 pending per webhook, the log stops growing', { timeout: 240_000 }, async (t) => {
  const port = await deadPort();
  // One long retry delay: after its first refused attempt every delivery sits pending.
  const server = await startServer(t, { env: { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_DELAYS_MS: '3600000' } });
  const { key } = await server.userWithKey('creator', WEBHOOK_PERMISSIONS, 1_000_000);
  for (let index = 0; index < 20; index += 1) {
    const response = await server.request('POST', '/v1/webhooks', { key, body: { url: `http://127.0.0.1:${port}/hook/${index}`, events: ['listing.updated'] } });
    assert.equal(response.status, 201, response.text);
  }
  const created = await server.request('POST', '/v1/listings', { key, body: { title: 'Amplified', type: 'TOOL', price: 1 } });
  assert.equal(created.status, 201, created.text);
  const listingId = created.body.data.id as string;
  const logPath = join(server.dataDir!, LOG_FILE_NAME);

  await putMany(server, key, listingId, 1_100);
  await server.app.store.compact();
  const bytesAfterFirst = statSync(logPath).size;
  const pendingAfterFirst = pendingPerWebhook(server);

  await putMany(server, key, listingId, 1_100);
  await server.app.store.compact();
  const bytesAfterSecond = statSync(logPath).size;
  const pendingAfterSecond = pendingPerWebhook(server);
  t.diagnostic(`log after compaction: ${bytesAfterFirst} bytes after 1,100 PUTs, ${bytesAfterSecond} bytes after 2,200`);
  t.diagnostic(`pending per webhook: ${Math.max(...pendingAfterFirst.values())} then ${Math.max(...pendingAfterSecond.values())}`);

  assert.equal(pendingAfterSecond.size, 20);
  for (const [webhookId, pending] of pendingAfterSecond) assert.ok(pending <= PENDING_CAP, `${webhookId}: ${pending} pending`);
  assert.ok(bytesAfterSecond < bytesAfterFirst * 1.1, `log grew from ${bytesAfterFirst} to ${bytesAfterSecond} bytes`);
  // 2,200 events for each of 20 webhooks, 1,000 each still pending: the rest were dropped as failed.
  const metrics = await server.admin('GET', '/metrics');
  const failedLine = /^marketplace_webhook_deliveries_total\{outcome="failed"\} (\d+)$/m.exec(metrics.text);
  assert.equal(Number(failedLine?.[1]), 20 * (2_200 - PENDING_CAP), 'GET /metrics counts the dropped deliveries as failed');
});

test("another user's delivery arrives while a tarpit user's 20 hung receivers are all still waiting", { timeout: 60_000 }, async (t) => {
  const hung = await startReceiver(t, () => {}); // never answers: each attempt waits out its timeout
  const healthy = await startReceiver(t, answer(200));
  const server = await startServer(t, { dataDir: null, env: { WEBHOOK_ALLOW_PRIVATE: '1' } });
  const tarpit = await server.userWithKey('creator', WEBHOOK_PERMISSIONS);
  const other = await server.userWithKey('member', WEBHOOK_PERMISSIONS);

  for (let index = 0; index < 20; index += 1) {
    const response = await server.request('POST', '/v1/webhooks', { key: tarpit.key, body: { url: `${hung.url}/${index}` } });
    assert.equal(response.status, 201, response.text);
  }
  await waitFor('the hung receivers to be holding requests', () => hung.open >= 2);

  const registeredAt = performance.now();
  const response = await server.request('POST', '/v1/webhooks', { key: other.key, body: { url: healthy.url } });
  assert.equal(response.status, 201, response.text);
  // Checked every few milliseconds until the ping is in: has any hung attempt ended yet (each
  // waits out its 10 s timeout, then its connection closes)? Every request the hung receivers
  // got is still open until then.
  let hungAttemptEnded = false;
  await waitFor("the other user's ping", () => {
    if (healthy.received.length > 0) return true;
    if (hung.open < hung.received.length) hungAttemptEnded = true;
    return false;
  });
  t.diagnostic(`the other user's ping arrived after ${Math.round(healthy.received[0]!.at - registeredAt)} ms; hung requests open: ${hung.open}`);
  // The ping did not queue behind the tarpit's sends: it came while they were all still hung.
  assert.equal(hungAttemptEnded, false, "a hung attempt was given up before the other user's ping arrived");
});
