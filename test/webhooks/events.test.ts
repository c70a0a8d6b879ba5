// The event log, through a real server: GET /v1/events (the caller's own events, oldest first,
// paged by `after`) and GET /v1/events/stream read by a real HTTP client as the bytes arrive
// (Server-Sent Events: `id:`, `event:`, `data:`; resumed with Last-Event-ID, also across a
// restart on the same data directory; heartbeats; ended when the key is revoked; capped per key).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runCli } from '../../src/cli.ts';
import { MarketplaceClient } from '../../src/client/index.ts';
import { DEFAULT_EVENT_STREAM_LIMITS } from '../../src/config.ts';
import { eventually } from '../helpers/eventually.ts';
import { startServer, temporaryDir, type TestServer } from '../helpers/server.ts';
import { openStream, type Frame } from './event-stream-client.ts';

const PERMISSIONS = ['read:webhooks', 'read:listings', 'write:listings'];

async function createListing(server: TestServer, key: string, title: string): Promise<string> {
  const response = await server.request('POST', '/v1/listings', { key, body: { title, type: 'TOOL', price: 1 } });
  assert.equal(response.status, 201, response.text);
  return response.body.data.id as string;
}

/** The ids of the listings the events tell of (each event's data is the listing). */
function listingIdsOf(frames: Frame[]): string[] {
  return frames.map((frame) => JSON.parse(frame.data!).data.id as string);
}

test('GET /v1/events: the caller\'s events oldest first, paged by after; bad after or limit → 400', async (t) => {
  const server = await startServer(t);
  const { key } = await server.userWithKey('creator', PERMISSIONS);
  const listings: string[] = [];
  for (let index = 0; index < 5; index += 1) listings.push(await createListing(server, key, `Listing ${index}`));

  const first = await server.request('GET', '/v1/events?limit=2', { key });
  assert.equal(first.status, 200, first.text);
  assert.equal(first.body.data.length, 2);
  assert.equal(first.body.has_more, true);
  for (const event of first.body.data) {
    assert.equal(event.type, 'listing.created');
    assert.match(event.id, /^evt_/);
    assert.ok(typeof event.created_at === 'string');
  }
  const second = await server.request('GET', `/v1/events?limit=2&after=${first.body.data[1].id}`, { key });
  assert.equal(second.status, 200, second.text);
  assert.equal(second.body.has_more, true);
  const third = await server.request('GET', `/v1/events?limit=2&after=${second.body.data[1].id}`, { key });
  assert.equal(third.body.data.length, 1);
  assert.equal(third.body.has_more, false);
  const all = [...first.body.data, ...second.body.data, ...third.body.data];
  assert.deepEqual(all.map((event: { data: { id: string } }) => event.data.id), listings, 'oldest first, each once');

  const everything = await server.request('GET', '/v1/events', { key });
  assert.equal(everything.body.data.length, 5, 'limit 50 by default');

  const unknown = await server.request('GET', '/v1/events?after=evt_unknown', { key });
  assert.equal(unknown.status, 400);
  assert.match(unknown.body.error, /not one of your kept events/);
  assert.equal((await server.request('GET', '/v1/events?limit=0', { key })).status, 400);
  assert.equal((await server.request('GET', '/v1/events?limit=101', { key })).status, 400);
});

test("another user's events are never visible, by list, after or stream", async (t) => {
  const server = await startServer(t);
  const alice = await server.userWithKey('creator', PERMISSIONS);
  const bob = await server.userWithKey('creator', PERMISSIONS);
  await createListing(server, alice.key, 'Alice 1');
  const aliceEvents = await server.request('GET', '/v1/events', { key: alice.key });
  assert.equal(aliceEvents.body.data.length, 1);

  const bobs = await server.request('GET', '/v1/events', { key: bob.key });
  assert.equal(bobs.status, 200);
  assert.deepEqual(bobs.body.data, []);
  const foreign = await server.request('GET', `/v1/events?after=${aliceEvents.body.data[0].id}`, { key: bob.key });
  assert.equal(foreign.status, 400, 'another user\'s event id is unknown to this caller');

  const stream = await openStream(t, server, bob.key);
  assert.equal(stream.status, 200);
  const bobListing = await createListing(server, bob.key, 'Bob 1');
  await createListing(server, alice.key, 'Alice 2');
  await eventually(async () => stream.reader.events().length >= 1, 10_000, "Bob's own event on his stream");
  const bobSecond = await createListing(server, bob.key, 'Bob 2');
  await eventually(async () => stream.reader.events().length >= 2, 10_000, "Bob's second event");
  // Alice's second event was logged between Bob's two: his stream holds his two alone.
  assert.deepEqual(listingIdsOf(stream.reader.events()), [bobListing, bobSecond]);
});

