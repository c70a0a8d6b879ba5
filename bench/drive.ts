// Drives one target for a fixed time with the chosen load generator, in its own process: wrk
// (C, far cheaper per request) when installed, otherwise bench/loadgen.ts. Both read the same
// request file and give the same Measurement, so the rest of the benchmark does not care which.

import { execFile, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import type { LoadResult } from './loadgen.ts';

export type GeneratorName = 'wrk' | 'node';

export interface Measurement {
  requests: number;
  seconds: number;
  rps: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Answers outside 2xx (wrk also counts 3xx as fine). */
  non2xx: number;
  /** Per-status counts; only the node generator knows them. */
  statuses: Record<string, number> | null;
  socketErrors: number;
  /** The generator's own CPU in % of one core (only the node generator reports it). */
  generatorCpuPercent: number | null;
}

export interface DriveOptions {
  generator: GeneratorName;
  baseUrl: string;
  requestsFile: string;
  headers: string[];
  connections: number;
  durationS: number;
  /** taskset CPU list for the generator (null: anywhere). */
  cpus: string | null;
}

const BENCH_DIR = import.meta.dirname;
const REPO_DIR = join(BENCH_DIR, '..');
export const WRK_INSTALL_HINT = 'install wrk for faster, steadier numbers: sudo apt-get install -y wrk (Debian/Ubuntu) or brew install wrk (macOS)';

/** wrk when it is on the PATH (unless told otherwise), else the project's own generator. */
export function chooseGenerator(requested: string | undefined): { name: GeneratorName; version: string } {
  const wrk = spawnSync('wrk', ['-v'], { encoding: 'utf8' });
  const wrkVersion = wrk.error ? null : `${wrk.stdout}${wrk.stderr}`.split('\n')[0]!.trim();
  if (requested === 'wrk' && wrkVersion === null) throw new Error(`--generator wrk, but wrk is not installed; ${WRK_INSTALL_HINT}`);
  if (requested === 'node' || wrkVersion === null) return { name: 'node', version: `bench/loadgen.ts on Node ${process.version}` };
  return { name: 'wrk', version: wrkVersion };
}

export async function drive(options: DriveOptions): Promise<Measurement> {
  return options.generator === 'wrk' ? driveWrk(options) : driveNode(options);
}

function run(file: string, args: string[], timeoutMs: number, cpus: string | null): Promise<string> {
  if (cpus !== null) [file, args] = ['taskset', ['-c', cpus, file, ...args]];
  return new Promise((resolve, reject) => {
    execFile(file, args, { cwd: REPO_DIR, timeout: timeoutMs, maxBuffer: 16 << 20 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${file} failed: ${error.message}\n${stderr}`));
      else resolve(stdout);
    });
  });
}

async function driveWrk(options: DriveOptions): Promise<Measurement> {
  // wrk takes whole seconds only.
  const args = ['-t1', `-c${options.connections}`, `-d${Math.max(1, Math.round(options.durationS))}s`, '--timeout', '10s'];
  for (const header of options.headers) args.push('-H', header);
  args.push('-s', join(BENCH_DIR, 'wrk.lua'), options.baseUrl, '--', options.requestsFile);
  const stdout = await run('wrk', args, (options.durationS + 30) * 1000, options.cpus);
  const line = stdout.split('\n').find((text) => text.startsWith('WRK_JSON '));
  if (line === undefined) throw new Error(`wrk printed no summary:\n${stdout}`);
  const summary = JSON.parse(line.slice('WRK_JSON '.length)) as {
    requests: number;
    duration_us: number;
    errors: { connect: number; read: number; write: number; status: number; timeout: number };
    latency_us: { p50: number; p90: number; p99: number; max: number };
  };
  const seconds = summary.duration_us / 1e6;
  const { errors } = summary;
  return {
    requests: summary.requests,
    seconds,
    rps: Math.round(summary.requests / seconds),
    p50Ms: summary.latency_us.p50 / 1000,
    p90Ms: summary.latency_us.p90 / 1000,
    p99Ms: summary.latency_us.p99 / 1000,
    maxMs: summary.latency_us.max / 1000,
    non2xx: errors.status,
    statuses: null,
    socketErrors: errors.connect + errors.read + errors.write + errors.timeout,
    generatorCpuPercent: null,
  };
}

async function driveNode(options: DriveOptions): Promise<Measurement> {
  const args = ['--import', 'tsx', join(BENCH_DIR, 'loadgen.ts'), '--url', options.baseUrl, '--requests', options.requestsFile];
  for (const header of options.headers) args.push('--header', header);
  args.push('--connections', String(options.connections), '--duration', String(options.durationS), '--warmup', '0');
  const stdout = await run(process.execPath, args, (options.durationS + 30) * 1000, options.cpus);
  const result = JSON.parse(stdout.trim().split('\n').pop()!) as LoadResult;
  return {
    requests: result.requests,
    seconds: result.duration_s,
    rps: result.rps,
    p50Ms: result.latency_ms.p50,
    p90Ms: result.latency_ms.p90,
    p99Ms: result.latency_ms.p99,
    maxMs: result.latency_ms.max,
    non2xx: result.non_2xx,
    statuses: result.statuses,
    socketErrors: result.socket_errors,
    generatorCpuPercent: result.cpu_percent,
  };
}
