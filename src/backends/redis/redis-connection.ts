// One connection to Redis for the limiter, through the official client (`redis`, node-redis),
// an optional peer dependency imported only when REDIS_URL is set. What it adds to the client:
//
// - A bounded wait. Every call answers within `timeoutMs` (default 500 ms), whether Redis is
//   down, still connecting, or up but not answering (paused, overloaded): the limiter then
//   fails closed at once instead of holding every request. node-redis stops timing a command
//   once it is written, so the bound is kept here.
// - Reconnection. A lost connection is retried by the client itself (100 ms, growing to 2 s);
//   meanwhile calls are refused at once, never queued. A refused login (wrong password, unknown
//   ACL user) is not retried in a loop: that client is closed — its socket with it, so Redis is
//   left with no connection — and a fresh one is tried at most once per RETRY_LOGIN_MS.
// - Bounded memory, and no waiting for ever on a silent connection. At most MAX_IN_FLIGHT calls
//   wait for answers at once (past that, refused at once); and when calls time out and nothing
//   has been answered for STALL_RESET_MS, the connection is dropped and a fresh one is made, so a
//   connection left half-open by a failover does not hold the limits closed until TCP notices.
// - TLS: a rediss:// URL connects with TLS, checking the server's certificate against the
//   system's authorities, or the PEM file named by REDIS_TLS_CA when the server's is private.
//   User and password (an ACL user) come from the URL.

import { readFileSync } from 'node:fs';
import type { RedisClientType } from 'redis';

export interface RedisConnectionOptions {
  /** redis[s]://[user:password@]host[:port][/db] */
  url: string;
  /** A PEM file of the authorities that signed the server's certificate (rediss:// only). */
  tlsCaFile?: string | null;
  /** Longest a call waits for an answer, connecting included. */
  timeoutMs?: number;
  warn?: (message: string) => void;
}

/** Redis could not be reached, refused the login, or did not answer in time. */
export class RedisUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RedisUnavailableError';
  }
}

const DEFAULT_TIMEOUT_MS = 500;
const RETRY_LOGIN_MS = 1_000;
const MAX_RECONNECT_DELAY_MS = 2_000;
const MAX_IN_FLIGHT = 1_000;
const STALL_RESET_MS = 5_000;

type RedisModule = typeof import('redis');
type Client = RedisClientType;

export class RedisConnection {
  private readonly redis: RedisModule;
  private readonly options: RedisConnectionOptions;
  private readonly timeoutMs: number;
  private readonly tlsCa: Buffer | null;
  private client: Client | null = null;
  /** Resolves when the current client first connects (shared by every call waiting for it). */
  private firstReady: Promise<Client> = Promise.resolve(null as unknown as Client);
  /** Redis's clock minus performance.now(), in ms, measured at each connection; null until known. */
  private clockOffsetMs: number | null = null;
  private lastOpenedAt = -Infinity;
  private lastProblem = 'not connected yet';
  private closed = false;
  /** Calls sent and not yet answered (including those whose callers have given up). */
  private inFlight = 0;
  /** When Redis last answered anything, or the current connection was made. */
  private lastAnswerAt = performance.now();
  /** Told of each new connection to Redis (a restarted Redis may hold an older state). */
  private readonly connectedListeners = new Set<() => void>();

  private constructor(redis: RedisModule, options: RedisConnectionOptions) {
    this.redis = redis;
    this.options = options;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.tlsCa = options.tlsCaFile ? readFileSync(options.tlsCaFile) : null;
  }

  /**
   * Loads the driver and starts connecting; waits for the first connection up to `timeoutMs`
   * (a Redis that is away at start is reached later: limits answer 503 until then).
   */
  static async open(options: RedisConnectionOptions): Promise<RedisConnection> {
    const connection = new RedisConnection(await importDriver(), options);
    await connection.ready().catch(() => {});
    return connection;
  }

  /** Where it connects, for the banner and stats: "host:port", "(TLS)" when rediss://. */
  describe(): string {
    const url = new URL(this.options.url);
    return `${url.host}${url.protocol === 'rediss:' ? ' (TLS)' : ''}`;
  }

  /**
   * The latest moment, in microseconds on Redis's clock, at which a call made now may still
   * take effect: a fifth of the bound before the caller gives up, so that an error in the
   * measured clock offset (at most half a round trip) never lets a call count after its caller
   * was answered 503. Null while Redis's clock is unknown.
   */
  deadlineOnRedisClock(): number | null {
    if (this.clockOffsetMs === null) return null;
    return (performance.now() + this.timeoutMs * 0.8 + this.clockOffsetMs) * 1000;
  }

  /** Runs EVALSHA, or EVAL when Redis does not know the script (first use, or after a restart). */
  async evalScript(script: string, sha: string, keys: string[], args: string[]): Promise<unknown> {
    const client = await this.ready();
    const options = { keys, arguments: args };
    return this.call(() =>
      client.evalSha(sha, options).catch((error: unknown) => {
        if (error instanceof Error && error.message.startsWith('NOSCRIPT')) return client.eval(script, options);
        throw error;
      }),
    );
  }

