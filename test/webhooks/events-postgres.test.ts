// Event records on PostgreSQL, shared by two instances: events queued on both at once are stored
// once each, every webhook receives each of them with its payload; once delivered, an event is
// kept (once) only while a webhook's last outcomes name it, so it can be sent again, and when
// the webhooks go the events are deleted, from both instances' memory and from the database.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import { DELIVERIES, EVENTS } from '../../src/domain/records.ts';
import { eventually } from '../helpers/eventually.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { postgresAndRedisForFile, skipUnlessServices } from '../helpers/services.ts';
import { answer, startReceiver } from './fixtures.ts';

const skip = skipUnlessServices('postgresBin', 'redisServer');
const services = postgresAndRedisForFile(skip);
const PERMISSIONS = ['read:webhooks', 'write:webhooks', 'read:listings', 'write:listings'];

test('events queued on two instances are stored once, reach every webhook, are kept once for redelivery, and are deleted with the webhooks', { skip, timeout: 120_000 }, async (t) => {
  const databaseUrl = services.postgres.createDatabase(`events_test_${process.pid}`);
  const config = { databaseUrl, redisUrl: services.redis.url, webhookAllowPrivate: true };
  const servers: TestServer[] = [];
  for (let index = 0; index < 2; index += 1) servers.push(await startServer(t, { dataDir: null, config }));
  const [first, second] = servers as [TestServer, TestServer];
  const receiver = await startReceiver(t, answer(200));
  const creator = await first.userWithKey('creator', PERMISSIONS, 100_000);
  for (let index = 0; index < 3; index += 1) {
    const registered = await first.request('POST', '/v1/webhooks', { key: creator.key, body: { url: `${receiver.url}/${index}`, events: ['listing.updated'] } });
    assert.equal(registered.status, 201, registered.text);
  }
  const made = await first.request('POST', '/v1/listings', { key: creator.key, body: { title: 'Shared', type: 'TOOL', price: 1 } });
  const listingId = made.body.data.id as string;
  await eventually(async () => (await second.request('GET', '/v1/webhooks', { key: creator.key })).body?.data?.length === 3, 5_000, 'the webhooks on the second instance');
  await eventually(async () => (await second.request('GET', `/v1/listings/${listingId}`, { key: creator.key })).status === 200, 5_000, 'the listing on the second instance');

  const puts = 20;
  const answers = await Promise.all(Array.from({ length: puts }, (_unused, index) => servers[index % 2]!.request('PUT', `/v1/listings/${listingId}`, { key: creator.key, body: { price: 100 + index } })));
  assert.deepEqual([...new Set(answers.map((answered) => answered.status))], [200]);
  await eventually(async () => receiver.received.length >= 3 * puts, 20_000, 'every event at every webhook');

  // Each event reached each of the three webhooks with the same body, the listing as that PUT left it.
  const byEvent = new Map<string, Set<string>>();
  for (const request of receiver.received) {
    const event = JSON.parse(request.body) as { id: string; type: string; data: { id: string; price: number } };
    assert.equal(event.type, 'listing.updated');
    assert.equal(event.data.id, listingId);
    assert.equal(request.headers['webhook-id'], event.id);
    const paths = byEvent.get(event.id) ?? new Set<string>();
    paths.add(request.path);
    byEvent.set(event.id, paths);
  }
  assert.equal(byEvent.size, puts, 'one event per PUT');
  for (const [eventId, paths] of byEvent) assert.equal(paths.size, 3, `${eventId} reached every webhook`);

  for (const server of servers) {
    await eventually(async () => server.app.store.size(DELIVERIES) === 0, 10_000, 'no delivery left in memory');
    assert.equal(server.app.store.size(EVENTS), puts, 'each delivered event kept once, for its outcomes');
  }
  const webhooks = (await first.request('GET', '/v1/webhooks', { key: creator.key })).body.data as Array<{ id: string }>;
  for (const webhook of webhooks) assert.equal((await servers[webhooks.indexOf(webhook) % 2]!.request('DELETE', `/v1/webhooks/${webhook.id}`, { key: creator.key })).status, 200);
  for (const server of servers) {
    await eventually(async () => server.app.store.size(EVENTS) === 0, 10_000, 'no event left in memory once no outcome names it');
  }
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  t.after(() => client.end());
  const left = await client.query("SELECT collection, count(*)::int AS n FROM marketplace_records WHERE collection IN ('events', 'deliveries') AND data IS NOT NULL GROUP BY collection");
  assert.deepEqual(left.rows, [], 'no event or delivery left in the database');
});
