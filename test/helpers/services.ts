// Real PostgreSQL, Redis and nginx for the tests of many instances: each started on a temporary
// directory and a free port, and stopped (or stopped and restarted, for outage tests) by the
// test. PostgreSQL refuses to run as root, so as root it runs as an unprivileged system user.
// The binaries come from Debian's packages (.ci/run installs them); a test that needs them is
// skipped only on a machine without them and outside CI — in CI their absence fails loudly.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';

const POSTGRES_USER = 'marketplace';
/** The unprivileged account PostgreSQL runs as when the tests run as root. */
const SYSTEM_USER = 'marketplace-test';

export interface ServiceBinaries {
  postgresBin: string | null;
  redisServer: string | null;
  nginx: string | null;
}

export function findBinaries(): ServiceBinaries {
  return {
    postgresBin: postgresBinDir(),
    redisServer: onPath('redis-server'),
    nginx: onPath('nginx') ?? (existsSync('/usr/sbin/nginx') ? '/usr/sbin/nginx' : null),
  };
}

/**
 * The `skip` option for a test needing these services: false when they are installed; a reason
 * to skip on a developer's machine without them; in CI (CI set) their absence throws.
 */
export function skipUnlessServices(...needed: (keyof ServiceBinaries)[]): false | string {
  const binaries = findBinaries();
  const missing = needed.filter((name) => binaries[name] === null);
  if (missing.length === 0) return false;
  const message = `missing ${missing.join(', ')} (apt-get install postgresql redis-server nginx)`;
  if (process.env.CI) throw new Error(`CI must run the tests of many instances, but ${message}`);
  return message;
}

/** A TCP port free right now on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Resolves once something accepts TCP connections on the port, or throws after `timeoutMs` (a bound on failure only: a daemon starting beside a busy test run can take tens of seconds). */
export async function waitForPort(port: number, timeoutMs = 120_000, exited?: () => string | null): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const problem = exited?.();
    if (problem) throw new Error(problem);
    if (await canConnect(port)) return;
    if (Date.now() > deadline) throw new Error(`nothing listened on port ${port} within ${timeoutMs} ms`);
    await sleep(50);
  }
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A process started by these helpers, with the tail of its output for error messages. */
class Daemon {
  readonly child: ChildProcess;
  private output = '';
  private exitCode: number | null | undefined = undefined;
  private readonly exitedPromise: Promise<void>;

  constructor(name: string, command: string, args: string[], options: { cwd?: string } = {}) {
    this.child = spawn(command, args, { cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    const keep = (chunk: Buffer) => {
      this.output = (this.output + chunk.toString()).slice(-4000);
    };
    this.child.stdout!.on('data', keep);
    this.child.stderr!.on('data', keep);
    this.exitedPromise = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => {
        this.exitCode = code ?? (signal ? -1 : null);
        resolve();
      });
      this.child.once('error', (error) => {
        this.output += `\n${name}: ${error.message}`;
        this.exitCode = -1;
        resolve();
      });
    });
  }

  /** A message when the process has already exited (it failed to start), else null. */
  exitProblem(): string | null {
    return this.exitCode === undefined ? null : `process exited (${this.exitCode}):\n${this.output}`;
  }

  async stop(signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 15_000): Promise<void> {
    if (this.exitCode !== undefined) return;
    this.child.kill(signal);
    const timer = setTimeout(() => this.child.kill('SIGKILL'), timeoutMs);
    await this.exitedPromise;
    clearTimeout(timer);
  }
}

// ---------------------------------------------------------------- PostgreSQL

export interface PostgresService {
  /** postgres://marketplace@127.0.0.1:<port>/postgres */
  readonly url: string;
  readonly port: number;
  /** Makes an empty database and returns its URL (one per test keeps tests apart). */
  createDatabase(name: string): string;
  /** Stops the server (fast shutdown: clients are disconnected), keeping its data. */
  stop(): Promise<void>;
  /** Starts it again on the same port and data. */
  start(): Promise<void>;
  /** Stops it for good and removes its files. */
  destroy(): Promise<void>;
}

export interface PostgresOptions {
  /** Also accept TLS (ssl=on) with this certificate and key; plain connections stay allowed. */
  tls?: { certFile: string; keyFile: string };
}

