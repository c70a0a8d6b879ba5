// How much one client asking for big uncached br pages slows everyone else: a server in this
// process with 100 listings of 5,000 random astral characters (2 MB pages), one client asking
// for a fresh page (a new `limit`) in a loop with `Accept-Encoding: br`, another asking for one
// listing in a loop. Prints the server's event-loop delay, its busy time per heavy page and the
// other client's latencies. `--encoding identity` runs the same loop without compression.
// Usage: node --import tsx bench/compression-stall.ts [--seconds 10] [--encoding br|gzip|identity]

import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { monitorEventLoopDelay, performance as perf } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { createApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '10' }, encoding: { type: 'string', default: 'br' } } });
const seconds = Number(values.seconds);
/** `identity` runs the same loop uncompressed: on a shared machine, the delay that is not compression's. */
const encoding = values.encoding!;
const ADMIN = 'bench-operator-token-0123456789';

function call(base: string, method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const outgoing = request(new URL(path, base), { method, headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode!, body: Buffer.concat(chunks) }));
    });
    outgoing.on('error', reject);
    outgoing.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

function randomAstralText(length: number): string {
  const codes = new Uint32Array(length);
  crypto.getRandomValues(codes);
  return String.fromCodePoint(...Array.from(codes, (code) => 0x20000 + (code % 0xa6e0)));
}

/** CPU ms of this process's main thread alone (Linux), which other processes' load does not inflate; null elsewhere. */
function mainThreadCpuMs(): number | null {
  try {
    const fields = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return null;
  }
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

const app = await createApp({
  config: loadConfig({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: ':memory:', MARKETPLACE_DEMO: '0', MARKETPLACE_ADMIN_TOKEN: ADMIN, ACCESS_LOG: '0' }),
  writeOut: () => {},
  writeErr: (text) => process.stderr.write(text),
});
const base = await app.listen();
const admin = { authorization: `Bearer ${ADMIN}` };
const user = JSON.parse((await call(base, 'POST', '/admin/v1/users', admin, { name: 'Bench', role: 'creator' })).body.toString()).data;
const key = JSON.parse((await call(base, 'POST', '/admin/v1/keys', admin, { user_id: user.id, rate_limit: 100_000, permissions: ['read:listings', 'write:listings'] })).body.toString()).data.key;
const auth = { authorization: `Bearer ${key}` };
let listingId = '';
for (let index = 0; index < 100; index += 1) {
  const created = await call(base, 'POST', '/v1/listings', auth, { title: `Listing ${index}`, type: 'SKILL', price: index, description: randomAstralText(5_000) });
  listingId = JSON.parse(created.body.toString()).data.id;
}

const delay = monitorEventLoopDelay({ resolution: 5 });
const deadline = performance.now() + seconds * 1000;
let pages = 0;
const heavy = (async () => {
  // Limits 100 down to 1, then sorted by price: every page new, so none comes from the cache.
  const paths = [...Array.from({ length: 100 }, (_, i) => `/v1/listings?limit=${100 - i}`), ...Array.from({ length: 100 }, (_, i) => `/v1/listings?limit=${100 - i}&sort=price`)];
  while (performance.now() < deadline) {
    await call(base, 'GET', paths[pages % paths.length]!, { ...auth, 'accept-encoding': encoding });
    pages += 1;
  }
})();
const latencies: number[] = [];
const light = (async () => {
  while (performance.now() < deadline) {
    const started = performance.now();
    await call(base, 'GET', `/v1/listings/${listingId}`, auth);
    latencies.push(performance.now() - started);
  }
})();
delay.enable();
const utilisationBefore = perf.eventLoopUtilization();
const cpuBefore = mainThreadCpuMs();
await Promise.all([heavy, light]);
const utilisation = perf.eventLoopUtilization(utilisationBefore);
const cpuAfter = mainThreadCpuMs();
delay.disable();
latencies.sort((a, b) => a - b);
console.log(`${pages} uncached ${encoding} pages of ~2 MB in ${seconds} s`);
// The event loop's busy time, which a machine busy with other work inflates less than the delay.
console.log(`event loop busy ${(utilisation.utilization * 100).toFixed(0)}% of the time: ${(utilisation.active / Math.max(1, pages)).toFixed(1)} ms per heavy page (the light requests' share included)`);
if (cpuBefore !== null && cpuAfter !== null) console.log(`main thread CPU ${((cpuAfter - cpuBefore) / Math.max(1, pages)).toFixed(1)} ms per heavy page (the light requests' share included)`);
console.log(`event-loop delay: p50 ${(delay.percentile(50) / 1e6).toFixed(1)} ms, p99 ${(delay.percentile(99) / 1e6).toFixed(1)} ms, max ${(delay.max / 1e6).toFixed(1)} ms`);
console.log(`other client GET /v1/listings/:id: ${latencies.length} requests, p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms, max ${latencies.at(-1)?.toFixed(1)} ms`);
await app.close(2_000);
