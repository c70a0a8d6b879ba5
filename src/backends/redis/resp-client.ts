// A small Redis client over one TCP connection, speaking RESP2 with node:net: enough for the
// limiter's scripts (EVALSHA, EVAL, PING), with no driver to install. Commands are pipelined
// (sent at once, answered in order). A lost connection fails every command in flight and the
// next command reconnects, so a Redis restart heals by itself; while Redis is away commands
// fail fast with RedisUnavailableError rather than queueing without bound.

import { connect, type Socket } from 'node:net';

export type RespValue = string | number | null | RespValue[];

/** Redis could not be reached or did not answer in time. */
export class RedisUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RedisUnavailableError';
  }
}

/** Redis answered with an error reply (`-ERR …`, `-NOSCRIPT …`). */
export class RedisReplyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RedisReplyError';
  }
}

interface Pending {
  resolve: (value: RespValue) => void;
  reject: (error: Error) => void;
}

export interface RedisEndpoint {
  host: string;
  port: number;
  username: string | null;
  password: string | null;
  database: number;
}

/** redis://[user:password@]host[:port][/db] → its parts; throws on anything else. */
export function parseRedisUrl(url: string): RedisEndpoint {
  const parsed = new URL(url);
  if (parsed.protocol !== 'redis:') throw new Error(`a redis:// URL is needed, got "${parsed.protocol}"`);
  const database = parsed.pathname.length > 1 ? Number(parsed.pathname.slice(1)) : 0;
  if (!Number.isInteger(database) || database < 0) throw new Error(`the database number in the Redis URL must be a whole number, got "${parsed.pathname.slice(1)}"`);
  return {
    host: parsed.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1',
    port: parsed.port === '' ? 6379 : Number(parsed.port),
    username: parsed.username === '' ? null : decodeURIComponent(parsed.username),
    password: parsed.password === '' ? null : decodeURIComponent(parsed.password),
    database,
  };
}

export class RespClient {
  private readonly endpoint: RedisEndpoint;
  private readonly timeoutMs: number;
  private socket: Socket | null = null;
  private ready: Promise<Socket> | null = null;
  private readonly pending: Pending[] = [];
  private buffer: Buffer = Buffer.alloc(0);
  private closed = false;

  constructor(url: string, options: { timeoutMs?: number } = {}) {
    this.endpoint = parseRedisUrl(url);
    this.timeoutMs = options.timeoutMs ?? 2_000;
  }

  /** Sends one command; resolves with its reply, rejects with RedisReplyError or RedisUnavailableError. */
  async command(args: readonly (string | number)[]): Promise<RespValue> {
    const socket = await this.connection();
    return this.send(socket, args);
  }

  close(): void {
    this.closed = true;
    this.socket?.destroy();
  }

  private send(socket: Socket, args: readonly (string | number)[]): Promise<RespValue> {
    return new Promise<RespValue>((resolve, reject) => {
      const timer = setTimeout(() => {
        // An unanswered command leaves the replies out of step: drop the connection.
        this.fail(socket, new RedisUnavailableError(`Redis did not answer within ${this.timeoutMs} ms`));
      }, this.timeoutMs);
      this.pending.push({
        resolve: (value) => {
          clearTimeout(timer);
          resolve(value);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      });
      socket.write(encodeCommand(args));
    });
  }

  private connection(): Promise<Socket> {
    if (this.closed) return Promise.reject(new RedisUnavailableError('the Redis client is closed'));
    this.ready ??= this.open().catch((error: Error) => {
      this.ready = null;
      throw error;
    });
    return this.ready;
  }

  private async open(): Promise<Socket> {
    const { host, port } = this.endpoint;
    const socket = await new Promise<Socket>((resolve, reject) => {
      const candidate = connect({ host, port });
      const timer = setTimeout(() => {
        candidate.destroy();
        reject(new RedisUnavailableError(`could not connect to Redis at ${host}:${port} within ${this.timeoutMs} ms`));
      }, this.timeoutMs);
      candidate.once('connect', () => {
        clearTimeout(timer);
        resolve(candidate);
      });
      candidate.once('error', (error) => {
        clearTimeout(timer);
        reject(new RedisUnavailableError(`could not connect to Redis at ${host}:${port}: ${error.message}`));
      });
    });
    socket.setNoDelay(true);
    this.socket = socket;
    this.buffer = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => this.receive(socket, chunk));
    socket.on('error', (error) => this.fail(socket, new RedisUnavailableError(`Redis connection failed: ${error.message}`)));
    socket.on('close', () => this.fail(socket, new RedisUnavailableError('the Redis connection closed')));
    const { username, password, database } = this.endpoint;
    if (password !== null) await this.send(socket, username === null ? ['AUTH', password] : ['AUTH', username, password]);
    if (database !== 0) await this.send(socket, ['SELECT', database]);
    return socket;
  }

