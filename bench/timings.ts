// `npm run bench:timings`: the time figures that tests used to assert as bounds and now wait on
// as conditions, measured in one run so they can be published together (docs/performance.md):
//   neighbour      the quiet key's p99 beside a key hammering costly searches, with the CPU
//                  budget and without it (bench/timings-neighbour.ts);
//   instances      how soon a key revoked on one instance is refused by the others, and how
//                  long a request waits for its 503 while Redis is stalled (bench/timings-limits.ts);
//   tarpit         how soon another user's webhook ping arrives beside 20 hung receivers
//                  (bench/timings-webhooks.ts);
//   compression    the server's event-loop delay while it compresses large uncached br pages
//                  (bench/timings-compression.ts);
//   sockets        how long after its deadline a silent, an idle keep-alive and a non-reading
//                  connection is ended (bench/timings-sockets.ts);
//   sign-in        how long a failed sign-in takes for an unknown email, a wrong password and
//                  an account without a password (bench/timings-sign-in.ts).
// instances needs PostgreSQL and Redis (test/helpers/services.ts finds them)
// and are skipped without them. Results: bench/results/timings.json and timings.md.

import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, platform, release } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { skipUnlessServices } from '../test/helpers/services.ts';
import { measureNeighbours, type NeighbourFigures } from './timings-neighbour.ts';
import { describe, measureInstances, type Spread } from './timings-limits.ts';
import { measureTarpit } from './timings-webhooks.ts';
import { measureCompression, type CompressionFigures } from './timings-compression.ts';
import { measureSockets, type SocketFigures } from './timings-sockets.ts';
import { measureSignIn, type SignInFigures } from './timings-sign-in.ts';

const PARTS = ['neighbour', 'instances', 'tarpit', 'compression', 'sockets', 'sign-in'] as const;
type Part = (typeof PARTS)[number];
const RESULTS_DIR = join(import.meta.dirname, 'results');

interface Results {
  at: string;
  machine: { cpus: number; model: string; platform: string; load_before: number[]; load_after: number[] | null };
  neighbour: NeighbourFigures[] | null;
  revocation: Spread | null;
  stalled_redis: Spread | null;
  tarpit: Spread | null;
  compression: CompressionFigures | null;
  sockets: SocketFigures | null;
  sign_in: SignInFigures | null;
  skipped: string[];
}

function log(line: string): void {
  process.stdout.write(`${line}\n`);
}

function markdown(results: Results): string {
  const lines = [`Timings of ${results.at} on ${results.machine.cpus} × ${results.machine.model} (${results.machine.platform}); load average ${results.machine.load_before.map((value) => value.toFixed(1)).join(' / ')} before, ${results.machine.load_after?.map((value) => value.toFixed(1)).join(' / ')} after.`, ''];
  if (results.neighbour) {
    lines.push('| CPU budget | quiet key p99 alone | quiet key p99 hammered | quiet key refused | hammering key served / refused |', '| --- | --- | --- | --- | --- |');
    for (const row of results.neighbour) lines.push(`| ${row.budget_ms === 0 ? 'off' : `${row.budget_ms} ms`} | ${row.quiet_alone_p99_ms.toFixed(1)} ms | ${row.quiet_hammered_p99_ms.toFixed(1)} ms | ${row.quiet_refused} of ${row.quiet_requests} | ${row.hammering_served} / ${row.hammering_refused_for_cpu} |`);
    lines.push('');
  }
  if (results.revocation) lines.push(`- A revoked key refused by every other instance: ${describe(results.revocation)} samples.`);
  if (results.stalled_redis) lines.push(`- A request answered 503 while Redis is stalled: ${describe(results.stalled_redis)} requests.`);
  if (results.tarpit) lines.push(`- Another user's webhook ping beside 20 hung receivers: ${describe(results.tarpit)} users.`);
  if (results.compression) lines.push(`- The event-loop delay while compressing ${results.compression.pages} uncached br pages of about 2 MB: p99 ${results.compression.loop_delay_p99_ms.toFixed(1)} ms, max ${results.compression.loop_delay_max_ms.toFixed(1)} ms.`);
  if (results.sockets) {
    lines.push(`- A connection that sends nothing, ended after (deadline 10 s): ${describe(results.sockets.silent)} connections.`);
    lines.push(`- An idle keep-alive connection, ended after its answer (deadline 5 s): ${describe(results.sockets.keep_alive)} connections.`);
    lines.push(`- A 64 MB answer the client stops reading, cut off after (10 s without progress): ${describe(results.sockets.stalled)} connections.`);
  }
  if (results.sign_in) {
    lines.push(`- A failed sign-in, unknown email: ${describe(results.sign_in.unknown_email)} attempts.`);
    lines.push(`- A failed sign-in, wrong password: ${describe(results.sign_in.wrong_password)} attempts.`);
    lines.push(`- A failed sign-in, account without a password: ${describe(results.sign_in.no_password)} attempts.`);
  }
  for (const skipped of results.skipped) lines.push(`- Skipped: ${skipped}.`);
  return `${lines.join('\n')}\n`;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { only: { type: 'string' }, help: { type: 'boolean', short: 'h' } } });
  if (values.help) {
    log(`npm run bench:timings [-- --only ${PARTS.join(',')}]`);
    return;
  }
  const chosen = (values.only?.split(',') ?? [...PARTS]) as Part[];
  for (const part of chosen) if (!PARTS.includes(part)) throw new Error(`unknown part ${part}; one of ${PARTS.join(', ')}`);
  const services = skipUnlessServices('postgresBin', 'redisServer');
  const results: Results = {
    at: new Date().toISOString(),
    machine: { cpus: cpus().length, model: cpus()[0]?.model ?? 'unknown', platform: `${platform()} ${release()}`, load_before: loadavg(), load_after: null },
    neighbour: null,
    revocation: null,
    stalled_redis: null,
    tarpit: null,
    compression: null,
    sockets: null,
    sign_in: null,
    skipped: [],
  };
  if (chosen.includes('neighbour')) results.neighbour = await measureNeighbours(log);
  if (chosen.includes('instances')) {
    if (services) results.skipped.push(`instances (${services})`);
    else ({ revocation: results.revocation, stalled_redis: results.stalled_redis } = await measureInstances(log));
  }
  if (chosen.includes('tarpit')) results.tarpit = await measureTarpit(log);
  if (chosen.includes('compression')) results.compression = await measureCompression(log);
  if (chosen.includes('sockets')) results.sockets = await measureSockets(log);
  if (chosen.includes('sign-in')) results.sign_in = await measureSignIn(log);
  results.machine.load_after = loadavg();
  mkdirSync(RESULTS_DIR, { recursive: true });
  writeFileSync(join(RESULTS_DIR, 'timings.json'), `${JSON.stringify(results, null, 2)}\n`);
  const text = markdown(results);
  writeFileSync(join(RESULTS_DIR, 'timings.md'), text);
  log(`\n${text}Saved bench/results/timings.json and timings.md`);
}

await main();
