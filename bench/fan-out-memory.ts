// What one listing PUT costs in memory when its owner has 20 webhooks to a dead host: a server
// in this process on a fresh data dir, 20 webhooks, `--puts` PUTs (each delivery's first attempt
// is refused at once, then it waits an hour); the server is closed and started again on the
// same data dir, and the heap grown by the load is divided by the PUTs.
// Usage: node --expose-gc --import tsx bench/fan-out-memory.ts [--puts 500] [--description-bytes 600]

import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createApp, type App } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';

const { values } = parseArgs({ options: { puts: { type: 'string', default: '500' }, 'description-bytes': { type: 'string', default: '600' } } });
const puts = Number(values.puts);
const description = 'd'.repeat(Number(values['description-bytes']));
const ADMIN = 'bench-operator-token-0123456789';
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with node --expose-gc');

function call(base: string, method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<{ status: number; json: any }> {
  return new Promise((resolve, reject) => {
    const outgoing = request(new URL(path, base), { method, headers: { ...headers, 'content-type': 'application/json' } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode!, json: JSON.parse(Buffer.concat(chunks).toString() || 'null') }));
    });
    outgoing.on('error', reject);
    outgoing.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

async function start(dataDir: string): Promise<{ app: App; base: string }> {
  const env = { PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, MARKETPLACE_DEMO: '0', MARKETPLACE_ADMIN_TOKEN: ADMIN, ACCESS_LOG: '0', WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_DELAYS_MS: '3600000' };
  const app = await createApp({ config: loadConfig(env), writeOut: () => {}, writeErr: (text) => process.stderr.write(text) });
  return { app, base: await app.listen() };
}

async function heapUsed(): Promise<number> {
  for (let round = 0; round < 3; round += 1) {
    gc!();
    await new Promise((resolve) => setImmediate(resolve));
  }
  return process.memoryUsage().heapUsed;
}

const probe = createServer();
await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
const deadPort = (probe.address() as AddressInfo).port;
await new Promise<void>((resolve) => probe.close(() => resolve()));

const dataDir = mkdtempSync(join(tmpdir(), 'fan-out-memory-'));
try {
  const first = await start(dataDir);
  const admin = { authorization: `Bearer ${ADMIN}` };
  const user = (await call(first.base, 'POST', '/admin/v1/users', admin, { name: 'Bench', role: 'creator' })).json.data;
  const key = (await call(first.base, 'POST', '/admin/v1/keys', admin, { user_id: user.id, rate_limit: 1_000_000, permissions: ['write:webhooks', 'read:listings', 'write:listings'] })).json.data.key;
  const auth = { authorization: `Bearer ${key}` };
  for (let index = 0; index < 20; index += 1) await call(first.base, 'POST', '/v1/webhooks', auth, { url: `http://127.0.0.1:${deadPort}/hook/${index}`, events: ['listing.updated'] });
  const listingId = (await call(first.base, 'POST', '/v1/listings', auth, { title: 'Fanned out', type: 'TOOL', price: 1, description })).json.data.id;
  await first.app.close(2_000);

  // The same store without the PUTs' deliveries, then with them: the difference is theirs.
  const baseline = await start(dataDir);
  const heapWithout = await heapUsed();
  for (let index = 0; index < puts; index += 1) {
    const answer = await call(baseline.base, 'PUT', `/v1/listings/${listingId}`, auth, { title: `Edition ${index}` });
    if (answer.status !== 200) throw new Error(`PUT answered ${answer.status}`);
  }
  await baseline.app.close(2_000);
  await heapUsed();
  const again = await start(dataDir);
  const heapWith = await heapUsed();
  const deliveries = again.app.store.size('deliveries');
  console.log(`${puts} PUTs (description ${description.length} bytes), 20 webhooks: ${deliveries} deliveries waiting after the restart`);
  console.log(`heap after a restart: ${((heapWith - heapWithout) / puts / 1024).toFixed(1)} KiB per PUT`);
  await again.app.close(2_000);
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