test('without read:webhooks: 403 on the list and the stream', async (t) => {
  const server = await startServer(t);
  const { key } = await server.userWithKey('creator', ['read:listings', 'write:listings']);
  assert.equal((await server.request('GET', '/v1/events', { key })).status, 403);
  const stream = await openStream(t, server, key);
  assert.equal(stream.status, 403);
  assert.match(stream.contentType, /application\/json/);
});

test('HEAD of the stream answers its head and ends', async (t) => {
  const server = await startServer(t);
  const { key } = await server.userWithKey('creator', PERMISSIONS);
  const head = await server.request('HEAD', '/v1/events/stream', { key });
  assert.equal(head.status, 200);
  assert.match(head.headers.get('content-type') ?? '', /^text\/event-stream/);
});

test('the stream sends the kept events, then live ones as they happen, as id/event/data frames', async (t) => {
  const server = await startServer(t);
  const { key } = await server.userWithKey('creator', PERMISSIONS);
  const before = await createListing(server, key, 'Before the stream');
  const stream = await openStream(t, server, key);
  assert.equal(stream.status, 200);
  assert.match(stream.contentType, /^text\/event-stream/);
  await eventually(async () => stream.reader.events().length === 1, 10_000, 'the kept event');
  const live = await createListing(server, key, 'While streaming');
  await eventually(async () => stream.reader.events().length === 2, 10_000, 'the live event');
  const [first, second] = stream.reader.events();
  assert.equal(first!.event, 'listing.created');
  assert.deepEqual(listingIdsOf([first!, second!]), [before, live]);
  assert.equal(JSON.parse(second!.data!).id, second!.id, 'id: is the event id, the same as in its payload');
  const listed = await server.request('GET', '/v1/events', { key });
  assert.deepEqual(stream.reader.ids(), listed.body.data.map((event: { id: string }) => event.id), 'the same events as the list');
});

test('Last-Event-ID across a restart: exactly the missed events, then live ones, none twice', async (t) => {
  const dataDir = temporaryDir(t);
  const first = await startServer(t, { dataDir });
  const { key } = await first.userWithKey('creator', PERMISSIONS);
  await createListing(first, key, 'Seen 1');
  await createListing(first, key, 'Seen 2');
  const stream = await openStream(t, first, key);
  await eventually(async () => stream.reader.events().length === 2, 10_000, 'the two first events');
  const lastSeen = stream.reader.ids()[1]!;
  stream.reader.close();
  const missed = [await createListing(first, key, 'Missed 1'), await createListing(first, key, 'Missed 2')];
  await first.close();

  const second = await startServer(t, { dataDir });
  missed.push(await createListing(second, key, 'Missed 3, after the restart'));
  const resumed = await openStream(t, second, key, { 'last-event-id': lastSeen });
  assert.equal(resumed.status, 200);
  await eventually(async () => resumed.reader.events().length === 3, 10_000, 'the three missed events');
  const live = await createListing(second, key, 'Live after resuming');
  await eventually(async () => resumed.reader.events().length === 4, 10_000, 'the live event');
  assert.deepEqual(listingIdsOf(resumed.reader.events()), [...missed, live], 'the missed events in order, then the live one');
  assert.equal(new Set(resumed.reader.ids()).size, 4, 'no event twice');
  assert.ok(!resumed.reader.ids().includes(lastSeen));

  // ?after= resumes the same way (for clients that cannot set the header).
  const byQuery = await openStream(t, second, key, {}, `/v1/events/stream?after=${lastSeen}`);
  await eventually(async () => byQuery.reader.events().length === 4, 10_000, 'the same four by ?after=');
  assert.deepEqual(byQuery.reader.ids(), resumed.reader.ids());
  const unknown = await openStream(t, second, key, { 'last-event-id': 'evt_nope' });
  assert.equal(unknown.status, 400);
});

test('heartbeat comments arrive at the configured interval, past every socket deadline; a revoked key ends the stream', async (t) => {
  // Deadlines far shorter than the stream lives: the request, header, keep-alive and write-stall checks must not cut it.
  const socketTimeouts = { keepAliveMs: 100, headersMs: 150, requestMs: 150, writeStallMs: 150, checkEveryMs: 20 };
  const server = await startServer(t, { config: { socketTimeouts, eventStreams: { ...DEFAULT_EVENT_STREAM_LIMITS, heartbeatMs: 50 } } });
  const { key, keyId } = await server.userWithKey('creator', PERMISSIONS);
  const opened = performance.now();
  const stream = await openStream(t, server, key);
  assert.equal(stream.status, 200);
  await eventually(async () => stream.reader.frames.some((frame) => frame.comment === 'keep-alive'), 10_000, 'a keep-alive comment');
  await eventually(async () => performance.now() - opened > 4 * socketTimeouts.requestMs && stream.reader.frames.length >= 6, 10_000, 'heartbeats past the deadlines');
  assert.equal(stream.reader.ended, false, 'still open past every socket deadline');
  await createListing(server, key, 'Still streaming');
  await eventually(async () => stream.reader.events().length === 1, 10_000, 'an event after the deadlines');
  assert.equal((await server.admin('DELETE', `/admin/v1/keys/${keyId}`)).status, 200);
  await eventually(async () => stream.reader.ended, 10_000, 'the stream to end once its key is revoked');
});

