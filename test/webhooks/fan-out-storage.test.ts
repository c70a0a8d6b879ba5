// An event fanned out to many webhooks stores its payload once: one event record, and one
// small delivery per webhook referring to it. Through a real server on a data dir, with 20
// webhooks to a dead host: what each listing PUT adds to the log, and to the records loaded
// after a restart; the event record goes once no delivery refers to it; a delivery written
// before event records existed (its payload inline) still loads and is sent.

import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { isoTime } from '../../src/clock.ts';
import { collectionName } from '../../src/store/collections.ts';
import type { StoredRecord } from '../../src/store/format.ts';
import { LOG_FILE_NAME } from '../../src/store/format.ts';
import { Store } from '../../src/store/store.ts';
import { startServer, temporaryDir } from '../helpers/server.ts';
import type { TestServer } from '../helpers/server.ts';
import { answer, startReceiver, waitFor } from './fixtures.ts';

const PERMISSIONS = ['read:webhooks', 'write:webhooks', 'read:listings', 'write:listings'];
// Named here rather than imported, so that this file also runs against code without events.
const DELIVERIES = collectionName<StoredRecord & { webhook_id: string; event_id: string; status: string; payload?: string }>('deliveries');
const EVENTS = collectionName<StoredRecord & { payload: string }>('events');
const ENV = { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_DELAYS_MS: '3600000' };

async function deadPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/** Bytes of JSON the deliveries and events hold: what the server keeps for them in memory. */
function storedBytes(server: TestServer): number {
  let bytes = 0;
  for (const record of server.app.store.values(DELIVERIES)) bytes += JSON.stringify(record).length;
  for (const record of server.app.store.values(EVENTS)) bytes += JSON.stringify(record).length;
  return bytes;
}

function settled(server: TestServer, expected: number): boolean {
  const deliveries = [...server.app.store.values(DELIVERIES)];
  return deliveries.length === expected && deliveries.every((delivery) => delivery.status === 'retrying');
}

test('20 webhooks: a listing PUT stores its payload once, in the log and in memory after a restart', { timeout: 120_000 }, async (t) => {
  const port = await deadPort();
  const dataDir = temporaryDir(t);
  const server = await startServer(t, { dataDir, env: ENV });
  const { key } = await server.userWithKey('creator', PERMISSIONS, 100_000);
  for (let index = 0; index < 20; index += 1) {
    const response = await server.request('POST', '/v1/webhooks', { key, body: { url: `http://127.0.0.1:${port}/hook/${index}`, events: ['listing.updated'] } });
    assert.equal(response.status, 201, response.text);
  }
  const created = await server.request('POST', '/v1/listings', { key, body: { title: 'Fanned out', type: 'TOOL', price: 1 } });
  const listingId = created.body.data.id as string;
  const logPath = join(dataDir, LOG_FILE_NAME);
  const puts = 10;
  const description = 'x'.repeat(4_000);

  await server.app.store.compact();
  const bytesBefore = statSync(logPath).size;
  for (let index = 0; index < puts; index += 1) {
    const response = await server.request('PUT', `/v1/listings/${listingId}`, { key, body: { description: `${index} ${description}` } });
    assert.equal(response.status, 200, response.text);
  }
  // Each delivery's first attempt is refused at once; it then waits an hour for its retry.
  await waitFor('every delivery to have had its first attempt', () => settled(server, 20 * puts), 30_000);
  // The live records only (attempts rewrite deliveries and webhooks; those copies are not what is measured).
  await server.app.store.compact();
  const logPerPut = (statSync(logPath).size - bytesBefore) / puts;
  await server.close();

  const restarted = await startServer(t, { dataDir, env: ENV });
  const memoryPerPut = storedBytes(restarted) / puts;
  t.diagnostic(`per PUT with a 4,000-byte description and 20 webhooks: ${Math.round(logPerPut)} bytes of compacted log, ${Math.round(memoryPerPut)} bytes of delivery and event records after a restart`);
  // Twenty copies of the payload are over 80,000 bytes; once, about 4,000 plus twenty deliveries of ~350.
  assert.ok(memoryPerPut < 5 * description.length, `${Math.round(memoryPerPut)} bytes of records per PUT`);
  assert.ok(logPerPut < 5 * description.length, `${Math.round(logPerPut)} bytes of log per PUT`);
  assert.equal([...restarted.app.store.values(EVENTS)].length, puts, 'one event record per PUT');

  // Deleting the webhooks drops their deliveries; the events go with the last one.
  const listed = await restarted.request('GET', '/v1/webhooks?limit=100', { key });
  for (const webhook of listed.body.data as Array<{ id: string }>) assert.equal((await restarted.request('DELETE', `/v1/webhooks/${webhook.id}`, { key })).status, 200);
  assert.equal([...restarted.app.store.values(DELIVERIES)].length, 0);
  await waitFor('the events no delivery refers to any more to be deleted', () => [...restarted.app.store.values(EVENTS)].length === 0);
});

test('a delivery stored with its payload inline (written before event records) is still sent with it', async (t) => {
  const receiver = await startReceiver(t, answer(200));
  const dataDir = temporaryDir(t);
  const server = await startServer(t, { dataDir, env: ENV });
  const { key } = await server.userWithKey('creator', PERMISSIONS);
  const registered = await server.request('POST', '/v1/webhooks', { key, body: { url: receiver.url, events: ['listing.created'] } });
  assert.equal(registered.status, 201, registered.text);
  await server.close();

  // As an older release wrote it: the body in the delivery itself, no event record; due now.
  const at = Date.now();
  const payload = JSON.stringify({ id: 'evt_legacy0000000000000000', type: 'listing.created', created_at: isoTime(at), data: { id: 'lst_legacy', title: 'Old' } });
  const legacy = {
    id: 'dlv_legacy0000000000000000',
    webhook_id: registered.body.data.id as string,
    event_id: 'evt_legacy0000000000000000',
    type: 'listing.created',
    payload,
    status: 'pending',
    attempts: 0,
    next_attempt_at: at,
    response_status: null,
    last_error: null,
    created_at: isoTime(at),
    updated_at: isoTime(at),
  };
  const store = await Store.open({ dataDir, warn: () => {} });
  await store.write([{ op: 'put', collection: 'deliveries', id: legacy.id, data: legacy }]);
  await store.close();

  // Loaded at start and due: sent with its own payload.
  const restarted = await startServer(t, { dataDir, env: ENV });
  await waitFor('the legacy delivery to arrive', () => receiver.received.length === 1, 5_000);
  assert.equal(receiver.received[0]!.body, payload);
  assert.equal(receiver.received[0]!.headers['webhook-id'], 'evt_legacy0000000000000000');
  await waitFor('the delivered one to be deleted', () => [...restarted.app.store.values(DELIVERIES)].length === 0);
});
