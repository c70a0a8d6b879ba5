// Baseline "same bytes": a bare node:http server answering with the exact status, headers and
// body the server under test sent for a scenario's request, captured from a real answer at the
// start of the run (bench/capture.ts). Whatever the server does beyond this is its own cost:
// the headers and body sizes are no longer a difference between the two.
// Usage: node bench/baseline-same-bytes.ts --port 3102 --answers answers.json

import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import type { CapturedAnswers } from './capture.ts';

const { values } = parseArgs({
  options: {
    host: { type: 'string', default: '127.0.0.1' },
    port: { type: 'string', default: '0' },
    answers: { type: 'string' },
  },
});
if (values.answers === undefined) throw new Error('--answers FILE is required');

const captured = JSON.parse(readFileSync(values.answers, 'utf8')) as CapturedAnswers;
/** Status, flat header array and body bytes, ready for writeHead and end. */
const prepared = Object.fromEntries(
  Object.entries(captured).map(([name, answer]) => [name, { status: answer.status, headers: answer.headers, body: Buffer.from(answer.body, 'base64') }]),
) as Record<keyof CapturedAnswers, { status: number; headers: string[]; body: Buffer }>;

const server = createServer((req, res) => {
  // Bodies of POSTs are drained so keep-alive connections stay usable.
  req.resume();
  const url = req.url ?? '';
  // The cached page, a lookup by id, or any other page (standing for the uncached ones).
  const answer = url === captured.list.path ? prepared.list : url.startsWith('/v1/listings/') ? prepared.item : prepared.page;
  res.writeHead(answer.status, answer.headers);
  res.end(answer.body);
});
server.keepAliveTimeout = 60_000;

server.listen(Number(values.port), values.host, () => {
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : values.port;
  const sizes = Object.entries(prepared).map(([name, answer]) => `${name} ${answer.body.length} B`).join(', ');
  console.log(`same-bytes baseline listening on http://${values.host}:${port} (${sizes})`);
});

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => server.close(() => process.exit(0)).closeAllConnections());
}