export async function startPostgres(options: PostgresOptions = {}): Promise<PostgresService> {
  const bin = postgresBinDir();
  if (bin === null) throw new Error('PostgreSQL binaries not found under /usr/lib/postgresql/*/bin');
  const root = mkdtempSync(join(tmpdir(), 'marketplace-pg-'));
  const dataDir = join(root, 'data');
  const asUser = unprivilegedRunner(root);
  const init = spawnSync(...asUser(join(bin, 'initdb'), ['-D', dataDir, '-U', POSTGRES_USER, '--auth=trust', '-E', 'UTF8', '--no-sync', '--no-instructions']), {
    encoding: 'utf8',
  });
  if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr || init.stdout}`);
  const tlsSettings: string[] = [];
  if (options.tls) {
    // PostgreSQL wants its key owned by the account it runs as, readable by it alone.
    const { uid, gid } = statSync(root);
    for (const [from, name] of [[options.tls.certFile, 'server.crt'], [options.tls.keyFile, 'server.key']] as const) {
      copyFileSync(from, join(root, name));
      chownSync(join(root, name), uid, gid);
      chmodSync(join(root, name), 0o600);
    }
    tlsSettings.push('-c', 'ssl=on', '-c', `ssl_cert_file=${join(root, 'server.crt')}`, '-c', `ssl_key_file=${join(root, 'server.key')}`);
  }
  const port = await freePort();
  let daemon: Daemon | null = null;

  const start = async () => {
    daemon = new Daemon(
      'postgres',
      ...asUser(join(bin, 'postgres'), [
        '-D', dataDir, '-p', String(port), '-k', root, '-c', 'listen_addresses=127.0.0.1',
        '-c', 'max_connections=200', '-c', 'shared_buffers=32MB', '-c', 'log_min_messages=warning', ...tlsSettings,
      ]),
    );
    await waitForPort(port, 120_000, () => daemon!.exitProblem());
    // Accepting TCP is not yet accepting queries: wait until a query runs.
    const deadline = Date.now() + 120_000;
    while (psql(bin, port, 'postgres', 'SELECT 1').status !== 0) {
      if (Date.now() > deadline) throw new Error(`PostgreSQL did not accept queries: ${daemon.exitProblem() ?? ''}`);
      await sleep(100);
    }
  };
  await start();

  return {
    url: `postgres://${POSTGRES_USER}@127.0.0.1:${port}/postgres`,
    port,
    createDatabase(name) {
      const result = psql(bin, port, 'postgres', `CREATE DATABASE "${name}"`);
      if (result.status !== 0) throw new Error(`could not create database ${name}: ${result.stderr}`);
      return `postgres://${POSTGRES_USER}@127.0.0.1:${port}/${name}`;
    },
    async stop() {
      await daemon?.stop('SIGINT');
    },
    start,
    async destroy() {
      await daemon?.stop('SIGINT');
      rmSync(root, { recursive: true, force: true });
    },
  };
}

function psql(bin: string, port: number, database: string, sql: string) {
  const client = existsSync(join(bin, 'psql')) ? join(bin, 'psql') : 'psql';
  return spawnSync(client, ['-h', '127.0.0.1', '-p', String(port), '-U', POSTGRES_USER, '-d', database, '-v', 'ON_ERROR_STOP=1', '-qAtc', sql], {
    encoding: 'utf8',
  });
}

function postgresBinDir(): string | null {
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return onPath('postgres') === null ? null : dirnameOf(onPath('postgres')!);
  const versions = readdirSync(base).filter((name) => existsSync(join(base, name, 'bin', 'postgres')));
  versions.sort((a, b) => Number(b) - Number(a));
  return versions.length > 0 ? join(base, versions[0]!, 'bin') : null;
}

/**
 * How to run a command as an unprivileged user: as root, `setpriv` to a system account made on
 * first use (and `root`'s files handed to it); otherwise the command as it is.
 */
function unprivilegedRunner(ownedDir: string): (command: string, args: string[]) => [string, string[]] {
  if (process.getuid?.() !== 0) return (command, args) => [command, args];
  if (spawnSync('id', ['-u', SYSTEM_USER]).status !== 0) {
    const made = spawnSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', SYSTEM_USER], { encoding: 'utf8' });
    // Another test process may have made it at the same moment.
    if (made.status !== 0 && spawnSync('id', ['-u', SYSTEM_USER]).status !== 0) throw new Error(`useradd ${SYSTEM_USER} failed: ${made.stderr}`);
  }
  const uid = Number(spawnSync('id', ['-u', SYSTEM_USER], { encoding: 'utf8' }).stdout.trim());
  const gid = Number(spawnSync('id', ['-g', SYSTEM_USER], { encoding: 'utf8' }).stdout.trim());
  chownSync(ownedDir, uid, gid);
  chmodSync(ownedDir, 0o700);
  // setpriv execs the command itself (runuser would stay in between and not pass signals on).
  return (command, args) => ['setpriv', [`--reuid=${uid}`, `--regid=${gid}`, '--clear-groups', command, ...args]];
}

/** The services every test of one file shares. */
export interface SharedServices {
  postgres: PostgresService;
  redis: RedisService;
}

/**
 * PostgreSQL and Redis for the tests of the calling file: started before the first test and
 * removed after the last (not started when `skip`). Fields are set once `before` has run.
 * @example const services = postgresAndRedisForFile(skip); ... services.postgres.createDatabase('x')
 */
export function postgresAndRedisForFile(skip: false | string): SharedServices {
  const services = {} as SharedServices;
  before(async () => {
    if (skip) return;
    services.postgres = await startPostgres();
    services.redis = await startRedis();
  });
  after(async () => {
    await services.postgres?.destroy();
    await services.redis?.destroy();
  });
  return services;
}

