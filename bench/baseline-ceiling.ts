// Baseline "ceiling": a bare node:http server answering every request with a constant,
// pre-serialised JSON body. Nothing Node serves over HTTP on this machine can be faster,
// so the API's req/s divided by this one says how much of the machine the API leaves unused.
// With --contract-headers it also sends the five headers the contract asks of every answer to
// a key (X-Request-Id, X-RateLimit-Limit/-Remaining/-Reset, ETag): the most the API could reach.
// Usage: node --import tsx bench/baseline-ceiling.ts --port 3101 --bytes 8000 [--item-bytes 400] [--contract-headers]

import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    host: { type: 'string', default: '127.0.0.1' },
    port: { type: 'string', default: '0' },
    /** Size of the list answer (scenario A's response body). */
    bytes: { type: 'string', default: '8000' },
    /** Size of the single-listing answer, served for paths under /v1/listings/. */
    'item-bytes': { type: 'string', default: '400' },
    'contract-headers': { type: 'boolean', default: false },
  },
});

/** A valid JSON document of exactly `size` bytes (at least 12). */
function paddedJson(size: number): Buffer {
  const frame = '{"data":""}';
  return Buffer.from(`{"data":"${'x'.repeat(Math.max(0, size - frame.length))}"}`);
}

const listBody = paddedJson(Number(values.bytes));
const itemBody = paddedJson(Number(values['item-bytes']));
const listHeaders = { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': listBody.length };
const itemHeaders = { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': itemBody.length };

const withContractHeaders = values['contract-headers'];
let remaining = 1_000_000;

const server = createServer((req, res) => {
  // Bodies of POSTs are drained so keep-alive connections stay usable.
  req.resume();
  const isItem = req.url !== undefined && req.url.startsWith('/v1/listings/');
  const headers = isItem ? itemHeaders : listHeaders;
  if (withContractHeaders) {
    // Values of the same kind and size as the API's, made per request as the API makes them.
    remaining = remaining > 0 ? remaining - 1 : 1_000_000;
    res.writeHead(200, {
      'X-Request-Id': randomUUID(),
      'X-RateLimit-Limit': 1_000_000,
      'X-RateLimit-Remaining': remaining,
      'X-RateLimit-Reset': Math.ceil(Date.now() / 1000) + 60,
      ETag: '"iUuHRsnLs5cvTyk2qTN0sUe7VnE"',
      ...headers,
    });
  } else {
    res.writeHead(200, headers);
  }
  res.end(isItem ? itemBody : listBody);
});
server.keepAliveTimeout = 60_000;

server.listen(Number(values.port), values.host, () => {
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : values.port;
  console.log(`ceiling baseline${withContractHeaders ? ' (with the contract headers)' : ''} listening on http://${values.host}:${port} (list ${listBody.length} B, item ${itemBody.length} B)`);
});

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => server.close(() => process.exit(0)).closeAllConnections());
}
