// The socket deadlines for `npm run bench:timings`: how long after its deadline the server
// really ends a connection (test/hostile/sockets.test.ts asserts that each is ended, and never
// before its deadline; how much later is a busy machine's to stretch, so it is measured here):
//   silent      a connection that sends nothing (deadline 10 s for the headers);
//   keep-alive  an idle keep-alive connection after its answer (5 s);
//   stalled     an answer of 64 MB the client stops reading (10 s without progress).
// Each on 5 connections at once, so the part takes about 10 s of waiting and little CPU.

import { createServer, type ServerResponse } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { limitSockets } from '../src/http/socket-limits.ts';
import { spread, type Spread } from './timings-limits.ts';
import { startBenchServer } from './timings-server.ts';

const CONNECTIONS = 5;

export interface SocketFigures {
  silent: Spread;
  keep_alive: Spread;
  stalled: Spread;
}

/** Opens a connection; resolves once open, with a promise of the moment the server closes it. */
async function connect(port: number): Promise<{ socket: net.Socket; closed: Promise<number> }> {
  const socket = net.connect(port, '127.0.0.1');
  const closed = new Promise<number>((resolve) => socket.on('close', () => resolve(performance.now())));
  socket.on('error', () => {});
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return { socket, closed };
}

async function silentAndKeptAlive(): Promise<{ silent: number[]; keepAlive: number[] }> {
  const { app, base } = await startBenchServer();
  try {
    const port = Number(new URL(base).port);
    const silent = Array.from({ length: CONNECTIONS }, async () => {
      const openedAt = performance.now();
      const { socket, closed } = await connect(port);
      socket.resume();
      return (await closed) - openedAt;
    });
    const keptAlive = Array.from({ length: CONNECTIONS }, async () => {
      const { socket, closed } = await connect(port);
      // From the answer's arrival: the keep-alive deadline runs from the end of the answer.
      const answered = new Promise<number>((resolve) => socket.once('data', () => resolve(performance.now())));
      socket.resume();
      socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
      return (await closed) - (await answered);
    });
    return { silent: await Promise.all(silent), keepAlive: await Promise.all(keptAlive) };
  } finally {
    await app.close(2_000);
  }
}

async function stalledReaders(): Promise<number[]> {
  const answer = Buffer.alloc(64 * 1024 * 1024, 'x');
  const askedAt: number[] = [];
  const cutAfter: Promise<number>[] = [];
  const server = createServer((_request, response: ServerResponse) => {
    const index = askedAt.length;
    askedAt.push(performance.now());
    cutAfter.push(new Promise((resolve) => response.socket!.once('close', () => resolve(performance.now() - askedAt[index]!))));
    response.end(answer);
  });
  const stop = limitSockets(server, CONNECTIONS * 2);
  try {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const sockets = await Promise.all(Array.from({ length: CONNECTIONS }, () => connect(port)));
    for (const { socket } of sockets) {
      socket.pause(); // never reads: the answer waits in the server
      socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    }
    while (cutAfter.length < CONNECTIONS) await new Promise((resolve) => setTimeout(resolve, 10));
    const figures = await Promise.all(cutAfter);
    for (const { socket } of sockets) socket.destroy();
    return figures;
  } finally {
    stop();
    server.closeAllConnections();
    server.close();
  }
}

export async function measureSockets(log: (line: string) => void): Promise<SocketFigures> {
  log(`Socket deadlines: ${CONNECTIONS} silent, ${CONNECTIONS} idle keep-alive and ${CONNECTIONS} non-reading connections…`);
  const [{ silent, keepAlive }, stalled] = await Promise.all([silentAndKeptAlive(), stalledReaders()]);
  return { silent: spread(silent), keep_alive: spread(keepAlive), stalled: spread(stalled) };
}
