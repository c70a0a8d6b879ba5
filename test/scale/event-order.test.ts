// One order of a user's events on every instance (contract section 23: "on three instances an
// event written on any instance reaches a stream on any other, in order"): events written
// concurrently through two instances reach an open stream on each of three instances in the
// same order, none missing, none twice; GET /v1/events pages on each give that order too; and a
// stream resumed by Last-Event-ID on another instance sends exactly what followed. The typed
// client, behind a balancer that sends each connection to the next instance and cuts its stream
// now and then, reconnects on another instance each time and yields every event once, in order.

import assert from 'node:assert/strict';
import { createServer, request as httpRequest, type ServerResponse } from 'node:http';
import { test } from 'node:test';
import { MarketplaceClient } from '../../src/client/index.ts';
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

/**
 * A balancer for the test: each request goes to the next instance in turn; `cut()` ends every
 * response it is relaying (the client sees its stream drop).
 */
async function roundRobinBalancer(t: import('node:test').TestContext, instances: readonly Instance[]): Promise<{ url: string; cut: () => number; served: number[] }> {
  const open = new Set<ServerResponse>();
  const served = instances.map(() => 0);
  let next = 0;
  const balancer = createServer((req, res) => {
    const index = next++ % instances.length;
    served[index]! += 1;
    const target = new URL(req.url ?? '/', instances[index]!.url);
    const upstream = httpRequest(target, { method: req.method, headers: req.headers, agent: false }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      res.flushHeaders();
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    open.add(res);
    res.on('close', () => {
      open.delete(res);
      upstream.destroy();
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => balancer.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => balancer.close(() => resolve())));
  t.after(() => balancer.closeAllConnections());
  const cut = () => {
    const count = open.size;
    for (const res of open) res.destroy();
    open.clear();
    return count;
  };
  return { url: `http://127.0.0.1:${(balancer.address() as { port: number }).port}`, cut, served };
}

test('the typed client reconnects on another instance each time its stream drops, and yields every event once, in order', { skip: cluster.skip, timeout: 240_000 }, async (t) => {
  const { instances } = cluster;
  const writer = await userWithKey(instances, 'creator', ['read:listings', 'write:listings', 'read:webhooks']);
  const reference = await openStream(t, asServer(instances[0]!), writer.key);
  const balancer = await roundRobinBalancer(t, instances);
  const client = new MarketplaceClient({ baseUrl: balancer.url, apiKey: writer.key });
  const abort = new AbortController();
  t.after(() => abort.abort());
  const received: string[] = [];
  const reading = (async () => {
    for await (const event of client.events.stream({ signal: abort.signal, reconnectDelayMs: 10 })) received.push(event.id);
  })();
  const ROUNDS_WITH_CUTS = 6;
  let written = 0;
  const connections = () => balancer.served.reduce((sum, count) => sum + count, 0);
  for (let round = 0; round < ROUNDS_WITH_CUTS; round += 1) {
    await eventually(async () => connections() > round, 60_000, `the client's stream number ${round + 1} connected`);
    // Writes in flight through two instances while the client's stream is cut and resumed elsewhere.
    const writes = Promise.all(
      Array.from({ length: 20 }, (_unused, index) => call(instances[index % 2]!.url, 'POST', '/v1/listings', writer.key, { title: `Cut ${round}, listing ${index}`, type: 'TOOL', price: index })),
    );
    await eventually(async () => received.length > written, 60_000, 'the client received an event of this round');
    assert.equal(balancer.cut(), 1, 'the client\'s one stream was cut');
    for (const answer of await writes) assert.equal(answer.status, 201, JSON.stringify(answer.body));
    written += 20;
  }
  await eventually(async () => received.length >= written && reference.reader.ids().length >= written, 60_000, `${written} events through the client`).catch((error: Error) => {
    throw new Error(`${error.message}: the client has ${received.length}, the reference stream ${reference.reader.ids().length}`);
  });
  abort.abort();
  await reading;
  assert.deepEqual(received, reference.reader.ids(), 'the client yielded the reference order, each event once');
  assert.ok(balancer.served.every((count) => count >= 2), `every instance served the client's streams (${balancer.served.join(', ')})`);
});
