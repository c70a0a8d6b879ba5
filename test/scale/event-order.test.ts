// One order of a user's events on every instance (contract section 23: "on three instances an
// event written on any instance reaches a stream on any other, in order"): events written
// concurrently through two instances reach an open stream on each of three instances in the
// same order, none missing, none twice; GET /v1/events pages on each give that order too; and a
// stream resumed by Last-Event-ID on another instance sends exactly what followed.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { call, clusterForFile, userWithKey, type Instance } from '../helpers/cluster.ts';
import { eventually } from '../helpers/eventually.ts';
import type { TestServer } from '../helpers/server.ts';
import { openStream, type StreamReader } from '../webhooks/event-stream-client.ts';

const cluster = clusterForFile('event_order');
const ROUNDS = 4;
const WRITES_PER_ROUND = 40;

/** The user's kept events as GET /v1/events pages them on `instance`, oldest first. */
async function pagedIds(instance: Instance, key: string): Promise<string[]> {
  const ids: string[] = [];
  let after = '';
  for (;;) {
    const page = await call(instance.url, 'GET', `/v1/events?limit=100${after === '' ? '' : `&after=${after}`}`, key);
    assert.equal(page.status, 200, JSON.stringify(page.body));
    ids.push(...page.body.data.map((event: { id: string }) => event.id));
    if (!page.body.has_more) return ids;
    after = ids[ids.length - 1]!;
  }
}

function asServer(instance: Instance): TestServer {
  return { url: instance.url } as TestServer;
}

test('events written on two instances reach streams on all three in one order, pages agree, and a resume elsewhere is exact', { skip: cluster.skip, timeout: 240_000 }, async (t) => {
  const { instances } = cluster;
  const writer = await userWithKey(instances, 'creator', ['read:listings', 'write:listings', 'read:webhooks']);
  const streams: StreamReader[] = [];
  for (const instance of instances) {
    const opened = await openStream(t, asServer(instance), writer.key);
    assert.equal(opened.status, 200);
    streams.push(opened.reader);
  }
  let expected = 0;
  for (let round = 0; round < ROUNDS; round += 1) {
    // All in flight at once, through two instances: their commits interleave.
    const made = await Promise.all(
      Array.from({ length: WRITES_PER_ROUND }, (_unused, index) =>
        call(instances[index % 2]!.url, 'POST', '/v1/listings', writer.key, { title: `Round ${round} listing ${index}`, type: 'TOOL', price: index }),
      ),
    );
    for (const answer of made) assert.equal(answer.status, 201, JSON.stringify(answer.body));
    expected += WRITES_PER_ROUND;
    await eventually(async () => streams.every((stream) => stream.ids().length >= expected), 60_000, `every stream has ${expected} events`).catch((error: Error) => {
      throw new Error(`${error.message}: streams have ${streams.map((stream) => stream.ids().length).join(', ')}`);
    });
  }
  const order = streams[0]!.ids();
  assert.equal(new Set(order).size, expected, 'no event twice');
  assert.equal(order.length, expected, 'no event more than written');
  for (const [index, stream] of streams.entries()) assert.deepEqual(stream.ids(), order, `the stream on instance ${index} has the same order as on instance 0`);

  for (const [index, instance] of instances.entries()) assert.deepEqual(await pagedIds(instance, writer.key), order, `GET /v1/events on instance ${index} pages the streams' order`);

  // Resumed on each instance from a point in the middle: exactly what followed.
  for (const [index, instance] of instances.entries()) {
    const from = Math.floor(((index + 1) * expected) / (instances.length + 1));
    const resumed = await openStream(t, asServer(instance), writer.key, { 'Last-Event-ID': order[from]! });
    assert.equal(resumed.status, 200);
    await eventually(async () => resumed.reader.ids().length >= expected - from - 1, 60_000, `the resumed stream on instance ${index} caught up`);
    assert.deepEqual(resumed.reader.ids(), order.slice(from + 1), `resumed on instance ${index} after event ${from}`);
    resumed.reader.close();
  }
});