  /** Runs one command (for tests and checks), within the bound. */
  async command(args: string[]): Promise<unknown> {
    const client = await this.ready();
    return this.call(() => client.sendCommand(args));
  }

  /** Sends a call (unless too many wait already) and waits for it within the bound. */
  private async call<T>(send: () => Promise<T>): Promise<T> {
    if (this.inFlight >= MAX_IN_FLIGHT) {
      this.resetIfSilent();
      throw new RedisUnavailableError(`${this.inFlight} calls to Redis are waiting for an answer`);
    }
    this.inFlight += 1;
    const sent = send().finally(() => {
      this.inFlight -= 1;
      this.lastAnswerAt = performance.now();
    });
    try {
      return await this.bounded(sent);
    } catch (error) {
      if (error instanceof RedisUnavailableError) this.resetIfSilent();
      throw error;
    }
  }

  /** Drops the connection when Redis has answered nothing for STALL_RESET_MS: the next call makes a fresh one. */
  private resetIfSilent(): void {
    if (this.client === null || performance.now() - this.lastAnswerAt < STALL_RESET_MS) return;
    this.options.warn?.(`Redis: nothing answered for ${STALL_RESET_MS / 1000} s; connecting again`);
    this.lastAnswerAt = performance.now();
    const silent = this.client;
    this.client = null;
    silent.destroy();
  }

  /** Calls `listener` each time a connection to Redis is made (again), before any call is sent on it. */
  onConnected(listener: () => void): void {
    this.connectedListeners.add(listener);
  }

  close(): void {
    this.closed = true;
    this.client?.destroy();
    this.client = null;
  }

  /** The connected client, waiting for it up to the bound. */
  private async ready(): Promise<Client> {
    if (this.closed) throw new RedisUnavailableError('the Redis connection is closed');
    const client = this.currentClient();
    if (client.isReady) return client;
    // Connecting for the first time: wait (bounded). Reconnecting: refused at once by the client.
    return this.bounded(this.firstReady);
  }

  /** The client to use: the current one while it is open, else a new one (not more often than RETRY_LOGIN_MS). */
  private currentClient(): Client {
    if (this.client?.isOpen) return this.client;
    const now = performance.now();
    if (this.client !== null && now - this.lastOpenedAt < RETRY_LOGIN_MS) {
      throw new RedisUnavailableError(`Redis is unavailable: ${this.lastProblem}`);
    }
    this.lastOpenedAt = now;
    this.lastAnswerAt = now;
    const client = this.makeClient();
    this.client = client;
    this.firstReady = new Promise<Client>((resolve) => client.once('ready', () => resolve(client)));
    client.connect().catch((error: Error) => {
      this.lastProblem = error.message;
    });
    return client;
  }

  private makeClient(): Client {
    const tls = new URL(this.options.url).protocol === 'rediss:';
    const client = this.redis.createClient({
      url: this.options.url,
      // Calls made while it is not connected are refused at once, not queued for later.
      disableOfflineQueue: true,
      socket: {
        connectTimeout: Math.max(this.timeoutMs, 1_000),
        ...(tls ? { tls: true as const, ...(this.tlsCa ? { ca: this.tlsCa } : {}) } : {}),
        reconnectStrategy: (retries: number, cause: Error) => {
          // A refused login is not healed by trying again at once: close; a later call retries.
          if (isLoginRefused(cause)) return false;
          return Math.min(100 * 2 ** retries, MAX_RECONNECT_DELAY_MS);
        },
      },
    }) as unknown as Client;
    client.on('ready', () => {
      this.lastProblem = 'no answer';
      for (const listener of this.connectedListeners) listener();
      void this.measureClock(client);
    });
    client.on('error', (error: Error) => {
      if (error.message !== this.lastProblem) this.options.warn?.(`Redis: ${error.message}`);
      this.lastProblem = error.message;
    });
    return client;
  }

  /** Redis's clock against ours, half a round trip taken as the moment it was read. */
  private async measureClock(client: Client): Promise<void> {
    try {
      const sent = performance.now();
      const [seconds, micros] = (await this.bounded(client.sendCommand(['TIME']))) as [string, string];
      const received = performance.now();
      this.clockOffsetMs = Number(seconds) * 1000 + Number(micros) / 1000 - (sent + received) / 2;
    } catch {
      this.clockOffsetMs = null;
    }
  }

  /** `work`, or RedisUnavailableError once timeoutMs has passed (work may still finish later: see the limiter's deadline). */
  private bounded<T>(work: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new RedisUnavailableError(`Redis did not answer within ${this.timeoutMs} ms (${this.lastProblem})`)), this.timeoutMs);
    });
    return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
  }
}

function isLoginRefused(error: unknown): boolean {
  const message = (error as Error)?.message ?? '';
  return /^(WRONGPASS|NOAUTH|NOPERM)|invalid username-password|AUTH.*(failed|invalid)/i.test(message);
}

async function importDriver(): Promise<RedisModule> {
  try {
    const imported = (await import('redis')) as RedisModule & { default?: RedisModule };
    return imported.default && 'createClient' in imported.default ? imported.default : imported;
  } catch {
    throw new Error('REDIS_URL is set but the Redis client is not installed: run "npm install redis".');
  }
}