  /** Forgets a broken connection and fails everything sent on it. */
  private fail(socket: Socket, error: Error): void {
    if (this.socket !== socket) return;
    this.socket = null;
    this.ready = null;
    socket.destroy();
    for (const waiting of this.pending.splice(0)) waiting.reject(error);
  }

  private receive(socket: Socket, chunk: Buffer): void {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    let offset = 0;
    for (;;) {
      let parsed: { value: RespValue | RedisReplyError; end: number } | null;
      try {
        parsed = parseReply(this.buffer, offset);
      } catch (error) {
        this.fail(socket, new RedisUnavailableError(`unreadable answer from Redis: ${(error as Error).message}`));
        return;
      }
      if (parsed === null) break;
      offset = parsed.end;
      const waiting = this.pending.shift();
      if (!waiting) continue;
      if (parsed.value instanceof RedisReplyError) waiting.reject(parsed.value);
      else waiting.resolve(parsed.value);
    }
    this.buffer = offset === this.buffer.length ? Buffer.alloc(0) : this.buffer.subarray(offset);
  }
}

function encodeCommand(args: readonly (string | number)[]): Buffer {
  const parts: Buffer[] = [Buffer.from(`*${args.length}\r\n`)];
  for (const arg of args) {
    const bytes = Buffer.from(String(arg));
    parts.push(Buffer.from(`$${bytes.length}\r\n`), bytes, Buffer.from('\r\n'));
  }
  return Buffer.concat(parts);
}

/** One reply starting at `offset`, or null when the buffer does not hold all of it yet. */
export function parseReply(buffer: Buffer, offset: number): { value: RespValue | RedisReplyError; end: number } | null {
  const lineEnd = buffer.indexOf('\r\n', offset);
  if (lineEnd === -1) return null;
  const type = String.fromCharCode(buffer[offset]!);
  const line = buffer.toString('utf8', offset + 1, lineEnd);
  const next = lineEnd + 2;
  switch (type) {
    case '+':
      return { value: line, end: next };
    case '-':
      return { value: new RedisReplyError(line), end: next };
    case ':':
      return { value: Number(line), end: next };
    case '$': {
      const length = Number(line);
      if (length < 0) return { value: null, end: next };
      if (buffer.length < next + length + 2) return null;
      return { value: buffer.toString('utf8', next, next + length), end: next + length + 2 };
    }
    case '*': {
      const count = Number(line);
      if (count < 0) return { value: null, end: next };
      const items: RespValue[] = [];
      let end = next;
      for (let index = 0; index < count; index += 1) {
        const item = parseReply(buffer, end);
        if (item === null) return null;
        // An error inside an array (a script's pcall) is kept as its message.
        items.push(item.value instanceof RedisReplyError ? item.value.message : item.value);
        end = item.end;
      }
      return { value: items, end };
    }
    default:
      throw new Error(`unknown reply type "${type}"`);
  }
}
