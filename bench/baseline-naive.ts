// Baseline "naive": a bare node:http server doing, on every request, the work a twenty-line
// implementation would do (filter the active listings, slice a page, JSON.stringify it; find
// by id with a linear scan), with no auth, limits, cache or log. The API should beat it.
// Usage: node --import tsx bench/baseline-naive.ts --data-dir DIR [--port 3102]

import { createReadStream } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    host: { type: 'string', default: '127.0.0.1' },
    port: { type: 'string', default: '0' },
    'data-dir': { type: 'string' },
  },
});

interface Listing {
  id: string;
  title: string;
  description: string;
  type: string;
  price: number;
  tags: string[];
  status: string;
  created_at: string;
}

interface LogLine {
  op: string;
  c?: string;
  id?: string;
  d?: Listing;
  ops?: LogLine[];
}

/** Replays the log's listing puts and dels; the last line for an id wins. */
async function loadListings(dataDir: string): Promise<Listing[]> {
  const byId = new Map<string, Listing>();
  const apply = (line: LogLine): void => {
    if (line.op === 'batch') line.ops?.forEach(apply);
    else if (line.c !== 'listings' || line.id === undefined) return;
    else if (line.op === 'put' && line.d) byId.set(line.id, line.d);
    else if (line.op === 'del') byId.delete(line.id);
  };
  const lines = createInterface({ input: createReadStream(join(dataDir, 'marketplace.log')), crlfDelay: Infinity });
  let first = true;
  for await (const text of lines) {
    if (first || text === '') {
      first = false;
      continue;
    }
    apply(JSON.parse(text) as LogLine);
  }
  // Sorted once at load, newest first (the API's default order), so requests never sort.
  return [...byId.values()].sort((left, right) =>
    left.created_at === right.created_at ? (left.id < right.id ? 1 : -1) : left.created_at < right.created_at ? 1 : -1,
  );
}

function send(res: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

/** The contract's word-prefix rule done the naive way: every listing's words split on each request (ASCII data). */
function matchesText(listing: Listing, needle: string): boolean {
  const words = [listing.title, listing.description, ...listing.tags].flatMap((field) => field.toLowerCase().split(/[^a-z0-9]+/));
  return needle.split(/[^a-z0-9]+/).every((wanted) => wanted === '' || words.some((word) => word.startsWith(wanted)));
}

if (values['data-dir'] === undefined) {
  console.error('baseline-naive: --data-dir is required');
  process.exit(2);
}
const listings = await loadListings(values['data-dir']);

const server = createServer((req, res) => {
  req.resume();
  const url = new URL(req.url ?? '/', 'http://naive.local');
  if (req.method === 'GET' && url.pathname === '/v1/listings') {
    const page = Number(url.searchParams.get('page') ?? 1);
    const limit = Number(url.searchParams.get('limit') ?? 20);
    const type = url.searchParams.get('type');
    const needle = url.searchParams.get('q')?.toLowerCase();
    const matches = listings.filter(
      (listing) =>
        listing.status === 'active' &&
        (type === null || listing.type === type) &&
        (needle === undefined || matchesText(listing, needle)),
    );
    const data = matches.slice((page - 1) * limit, page * limit);
    send(res, 200, { data, pagination: { page, limit, total: matches.length, total_pages: Math.ceil(matches.length / limit) } });
    return;
  }
  if (req.method === 'GET' && url.pathname.startsWith('/v1/listings/')) {
    const id = url.pathname.slice('/v1/listings/'.length);
    const listing = listings.find((candidate) => candidate.id === id);
    if (listing) send(res, 200, { data: listing });
    else send(res, 404, { error: 'Listing not found' });
    return;
  }
  send(res, 404, { error: 'Not found' });
});
server.keepAliveTimeout = 60_000;

server.listen(Number(values.port), values.host, () => {
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : values.port;
  console.log(`naive baseline listening on http://${values.host}:${port} (${listings.length} listings)`);
});

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => server.close(() => process.exit(0)).closeAllConnections());
}