test('streams are capped per key: one past the cap is 429, and a closed one frees its place', async (t) => {
  const server = await startServer(t, { config: { eventStreams: { ...DEFAULT_EVENT_STREAM_LIMITS, perKey: 2 } } });
  const { key } = await server.userWithKey('creator', PERMISSIONS);
  const one = await openStream(t, server, key);
  const two = await openStream(t, server, key);
  assert.deepEqual([one.status, two.status], [200, 200]);
  const three = await openStream(t, server, key);
  assert.equal(three.status, 429);
  one.reader.close();
  await eventually(async () => (await openStream(t, server, key)).status === 200, 10_000, 'a place freed by the closed stream');
});

test('GET /metrics counts the open streams: up as they open, down as they close', async (t) => {
  const server = await startServer(t);
  const { key } = await server.userWithKey('creator', PERMISSIONS);
  const openStreams = async (): Promise<number> => {
    const scraped = await server.admin('GET', '/metrics');
    assert.equal(scraped.status, 200);
    const line = /^marketplace_event_streams_open (\d+)$/m.exec(scraped.text);
    assert.ok(line, 'marketplace_event_streams_open is reported');
    return Number(line[1]);
  };
  assert.equal(await openStreams(), 0);
  const one = await openStream(t, server, key);
  const two = await openStream(t, server, key);
  assert.deepEqual([one.status, two.status], [200, 200]);
  assert.equal(await openStreams(), 2);
  one.reader.close();
  await eventually(async () => (await openStreams()) === 1, 10_000, 'the closed stream no longer counted');
  two.reader.close();
  await eventually(async () => (await openStreams()) === 0, 10_000, 'no stream counted once both closed');
});

test('the typed client: events.list pages, and events.stream resumes by itself across a restart, none missed or twice', async (t) => {
  const dataDir = temporaryDir(t);
  const first = await startServer(t, { dataDir });
  const { key } = await first.userWithKey('creator', PERMISSIONS);
  const port = new URL(first.url).port;
  const client = new MarketplaceClient({ baseUrl: first.url, apiKey: key });
  const created = [await createListing(first, key, 'Client 1'), await createListing(first, key, 'Client 2')];

  const page = await client.events.list({ limit: 1 });
  assert.equal(page.data.length, 1);
  assert.equal(page.has_more, true);
  const rest = await client.events.list({ after: page.data[0]!.id });
  assert.deepEqual([...page.data, ...rest.data].map((event) => (event.data as { id: string }).id), created);

  const abort = new AbortController();
  t.after(() => abort.abort());
  const received: string[] = [];
  const eventIds: string[] = [];
  const reading = (async () => {
    for await (const event of client.events.stream({ signal: abort.signal, reconnectDelayMs: 20 })) {
      received.push((event.data as { id: string }).id);
      eventIds.push(event.id);
    }
  })();
  await eventually(async () => received.length === 2, 10_000, 'the kept events through the client');
  await first.close();
  // The same address again, on the same data directory: the client reconnects with the last id it had.
  const second = await startServer(t, { dataDir, env: { PORT: port } });
  created.push(await createListing(second, key, 'Client 3, after the restart'));
  await eventually(async () => received.length === 3, 10_000, 'the event written after the restart');
  created.push(await createListing(second, key, 'Client 4, live'));
  await eventually(async () => received.length === 4, 10_000, 'the live event');
  abort.abort();
  await reading;
  assert.deepEqual(received, created, 'each event once, in order');
  assert.equal(new Set(eventIds).size, 4);
});

test('marketplace events tail prints each event as one JSON line as it happens, until stopped', async (t) => {
  const server = await startServer(t);
  const { key } = await server.userWithKey('creator', PERMISSIONS);
  const created = [await createListing(server, key, 'Tail 1')];
  let stdout = '';
  let stderr = '';
  const abort = new AbortController();
  t.after(() => abort.abort());
  const io = { stdout: { write: (text: string) => (stdout += text) }, stderr: { write: (text: string) => (stderr += text) }, env: { MARKETPLACE_URL: server.url, MARKETPLACE_KEY: key }, signal: abort.signal };
  const running = runCli(['events', 'tail'], io);
  const lines = () => stdout.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as { id: string; data: { id: string } });
  await eventually(async () => lines().length === 1, 10_000, 'the kept event');
  created.push(await createListing(server, key, 'Tail 2'));
  await eventually(async () => lines().length === 2, 10_000, 'the live event');
  abort.abort();
  assert.equal(await running, 0, stderr);
  assert.deepEqual(lines().map((event) => event.data.id), created);
});
