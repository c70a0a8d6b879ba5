// Answers the errors Node's HTTP parser raises before any request exists (bad framing, headers
// too large, a request that never finished arriving) as JSON with a request id, like every
// other error, instead of Node's bare status line; then destroys the connection.

import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';

/** The status and message for a parser error code. */
function describe(code: string | undefined): { status: number; message: string } {
  if (code === 'HPE_HEADER_OVERFLOW') return { status: 431, message: 'The request headers are too large.' };
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return { status: 408, message: 'The request did not arrive in time.' };
  return { status: 400, message: 'The request is not valid HTTP/1.1 (bad request line, header or body framing).' };
}

/**
 * The server's 'clientError' listener; returns the status it answered, or null when nobody was
 * left to answer (so metrics can count it).
 * @example server.on('clientError', (error, socket) => answerClientError(error, socket))
 */
export function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): number | null {
  // A reset connection has nobody to answer; an answer already under way cannot be replaced.
  const response = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (error.code === 'ECONNRESET' || !socket.writable || response?.headersSent === true) {
    socket.destroy();
    return null;
  }
  const { status, message } = describe(error.code);
  const requestId = randomUUID();
  const body = JSON.stringify({ error: message, request_id: requestId });
  // Destroyed once the answer is handed to the kernel, not merely half-closed: a client that
  // never reads or closes would otherwise hold its connection slot for ever. Were the answer
  // itself never taken (a client that reads nothing at all), the write-stall check of
  // socket-limits.ts destroys the socket.
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      `X-Request-Id: ${requestId}\r\n` +
      'X-Content-Type-Options: nosniff\r\n' +
      'Connection: close\r\n\r\n' +
      body,
    () => socket.destroy(),
  );
  return status;
}
