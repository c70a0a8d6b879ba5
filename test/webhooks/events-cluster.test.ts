// The event stream across three instances sharing PostgreSQL and Redis: a client reads
// GET /v1/events/stream on one instance while its events are made through the two others at
// once, leaves, more events are made, and it resumes with Last-Event-ID on a third instance.
// What it got in all is every event exactly once, in the one order every instance lists them
// in (no gap, no duplicate), whichever instance decided each event.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { eventually } from '../helpers/eventually.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { postgresAndRedisForFile, skipUnlessServices } from '../helpers/services.ts';
import { openStream, type Frame } from './event-stream-client.ts';

const skip = skipUnlessServices('postgresBin', 'redisServer');
const services = postgresAndRedisForFile(skip);
const PERMISSIONS = ['read:webhooks', 'read:listings', 'write:listings'];

/** POST /v1/listings, sent again after a 503 (a busy machine's limiter or catching-up instance: nothing was written). */
async function createListing(server: TestServer, key: string, title: string): Promise<string> {
  for (;;) {
    const answered = await server.request('POST', '/v1/listings', { key, body: { title, type: 'TOOL', price: 1 } });
    if (answered.status === 503) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      continue;
    }
    assert.equal(answered.status, 201, answered.text);
    return answered.body.data.id as string;
  }
}

/** Creates `count` listings at once, spread over `servers`; returns their ids. */
function createAtOnce(servers: readonly TestServer[], key: string, count: number, label: string): Promise<string[]> {
  return Promise.all(Array.from({ length: count }, (_unused, index) => createListing(servers[index % servers.length]!, key, `${label} ${index}`)));
}

/** Every kept event of the key's owner as `server` lists them, oldest first (all pages). */
async function listAll(server: TestServer, key: string): Promise<Array<{ id: string; data: { id: string } }>> {
  const events: Array<{ id: string; data: { id: string } }> = [];
  let after = '';
  for (;;) {
    const page = await server.request('GET', `/v1/events?limit=100${after === '' ? '' : `&after=${after}`}`, { key });
    assert.equal(page.status, 200, page.text);
    events.push(...page.body.data);
    if (!page.body.has_more) return events;
    after = events[events.length - 1]!.id;
  }
}

function listingIdsOf(frames: readonly Frame[]): string[] {
  return frames.map((frame) => JSON.parse(frame.data!).data.id as string);
}

test('a stream read on one instance and resumed with Last-Event-ID on another has every event made through the others, once each, in the order all instances list', { skip, timeout: 180_000 }, async (t) => {
  const databaseUrl = services.postgres.createDatabase(`events_cluster_${process.pid}`);
  const config = { databaseUrl, redisUrl: services.redis.url };
  const servers: TestServer[] = [];
  for (let index = 0; index < 3; index += 1) servers.push(await startServer(t, { dataDir: null, config }));
  const [first, second, third] = servers as [TestServer, TestServer, TestServer];
  const { key } = await first.userWithKey('creator', PERMISSIONS, 100_000);

  const stream = await openStream(t, first, key);
  assert.equal(stream.status, 200);
  // Made through the second and third instances at the same time, none through the first.
  const created = await createAtOnce([second, third], key, 30, 'Before leaving');
  await eventually(async () => stream.reader.events().length >= 10, 30_000, 'events on the first instance');
  stream.reader.close();
  const seenOnFirst = stream.reader.events();
  const lastSeen = seenOnFirst[seenOnFirst.length - 1]!.id!;

  created.push(...(await createAtOnce([second, third], key, 30, 'While away')));
  const resumed = await openStream(t, third, key, { 'last-event-id': lastSeen });
  assert.equal(resumed.status, 200);
  created.push(...(await createAtOnce([second, third], key, 10, 'After resuming')));
  // Made once every other write was acknowledged: the last event of all, on every instance.
  const [closing] = await createAtOnce([second], key, 1, 'Closing');
  created.push(closing!);
  await eventually(async () => listingIdsOf(resumed.reader.events()).includes(closing!), 30_000, 'the closing event on the resumed stream');

  const received = [...seenOnFirst, ...resumed.reader.events()];
  const receivedIds = received.map((frame) => frame.id!);
  assert.equal(new Set(receivedIds).size, receivedIds.length, 'no event twice');
  assert.deepEqual(new Set(listingIdsOf(received)), new Set(created), 'every event, none missed');
  assert.equal(received.length, created.length);

  // One order, the same on every instance, and the one the stream followed.
  const orders = await Promise.all(servers.map((server) => listAll(server, key)));
  for (const order of orders) assert.deepEqual(order.map((event) => event.id), receivedIds);
});
