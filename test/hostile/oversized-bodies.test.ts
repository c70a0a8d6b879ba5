// A body over 64 KiB is answered 413 only once the server has read (and dropped) the rest of
// it, up to 1 MiB past the limit: a client, or a proxy, still sending its body never has the
// connection reset under it, so nginx sees a complete 413 instead of a failed upstream (which
// with max_fails=1 took the instance out, and ordinary GETs got 502). A body larger than that
// bound is not read to its end: the 413 is sent and the connection destroyed.

import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';
import { ADMIN_TOKEN, startServer, type TestServer } from '../helpers/server.ts';
import { skipUnlessServices, startNginx } from '../helpers/services.ts';

interface Exchange {
  /** Everything received, as text. */
  received: string;
  /** The error the client's socket saw (ECONNRESET, EPIPE), if any. */
  error: string | null;
  /** Body bytes the client managed to hand to its socket before it closed. */
  sent: number;
}

/** Sends `head` then `bodyBytes` of body in 16 KiB writes (each awaited), then waits for the close. */
function sendLarge(server: TestServer, head: string, bodyBytes: number, chunked = false): Promise<Exchange> {
  const { port } = new URL(server.url);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), '127.0.0.1');
    const result: Exchange = { received: '', error: null, sent: 0 };
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (result.received += chunk));
    socket.on('error', (error: NodeJS.ErrnoException) => (result.error ??= error.code ?? error.message));
    socket.on('close', () => resolve(result));
    const piece = Buffer.alloc(16 * 1024, 'a');
    const write = (bytes: Buffer | string): Promise<boolean> =>
      new Promise((done) => {
        if (socket.destroyed) return done(false);
        socket.write(bytes, (error) => done(!error));
      });
    void (async () => {
      if (!(await write(head))) return;
      while (result.sent < bodyBytes) {
        const data = piece.subarray(0, Math.min(piece.length, bodyBytes - result.sent));
        const part = chunked ? `${data.length.toString(16)}\r\n${data.toString()}\r\n` : data;
        if (!(await write(part))) return;
        result.sent += data.length;
        // A turn of the event loop between writes, as a client streaming a body gives.
        await new Promise((next) => setImmediate(next));
      }
      if (chunked) await write('0\r\n\r\n');
    })();
  });
}

function statusOf(exchange: Exchange): number {
  return Number(/^HTTP\/1\.1 (\d{3})/.exec(exchange.received)?.[1] ?? 0);
}

function bodyOf(exchange: Exchange): { error: string; request_id: string } {
  return JSON.parse(exchange.received.slice(exchange.received.indexOf('\r\n\r\n') + 4));
}

test('an oversized body (Content-Length or chunked) gets a whole 413 and no reset while the client still sends it', { timeout: 120_000 }, async (t) => {
  const server = await startServer(t, { dataDir: null });
  const creator = await server.userWithKey('creator', ['read:listings', 'write:listings']);
  for (const size of [100 * 1024, 512 * 1024, 1024 * 1024]) {
    for (const chunked of [false, true]) {
      const framing = chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${size}`;
      const head = `POST /v1/listings HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${creator.key}\r\nContent-Type: application/json\r\n${framing}\r\n\r\n`;
      const exchange = await sendLarge(server, head, size, chunked);
      const what = `${size} bytes, ${chunked ? 'chunked' : 'Content-Length'}`;
      assert.equal(exchange.error, null, `${what}: the client saw ${exchange.error}`);
      assert.equal(exchange.sent, size, `${what}: the whole body was sent`);
      assert.equal(statusOf(exchange), 413, `${what}: ${exchange.received.slice(0, 200)}`);
      assert.match(exchange.received, /\r\nConnection: close\r\n/i);
      assert.match(bodyOf(exchange).error, /64 KiB/);
    }
  }
  // Also for the operator's routes.
  const head = `POST /admin/v1/users HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${ADMIN_TOKEN}\r\nContent-Type: application/json\r\nContent-Length: ${300 * 1024}\r\n\r\n`;
  const exchange = await sendLarge(server, head, 300 * 1024);
  assert.equal(exchange.error, null);
  assert.equal(statusOf(exchange), 413);
});

test('a body far past the bound is not read to its end: 413, then the connection is destroyed', { timeout: 120_000 }, async (t) => {
  const server = await startServer(t, { dataDir: null });
  const creator = await server.userWithKey('creator', ['read:listings', 'write:listings']);
  const size = 64 * 1024 * 1024;
  const head = `POST /v1/listings HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${creator.key}\r\nContent-Type: application/json\r\nContent-Length: ${size}\r\n\r\n`;
  const exchange = await sendLarge(server, head, size);
  t.diagnostic(`the client had sent ${(exchange.sent / 1048576).toFixed(1)} MiB of ${size / 1048576} MiB when the server closed (${exchange.error ?? 'no error'})`);
  assert.ok(exchange.sent < size, 'the server stopped reading');
  assert.ok(exchange.sent < 8 * 1024 * 1024, `the server read about its bound, not ${exchange.sent} bytes`);

  // Chunked, the size is learnt on the way: the server stops once it has read its bound.
  const chunkedHead = `POST /v1/listings HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${creator.key}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`;
  const chunked = await sendLarge(server, chunkedHead, size, true);
  t.diagnostic(`chunked: the client had sent ${(chunked.sent / 1048576).toFixed(1)} MiB when the server closed (${chunked.error ?? 'no error'})`);
  assert.ok(chunked.sent < 8 * 1024 * 1024, `the server read about its bound, not ${chunked.sent} bytes`);
  assert.ok(chunked.received === '' || statusOf(chunked) === 413, chunked.received.slice(0, 100));
});

const skipNginx = skipUnlessServices('nginx');

test('through nginx with max_fails=1, oversized bodies in a loop never make ordinary GETs get 502', { skip: skipNginx, timeout: 180_000 }, async (t) => {
  const servers = [await startServer(t, { dataDir: null }), await startServer(t, { dataDir: null })];
  const nginx = await startNginx(servers.map((server) => new URL(server.url).host), { maxFails: 1 });
  t.after(() => nginx.destroy());
  const statuses = new Map<number, number>();
  const count = (status: number) => statuses.set(status, (statuses.get(status) ?? 0) + 1);
  const oversized = Buffer.alloc(512 * 1024, 'a');
  for (let round = 0; round < 40; round += 1) {
    const posted = await fetch(`${nginx.url}/admin/v1/users`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: oversized,
    });
    await posted.arrayBuffer();
    count(posted.status);
    for (let get = 0; get < 3; get += 1) {
      const answer = await fetch(`${nginx.url}/healthz`);
      await answer.arrayBuffer();
      count(answer.status);
    }
  }
  t.diagnostic(`statuses through nginx: ${[...statuses].map(([status, times]) => `${status}×${times}`).join(', ')}`);
  assert.deepEqual([...statuses.keys()].sort(), [200, 413]);
});
