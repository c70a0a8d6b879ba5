// Errors Node's HTTP parser raises before any route runs, through a real server on raw
// sockets: bad framing (400), headers too large (431) and a request that never finishes its
// headers (408) are answered as JSON {"error": …} with an X-Request-Id, and the socket closed.
// The server's 10 s header deadline is shortened here so the 408 comes within about a second;
// that the real deadline is about 10 s is measured by test/hostile/sockets.test.ts.

import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';
import { startServer } from '../helpers/server.ts';

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** performance.now() when the server closed the connection. */
  closedAt: number;
}

/** Sends `bytes` on a fresh connection and collects everything until the server closes it. */
function rawExchange(url: string, bytes: string): Promise<RawAnswer> {
  const { port, hostname } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const [head = '', body = ''] = received.split('\r\n\r\n');
      const [statusLine = '', ...headerLines] = head.split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of headerLines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body, closedAt: performance.now() });
    });
    if (bytes !== '') socket.write(bytes);
  });
}

function assertJsonError(answer: RawAnswer, status: number): void {
  assert.equal(answer.status, status, JSON.stringify(answer));
  assert.match(answer.headers['content-type'] ?? '', /^application\/json/);
  assert.match(answer.headers['x-request-id'] ?? '', /^[0-9a-f-]{36}$/);
  assert.equal(answer.headers['x-content-type-options'], 'nosniff');
  assert.equal(answer.headers['connection'], 'close');
  const body = JSON.parse(answer.body) as { error: string; request_id: string };
  assert.equal(typeof body.error, 'string');
  assert.equal(body.request_id, answer.headers['x-request-id']);
  assert.equal(Number(answer.headers['content-length']), Buffer.byteLength(answer.body));
}

test('parser errors are answered as JSON with a request id', { timeout: 60_000 }, async (t) => {
  const server = await startServer(t, { dataDir: null });
  server.app.server.headersTimeout = 100; // Node checks the deadline once a second (src/http/socket-limits.ts)
  const cases: Array<{ name: string; bytes: string; status: number }> = [
    { name: 'a request line that is not HTTP → 400', bytes: 'GARBAGE\r\n\r\n', status: 400 },
    { name: 'Content-Length and Transfer-Encoding both → 400', bytes: 'POST /v1/listings HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n', status: 400 },
    { name: 'a Content-Length that is not a number → 400', bytes: 'POST /v1/listings HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n', status: 400 },
    { name: 'a space inside a header name → 400', bytes: 'GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\n\r\n', status: 400 },
    { name: 'a header with no colon → 400', bytes: 'GET /healthz HTTP/1.1\r\nHost: x\r\nBroken header\r\n\r\n', status: 400 },
    { name: 'headers of 20 KB → 431', bytes: `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, status: 431 },
    { name: 'headers never finished → 408', bytes: 'GET /healthz HTTP/1.1\r\nHost: x\r\n', status: 408 },
  ];
  for (const { name, bytes, status } of cases) {
    await t.test(name, async () => assertJsonError(await rawExchange(server.url, bytes), status));
  }
});
