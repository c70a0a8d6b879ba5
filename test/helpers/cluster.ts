// Instances of the real server (src/main.ts, each its own process) sharing one PostgreSQL and one
// Redis, as a deployment runs them behind a load balancer; for the tests and the benchmark of
// many instances. Each instance listens on a free port and can be stopped or SIGKILLed alone.

import { spawn, type ChildProcess } from 'node:child_process';
import { after, before } from 'node:test';
import { fileURLToPath } from 'node:url';
import { eventually } from './eventually.ts';
import { TEST_CATCH_UP_WAIT_MS } from './catch-up-wait.ts';
import { skipUnlessServices, startPostgres, startRedis, type PostgresService, type RedisService } from './services.ts';

export const CLUSTER_ADMIN_TOKEN = 'cluster-operator-token-0123456789';
const MAIN = fileURLToPath(new URL('../../src/main.ts', import.meta.url));

export interface Instance {
  readonly url: string;
  /** host:port, for an upstream list. */
  readonly address: string;
  readonly process: ChildProcess;
  /** What the process printed on stderr (warnings, errors), for failure messages. */
  errors(): string;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** Starts one instance on DATABASE_URL and REDIS_URL; resolves once it listens. */
export function startInstance(databaseUrl: string, redisUrl: string, env: Record<string, string> = {}): Promise<Instance> {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN], {
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: ':memory:',
      DATABASE_URL: databaseUrl,
      REDIS_URL: redisUrl,
      MARKETPLACE_ADMIN_TOKEN: CLUSTER_ADMIN_TOKEN,
      MARKETPLACE_DEMO: '0',
      ACCESS_LOG: '0',
      CATCH_UP_WAIT_MS: String(TEST_CATCH_UP_WAIT_MS),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-8000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    let stdout = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`instance did not start within 60 s:\n${stdout}\n${stderr}`));
    }, 60_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`instance exited (${code}) before listening:\n${stdout}\n${stderr}`));
    });
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const listening = /listening on (http:\/\/\S+)/.exec(stdout);
      if (!listening) return;
      clearTimeout(timer);
      child.stdout!.removeAllListeners('data');
      child.stdout!.resume();
      const url = listening[1]!;
      resolve({
        url,
        address: url.replace('http://', ''),
        process: child,
        errors: () => stderr,
        async stop(signal: NodeJS.Signals = 'SIGTERM') {
          if (child.exitCode === null && child.signalCode === null) child.kill(signal);
          await exited;
        },
      });
    });
  });
}

/** `count` instances on one database: the first creates the tables, the others start together. */
export async function startInstances(databaseUrl: string, redisUrl: string, env: Record<string, string> = {}, count = 3): Promise<Instance[]> {
  const first = await startInstance(databaseUrl, redisUrl, env);
  const others = await Promise.all(Array.from({ length: count - 1 }, () => startInstance(databaseUrl, redisUrl, env)));
  return [first, ...others];
}

/**
 * For a whole test file: `count` instances on a fresh PostgreSQL database and a Redis, started
 * before its first test and stopped (with the services) after its last. `instances` is filled
 * when the tests run; `skip` says why not when PostgreSQL or Redis is missing.
 * @example
 *   const cluster = clusterForFile('two_factor');
 *   test('…', { skip: cluster.skip }, async () => { cluster.instances[0]!.url … });
 */
export function clusterForFile(databaseName: string, count = 3): { skip: false | string; instances: Instance[] } {
  const cluster = { skip: skipUnlessServices('postgresBin', 'redisServer'), instances: [] as Instance[] };
  let postgres: PostgresService | undefined;
  let redis: RedisService | undefined;
  before(async () => {
    if (cluster.skip) return;
    postgres = await startPostgres();
    redis = await startRedis();
    cluster.instances.push(...(await startInstances(postgres.createDatabase(databaseName), redis.url, {}, count)));
  });
  after(async () => {
    await Promise.all(cluster.instances.map((instance) => instance.stop()));
    await redis?.destroy();
    await postgres?.destroy();
  });
  return cluster;
}

export interface Answer {
  status: number;
  headers: Headers;
  // Test code reads fields of many shapes from answers.
  body: any;
}

/** One JSON request; `key` an API key, or 'admin' for the operator token. */
export async function call(base: string, method: string, path: string, key: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const token = key === 'admin' ? CLUSTER_ADMIN_TOKEN : key;
  const response = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text === '' ? null : JSON.parse(text) };
}

/**
 * A user of `role` and a key with `permissions`, made through the operator API of the first
 * instance; resolves once every instance knows the key (asked through the operator API, so no
 * request counts against its limit).
 */
export async function userWithKey(instances: readonly Instance[], role: 'creator' | 'member', permissions: string[], rateLimit = 100_000): Promise<{ userId: string; key: string; keyId: string }> {
  const base = instances[0]!.url;
  const user = await call(base, 'POST', '/admin/v1/users', 'admin', { name: `${role} user`, role });
  if (user.status !== 201) throw new Error(`user: ${user.status} ${JSON.stringify(user.body)}`);
  const key = await call(base, 'POST', '/admin/v1/keys', 'admin', { user_id: user.body.data.id, permissions, rate_limit: rateLimit });
  if (key.status !== 201) throw new Error(`key: ${key.status} ${JSON.stringify(key.body)}`);
  for (const instance of instances) {
    const known = async () => (await call(instance.url, 'GET', `/admin/v1/keys?user_id=${user.body.data.id}`, 'admin')).body.data.length === 1;
    await eventually(known, 30_000, `key known to ${instance.url}`);
  }
  return { userId: user.body.data.id, key: key.body.data.key, keyId: key.body.data.id };
}

/** The value below which `fraction` of the samples lie (nearest rank). */
export function percentile(samples: readonly number[], fraction: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)]!;
}