// ---------------------------------------------------------------- Redis

export interface RedisService {
  /** redis://127.0.0.1:<port>, or rediss:// with `tls` */
  readonly url: string;
  readonly port: number;
  /** Stops answering (SIGSTOP) with its connections left open, as a stalled server does; `resume` goes on. */
  pause(): void;
  resume(): void;
  stop(): Promise<void>;
  start(): Promise<void>;
  destroy(): Promise<void>;
}

export interface RedisOptions {
  /** Listen with TLS only (and the URL is rediss://): the server's certificate and key, and its authority. */
  tls?: { certFile: string; keyFile: string; caFile: string };
  /** ACL users, each as Redis's `user` directive takes it: ['alice', 'on', '>secret', '~*', '+@all']. */
  users?: string[][];
}

/** A Redis with no persistence (nothing to clean but its directory). */
export async function startRedis(options: RedisOptions = {}): Promise<RedisService> {
  const server = findBinaries().redisServer;
  if (server === null) throw new Error('redis-server not found');
  const root = mkdtempSync(join(tmpdir(), 'marketplace-redis-'));
  const port = await freePort();
  let daemon: Daemon | null = null;
  const start = async () => {
    const { tls } = options;
    const listen = tls
      ? ['--port', '0', '--tls-port', String(port), '--tls-cert-file', tls.certFile, '--tls-key-file', tls.keyFile, '--tls-ca-cert-file', tls.caFile, '--tls-auth-clients', 'no']
      : ['--port', String(port)];
    const users = (options.users ?? []).flatMap((user) => ['--user', ...user]);
    daemon = new Daemon('redis', server, [...listen, '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', root, '--loglevel', 'warning', ...users], {
      cwd: root,
    });
    await waitForPort(port, 120_000, () => daemon!.exitProblem());
  };
  await start();
  return {
    url: `${options.tls ? 'rediss' : 'redis'}://127.0.0.1:${port}`,
    port,
    pause() {
      daemon?.child.kill('SIGSTOP');
    },
    resume() {
      daemon?.child.kill('SIGCONT');
    },
    async stop() {
      daemon?.child.kill('SIGCONT');
      await daemon?.stop('SIGTERM');
    },
    start,
    async destroy() {
      daemon?.child.kill('SIGCONT');
      await daemon?.stop('SIGTERM');
      rmSync(root, { recursive: true, force: true });
    },
  };
}

// ---------------------------------------------------------------- nginx

export interface NginxService {
  /** http://127.0.0.1:<port> */
  readonly url: string;
  readonly port: number;
  destroy(): Promise<void>;
}

/**
 * nginx in front of `upstreams` (host:port each), round-robin, keep-alive to the instances.
 * `maxFails` (0, never marked down, by default) is nginx's max_fails per instance: with 1, one
 * failed exchange takes the instance out for fail_timeout (10 s).
 */
export async function startNginx(upstreams: string[], options: { maxFails?: number } = {}): Promise<NginxService> {
  const nginx = findBinaries().nginx;
  if (nginx === null) throw new Error('nginx not found');
  const prefix = mkdtempSync(join(tmpdir(), 'marketplace-nginx-'));
  mkdirSync(join(prefix, 'logs'));
  chmodSync(prefix, 0o755);
  const port = await freePort();
  const config = `
worker_processes 1;
daemon off;
pid ${join(prefix, 'nginx.pid')};
error_log ${join(prefix, 'logs', 'error.log')} warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${join(prefix, 'client_body')};
  proxy_temp_path ${join(prefix, 'proxy')};
  fastcgi_temp_path ${join(prefix, 'fastcgi')};
  uwsgi_temp_path ${join(prefix, 'uwsgi')};
  scgi_temp_path ${join(prefix, 'scgi')};
  upstream marketplace {
${upstreams.map((address) => `    server ${address} max_fails=${options.maxFails ?? 0};`).join('\n')}
    keepalive 64;
  }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://marketplace;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $host;
      proxy_set_header X-Forwarded-For $remote_addr;
    }
  }
}
`;
  const configFile = join(prefix, 'nginx.conf');
  writeFileSync(configFile, config);
  const daemon = new Daemon('nginx', nginx, ['-p', prefix, '-c', configFile, '-e', join(prefix, 'logs', 'error.log')]);
  await waitForPort(port, 120_000, () => daemon.exitProblem());
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    async destroy() {
      await daemon.stop('SIGQUIT');
      rmSync(prefix, { recursive: true, force: true });
    },
  };
}

// ---------------------------------------------------------------- helpers

function onPath(name: string): string | null {
  for (const dir of (process.env.PATH ?? '').split(':').concat(['/usr/sbin', '/usr/bin'])) {
    if (dir && existsSync(join(dir, name))) return join(dir, name);
  }
  return null;
}

function dirnameOf(file: string): string {
  return file.slice(0, file.lastIndexOf('/'));
}
