// Keeps clients that hold sockets without using them from taking the server's connections or
// memory: a connection that sends no complete request head within 10 s is answered 408 and
// destroyed (src/http/client-errors.ts), an idle keep-alive connection after 5 s, a response
// whose bytes the client stops reading is cut off after 10 s without progress (its buffers
// freed), and at most MAX_CONNECTIONS connections are open at once (further ones are closed as
// they arrive). "Closed" always means destroyed: a socket is never left half-closed, waiting
// for a client that may never close its side.

import type { Server, ServerOptions } from 'node:http';
import type { Socket } from 'node:net';

export const KEEP_ALIVE_MS = 5_000;
export const HEADERS_TIMEOUT_MS = 10_000;
export const REQUEST_TIMEOUT_MS = 30_000;
/** A response that made no progress for this long is abandoned: the client stopped reading. */
export const WRITE_STALL_MS = 10_000;
/** How often the header, request and write-stall deadlines are checked. */
const CHECK_EVERY_MS = 1_000;

/** The deadlines above, as one setting (Config.socketTimeouts; tests shorten them). */
export interface SocketTimeouts {
  keepAliveMs: number;
  headersMs: number;
  requestMs: number;
  writeStallMs: number;
  checkEveryMs: number;
}

export const DEFAULT_SOCKET_TIMEOUTS: Readonly<SocketTimeouts> = Object.freeze({
  keepAliveMs: KEEP_ALIVE_MS,
  headersMs: HEADERS_TIMEOUT_MS,
  requestMs: REQUEST_TIMEOUT_MS,
  writeStallMs: WRITE_STALL_MS,
  checkEveryMs: CHECK_EVERY_MS,
});

/** Options for http.createServer: Node checks the header and request deadlines this often (30 s by default). */
export function serverOptionsFor(timeouts: SocketTimeouts = DEFAULT_SOCKET_TIMEOUTS): ServerOptions {
  return { connectionsCheckingInterval: timeouts.checkEveryMs };
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
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => {
      sockets.delete(socket);
      waiting.delete(socket);
    });
  });
  const timer = setInterval(() => {
    const now = performance.now();
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
