// Clients that open connections and then neither finish a request nor read nor close, against
// a real server with its deadlines shortened through Config.socketTimeouts: after the 408 (or
// the write stall) the server destroys each socket instead of half-closing it and waiting for
// the client, so its connection count returns to 0 by itself, and at a low MAX_CONNECTIONS
// another client's /healthz is answered again once the deadlines have passed. The default
// deadlines themselves are measured in test/hostile/sockets.test.ts.

import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';
import type { SocketTimeouts } from '../../src/http/socket-limits.ts';
import { eventually } from '../helpers/eventually.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

const SHORT: SocketTimeouts = { keepAliveMs: 500, headersMs: 1_000, requestMs: 2_000, writeStallMs: 1_000, checkEveryMs: 100 };

function openConnections(server: TestServer): Promise<number> {
  return new Promise((resolve, reject) => server.app.server.getConnections((error, count) => (error ? reject(error) : resolve(count))));
}

/** A connection that sends `bytes` (if any) and then never reads and never closes its side. */
async function hostileSocket(server: TestServer, bytes: string): Promise<net.Socket> {
  const { port } = new URL(server.url);
  const socket = net.connect(Number(port), '127.0.0.1');
  socket.on('error', () => {});
  socket.pause();
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  if (bytes !== '') socket.write(bytes);
  return socket;
}

test('sockets that send nothing, half a request or never read their answers are destroyed after the deadlines; the slots come back', { timeout: 120_000 }, async (t) => {
  const maxConnections = 40;
  const server = await startServer(t, { dataDir: null, env: { MAX_CONNECTIONS: String(maxConnections) }, config: { socketTimeouts: SHORT } });
  const creator = await server.userWithKey('creator', ['read:listings', 'write:listings']);
  const pipelined = 'GET /openapi.json HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(60);
  const kinds: Record<string, string> = {
    silent: '',
    'half a head': 'GET /healthz HTTP/1.1\r\nHost: x\r\n',
    'half a body': `POST /v1/listings HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${creator.key}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"title":`,
    'never reads its answers': pipelined,
  };
  const sockets: net.Socket[] = [];
  t.after(() => {
    for (const socket of sockets) socket.destroy();
  });
  const names = Object.keys(kinds);
  // The set-up's own keep-alive connection gone first, so the hostile ones take every slot.
  await eventually(async () => (await openConnections(server)) === 0, 5_000, 'the set-up connection closed');
  for (let index = 0; index < maxConnections; index += 1) sockets.push(await hostileSocket(server, kinds[names[index % names.length]!]!));
  // Not checked to be all 40: on a busy machine the first may already have met their deadline.
  const openAtOnce = await openConnections(server);

  // No client reads or closes anything: only the server can free the slots.
  const tookMs = await eventually(async () => (await openConnections(server)) === 0, 20_000, 'the server holding no connection');
  t.diagnostic(`${openAtOnce} open once all were made; ${maxConnections} hostile connections all destroyed by the server within ${Math.round(tookMs)} ms (request deadline ${SHORT.requestMs} ms)`);

  let answered = 0;
  for (let index = 0; index < 20; index += 1) if ((await server.request('GET', '/healthz')).status === 200) answered += 1;
  assert.equal(answered, 20);
});

test('the 408 still arrives whole before the socket is destroyed', { timeout: 60_000 }, async (t) => {
  const server = await startServer(t, { dataDir: null, config: { socketTimeouts: SHORT } });
  const { port } = new URL(server.url);
  const socket = net.connect(Number(port), '127.0.0.1');
  let received = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (received += chunk));
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
  await closed;
  assert.match(received, /^HTTP\/1\.1 408 /);
  const body = JSON.parse(received.slice(received.indexOf('\r\n\r\n') + 4)) as { error: string };
  assert.match(body.error, /in time/);
  await eventually(async () => (await openConnections(server)) === 0, 2_000, 'the server holding no connection');
});

test('a connection that sends no byte at all is answered 408 and closed at the header deadline', { timeout: 60_000 }, async (t) => {
  const server = await startServer(t, { dataDir: null, config: { socketTimeouts: SHORT } });
  await eventually(async () => (await openConnections(server)) === 0, 5_000, 'no connection open before the test');
  const { port } = new URL(server.url);
  const silent = Array.from({ length: 10 }, () => net.connect(Number(port), '127.0.0.1'));
  const outcomes = silent.map(
    (socket) =>
      new Promise<{ received: string; openMs: number }>((resolve) => {
        let received = '';
        let openedAt = 0;
        socket.setEncoding('utf8');
        socket.on('error', () => {});
        socket.once('connect', () => (openedAt = performance.now()));
        socket.on('data', (chunk: string) => (received += chunk));
        socket.once('close', () => resolve({ received, openMs: performance.now() - openedAt }));
      }),
  );
  t.after(() => {
    for (const socket of silent) socket.destroy();
  });
  // Nothing is ever written: only the server's deadline can end these connections.
  for (const { received, openMs } of await Promise.all(outcomes)) {
    assert.match(received, /^HTTP\/1\.1 408 /);
    assert.ok(openMs >= SHORT.headersMs - 50, `closed after ${Math.round(openMs)} ms, before the ${SHORT.headersMs} ms deadline`);
  }
  await eventually(async () => (await openConnections(server)) === 0, 5_000, 'the server holding no connection');
});
