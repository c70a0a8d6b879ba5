// Keeps clients that hold sockets without using them from taking the server's connections or
// memory: a connection that sends no complete request head within 10 s is answered 408 and
// destroyed (src/http/client-errors.ts), an idle keep-alive connection after 5 s, a response
// whose bytes the client stops reading is cut off after 10 s without progress (its buffers
// freed), and at most MAX_CONNECTIONS connections are open at once (further ones are closed as
// they arrive). A connection that sends no byte at all meets the same header deadline: Node
// checks it only from 20.4 on (the engines field allows any 20), so the check here closes it
// on every version. "Closed" always means destroyed: a socket is never left half-closed, waiting
// for a client that may never close its side.

import type { Server, ServerOptions } from 'node:http';
import type { Socket } from 'node:net';

import { DEFAULT_SOCKET_TIMEOUTS, type SocketTimeouts } from '../config.ts';

export { DEFAULT_SOCKET_TIMEOUTS, KEEP_ALIVE_MS, HEADERS_TIMEOUT_MS, REQUEST_TIMEOUT_MS, WRITE_STALL_MS, type SocketTimeouts } from '../config.ts';

/** Options for http.createServer: Node checks the header and request deadlines this often (30 s by default). */
export function serverOptionsFor(timeouts: SocketTimeouts = DEFAULT_SOCKET_TIMEOUTS): ServerOptions {
  return { connectionsCheckingInterval: timeouts.checkEveryMs };
}

/** The error Node raises for a head that did not arrive in time; its 'clientError' answer is a 408. */
function headerDeadlineError(): NodeJS.ErrnoException {
  const error: NodeJS.ErrnoException = new Error('no request head arrived before the header deadline');
  error.code = 'ERR_HTTP_REQUEST_TIMEOUT';
  return error;
}

interface Progress {
  /** Bytes the socket still had to send at the last check. */
  pending: number;
  /** performance.now() of the last check that saw it send something (or start waiting). */
  since: number;
}

/**
 * Applies the limits to `server`; returns a function that stops the write-stall checks.
 * @example const stop = limitSockets(server, config.maxConnections); … stop();
 */
export function limitSockets(server: Server, maxConnections: number, timeouts: SocketTimeouts = DEFAULT_SOCKET_TIMEOUTS): () => void {
  server.maxConnections = maxConnections;
  server.keepAliveTimeout = timeouts.keepAliveMs;
  server.headersTimeout = timeouts.headersMs;
  server.requestTimeout = timeouts.requestMs;

  // Node pauses reading a pipelining client while its answers wait, so one connection holds at
  // most about one answer; the stall check frees that too once the client has stopped reading.
  const waiting = new Map<Socket, Progress>();
  const sockets = new Set<Socket>();
  /** performance.now() at which each socket that has not yet sent a byte was accepted. */
  const silentSince = new Map<Socket, number>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    silentSince.set(socket, performance.now());
    socket.once('close', () => {
      sockets.delete(socket);
      waiting.delete(socket);
      silentSince.delete(socket);
    });
  });
  const timer = setInterval(() => {
    const now = performance.now();
    // bytesRead, not a 'data' listener: the HTTP parser reads the socket's handle directly.
    for (const [socket, since] of silentSince) {
      if (socket.bytesRead > 0) silentSince.delete(socket);
      else if (now - since >= timeouts.headersMs) {
        silentSince.delete(socket);
        server.emit('clientError', headerDeadlineError(), socket);
      }
    }
    for (const socket of sockets) {
      const pending = socket.writableLength;
      const progress = waiting.get(socket);
      if (pending === 0) {
        if (progress !== undefined) waiting.delete(socket);
      } else if (progress === undefined || pending < progress.pending) {
        waiting.set(socket, { pending, since: now });
      } else if (now - progress.since >= timeouts.writeStallMs) {
        socket.destroy();
      } else progress.pending = pending;
    }
  }, timeouts.checkEveryMs);
  timer.unref();
  return () => clearInterval(timer);
}
