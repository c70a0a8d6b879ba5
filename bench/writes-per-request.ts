// What one request costs the store's log: for reads (one listing by id, and list pages), for
// writes (creates and updates), and for writes whose owner has a webhook that is delivered.
// Each phase runs on a server process started on the data directory, which is then stopped
// gracefully (so the analytics counts it holds are saved, as every minute while it runs); the
// log's growth over the phase, in bytes and in store operations (one put or del, batches
// counted by their parts), is divided by the requests. `npm run bench -- --writes`.

import { createServer as createHttpServer } from 'node:http';
import { readFileSync, statSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

export interface PhaseCost {
  phase: string;
  requests: number;
  log_bytes: number;
  store_ops: number;
  bytes_per_request: number;
  ops_per_request: number;
  /** The collections the bytes went to, largest first. */
  by_collection: Array<{ collection: string; bytes: number; ops: number }>;
}

export interface WritesPerRequestResults {
  listings: number;
  phases: PhaseCost[];
}

interface Server {
  baseUrl: string;
  stop(): Promise<void>;
}

const IN_FLIGHT = 16;
const LOG_FILE_NAME = 'marketplace.log';

async function call(url: string, method: string, token: string, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(url, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? null : JSON.parse(text) };
}

async function inParallel(count: number, send: (index: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
    while (next < count) await send(next++);
  }));
}

/** The log lines appended since `fromByte`, as bytes and operations per collection. */
function logGrowth(logPath: string, fromByte: number): { bytes: number; ops: number; byCollection: Map<string, { bytes: number; ops: number }> } {
  const log = readFileSync(logPath);
  // A compaction rewrote the file meanwhile: what was appended can no longer be told apart.
  if (log.length < fromByte || log[fromByte - 1] !== 0x0a) throw new Error(`the log was compacted during the phase (kept under the store's compaction threshold by the phase sizes)`);
  const appended = log.subarray(fromByte).toString('utf8');
  const byCollection = new Map<string, { bytes: number; ops: number }>();
  let ops = 0;
  for (const line of appended.split('\n')) {
    if (line === '') continue;
    const envelope = JSON.parse(line) as { op: string; c?: string; ops?: Array<{ c: string }> };
    const parts = envelope.op === 'batch' ? envelope.ops! : [envelope as { c: string }];
    for (const part of parts) {
      ops += 1;
      const entry = byCollection.get(part.c) ?? { bytes: 0, ops: 0 };
      entry.bytes += Buffer.byteLength(JSON.stringify(part)) + 1;
      entry.ops += 1;
      byCollection.set(part.c, entry);
    }
  }
  return { bytes: Buffer.byteLength(appended), ops, byCollection };
}

/** Runs `work` on a fresh server over `dataDir` and returns what it added to the log. */
async function phase(name: string, dataDir: string, start: () => Promise<Server>, work: (server: Server) => Promise<number>): Promise<PhaseCost> {
  const logPath = join(dataDir, LOG_FILE_NAME);
  const server = await start();
  const fromByte = statSync(logPath).size;
  const requests = await work(server);
  await server.stop();
  const growth = logGrowth(logPath, fromByte);
  return {
    phase: name,
    requests,
    log_bytes: growth.bytes,
    store_ops: growth.ops,
    bytes_per_request: Math.round((growth.bytes / requests) * 100) / 100,
    ops_per_request: Math.round((growth.ops / requests) * 1000) / 1000,
    by_collection: [...growth.byCollection].map(([collection, entry]) => ({ collection, ...entry })).sort((left, right) => right.bytes - left.bytes),
  };
}

/**
 * The three phases on `dataDir` (seeded with `sampleIds` among its listings); `start` starts a
 * server process on it with `adminToken` as its operator token.
 */
export async function measureWritesPerRequest(options: { dataDir: string; sampleIds: string[]; adminToken: string; listings: number; reads?: number; writes?: number; start: () => Promise<Server> }): Promise<WritesPerRequestResults> {
  const reads = options.reads ?? 20_000;
  const writes = options.writes ?? 2_000;
  // Each delivered write supersedes several records (delivery, event, outcomes): fewer, so the
  // phase stays under the compaction threshold (10,000 operations) and its growth can be read.
  const hookedWrites = Math.round(writes / 4);
  const { dataDir, sampleIds, adminToken, start } = options;
  let key = '';
  const owned: string[] = [];
  const setUp = await start();
  const user = await call(`${setUp.baseUrl}/admin/v1/users`, 'POST', adminToken, { name: 'Writes per request', role: 'creator' });
  const made = await call(`${setUp.baseUrl}/admin/v1/keys`, 'POST', adminToken, { user_id: user.body.data.id, rate_limit: 1_000_000, permissions: ['read:listings', 'write:listings', 'write:webhooks'] });
  key = made.body.data.key;
  await setUp.stop();

  const phases: PhaseCost[] = [];
  phases.push(
    await phase('reads: 90% one listing by id, 10% a page of 20', dataDir, start, async (server) => {
      await inParallel(reads, async (index) => {
        const path = index % 10 === 9 ? `/v1/listings?limit=20&page=${(index % 50) + 1}` : `/v1/listings/${sampleIds[index % sampleIds.length]}`;
        const answer = await call(`${server.baseUrl}${path}`, 'GET', key);
        if (answer.status !== 200) throw new Error(`GET ${path} answered ${answer.status}`);
      });
      return reads;
    }),
  );
  phases.push(
    await phase('writes: half creates, half updates', dataDir, start, async (server) => {
      await inParallel(writes, async (index) => {
        if (index % 2 === 0 || owned.length === 0) {
          const answer = await call(`${server.baseUrl}/v1/listings`, 'POST', key, { title: `Written ${index}`, type: 'TOOL', price: 1, description: 'x'.repeat(400) });
          if (answer.status !== 201) throw new Error(`POST /v1/listings answered ${answer.status}`);
          owned.push(answer.body.data.id);
        } else {
          const answer = await call(`${server.baseUrl}/v1/listings/${owned[index % owned.length]}`, 'PUT', key, { price: index });
          if (answer.status !== 200) throw new Error(`PUT answered ${answer.status}`);
        }
      });
      return writes;
    }),
  );
  // The same writes with one webhook delivered to a receiver here (answers 200 at once).
  const receiver = createHttpServer((incoming, answer) => {
    incoming.resume();
    incoming.on('end', () => answer.end('ok'));
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const hooked = await start();
  const hook = await call(`${hooked.baseUrl}/v1/webhooks`, 'POST', key, { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`, events: ['listing.created', 'listing.updated'] });
  if (hook.status !== 201) throw new Error(`POST /v1/webhooks answered ${hook.status}`);
  await hooked.stop();
  phases.push(
    await phase('updates, with one webhook delivered', dataDir, start, async (server) => {
      await inParallel(hookedWrites, async (index) => {
        const answer = await call(`${server.baseUrl}/v1/listings/${owned[index % owned.length]}`, 'PUT', key, { price: index + 1 });
        if (answer.status !== 200) throw new Error(`PUT answered ${answer.status}`);
      });
      // Every delivery made before the stop, so its bookkeeping is in the log.
      for (let waited = 0; waited < 1_200; waited += 1) {
        const metrics = await fetch(`${server.baseUrl}/metrics`, { headers: { Authorization: `Bearer ${adminToken}` } }).then((response) => response.text());
        const pending = /^marketplace_webhook_deliveries_pending (\d+)/m.exec(metrics);
        if (pending !== null && pending[1] === '0') break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      return hookedWrites;
    }),
  );
  receiver.close();
  return { listings: options.listings, phases };
}

export function writesPerRequestMarkdown(results: WritesPerRequestResults): string {
  const lines = [
    `# What a request costs the log (${results.listings.toLocaleString('en')} listings)`,
    '',
    '| phase | requests | log bytes / request | store ops / request | largest shares |',
    '|---|---:|---:|---:|---|',
  ];
  for (const phase of results.phases) {
    const shares = phase.by_collection.slice(0, 3).map((entry) => `${entry.collection} ${Math.round((entry.bytes / Math.max(1, phase.log_bytes)) * 100)}% (${Math.round(entry.bytes / Math.max(1, entry.ops))} B/op)`);
    lines.push(`| ${phase.phase} | ${phase.requests.toLocaleString('en')} | ${phase.bytes_per_request} | ${phase.ops_per_request} | ${shares.join(', ')} |`);
  }
  return lines.join('\n');
}
