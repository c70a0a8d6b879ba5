// Turns the environment into a typed, validated Config. Bad values throw ConfigError with one
// line a person can act on; main.ts prints it and exits non-zero before listening.

import { DEFAULT_SOCKET_TIMEOUTS, type SocketTimeouts } from './http/socket-limits.ts';

export interface Config {
  port: number;
  host: string;
  /** Directory of the log, lock and operator token file; null keeps everything in memory (DATA_DIR=:memory:). */
  dataDir: string | null;
  brand: string;
  /** Operator token from the environment; when absent one is generated (see auth/operator-token-source.ts). */
  operatorToken: string | null;
  demo: boolean;
  webhookAllowPrivate: boolean;
  webhookRetryDelaysMs: number[];
  /** One JSON line per request on stdout (ACCESS_LOG=0 turns it off, e.g. for benchmarks). */
  accessLog: boolean;
  /** Usage counting (MARKETPLACE_ANALYTICS=0 turns it off, to measure what it costs). */
  analytics: boolean;
  /**
   * Many instances (set together): the postgres:// URL of the records, the redis:// URL of the
   * rate limits. Both null (the default) keeps records in DATA_DIR and limits in this process.
   */
  databaseUrl: string | null;
  redisUrl: string | null;
  /** Origins whose browser pages may call /v1 (CORS_ORIGINS): '*', a list, or null for none. */
  corsOrigins: '*' | string[] | null;
  /** Connections open at once (MAX_CONNECTIONS); further ones are closed as they arrive. */
  maxConnections: number;
  /** Deadlines of idle, slow and non-reading clients: not an environment setting (tests shorten them). */
  socketTimeouts: SocketTimeouts;
  /**
   * The origin users reach the server at (MARKETPLACE_URL, e.g. https://market.example.com), or
   * null: then each request's Host. Portal writes must come from it; https makes the session
   * cookie Secure; invitation links start with it.
   */
  publicOrigin: string | null;
  /** Who may get a portal account: `invite` (the operator invites; default) or `open` (anyone may sign up). */
  portalSignup: 'invite' | 'open';
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

export const DEFAULT_RETRY_DELAYS_MS = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000];

type Env = Record<string, string | undefined>;

export function loadConfig(env: Env): Config {
  return {
    port: integerSetting(env, 'PORT', 3000, 0, 65535),
    host: nonEmpty(env, 'HOST', '127.0.0.1'),
    dataDir: dataDirSetting(env.DATA_DIR),
    brand: brandSetting(env.MARKETPLACE_BRAND),
    operatorToken: operatorTokenSetting(env.MARKETPLACE_ADMIN_TOKEN),
    // Demo users and live keys are for trying it out: a production start never gets them unasked.
    demo: flag(env, 'MARKETPLACE_DEMO', env.NODE_ENV !== 'production'),
    webhookAllowPrivate: flag(env, 'WEBHOOK_ALLOW_PRIVATE', false),
    webhookRetryDelaysMs: retryDelaysSetting(env.WEBHOOK_RETRY_DELAYS_MS),
    accessLog: flag(env, 'ACCESS_LOG', true),
    analytics: flag(env, 'MARKETPLACE_ANALYTICS', true),
    corsOrigins: corsOriginsSetting(env.CORS_ORIGINS),
    maxConnections: integerSetting(env, 'MAX_CONNECTIONS', 1_000, 1, 1_000_000),
    socketTimeouts: { ...DEFAULT_SOCKET_TIMEOUTS },
    publicOrigin: publicOriginSetting(env.MARKETPLACE_URL),
    portalSignup: portalSignupSetting(env.PORTAL_SIGNUP),
    ...sharedBackends(env),
  };
}

function sharedBackends(env: Env): { databaseUrl: string | null; redisUrl: string | null } {
  const databaseUrl = urlSetting(env, 'DATABASE_URL', ['postgres:', 'postgresql:']);
  const redisUrl = urlSetting(env, 'REDIS_URL', ['redis:']);
  if ((databaseUrl === null) !== (redisUrl === null)) {
    const [set, unset] = databaseUrl === null ? ['REDIS_URL', 'DATABASE_URL'] : ['DATABASE_URL', 'REDIS_URL'];
    throw new ConfigError(`${set} is set but ${unset} is not: instances sharing records must share rate limits too, so set both or neither`);
  }
  if (databaseUrl !== null && !env.MARKETPLACE_ADMIN_TOKEN) {
    throw new ConfigError('DATABASE_URL needs MARKETPLACE_ADMIN_TOKEN, so that every instance accepts the same operator token');
  }
  return { databaseUrl, redisUrl };
}

function urlSetting(env: Env, name: string, protocols: string[]): string | null {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return null;
  let protocol: string;
  try {
    protocol = new URL(raw.trim()).protocol;
  } catch {
    throw new ConfigError(`${name} must be a ${protocols[0]}// URL, got something that is not a URL`);
  }
  if (!protocols.includes(protocol)) throw new ConfigError(`${name} must be a ${protocols[0]}// URL, got a ${protocol}// one`);
  return raw.trim();
}

function integerSetting(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
  }
  return Number(raw);
}

function nonEmpty(env: Env, name: string, fallback: string): string {
  const raw = env[name];
  if (raw === undefined) return fallback;
  if (raw.trim() === '') throw new ConfigError(`${name} must not be empty`);
  return raw.trim();
}

function flag(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw === '1' || raw === 'true') return true;
  if (raw === '0' || raw === 'false') return false;
  throw new ConfigError(`${name} must be 1 or 0, got "${raw}"`);
}

function dataDirSetting(raw: string | undefined): string | null {
  if (raw === ':memory:') return null;
  if (raw === undefined || raw === '') return './data';
  return raw;
}

function brandSetting(raw: string | undefined): string {
  if (raw === undefined || raw === '') return 'market';
  if (!/^[a-z][a-z0-9]{1,19}$/.test(raw) || raw === 'mk') {
    throw new ConfigError(
      `MARKETPLACE_BRAND must be 2-20 lowercase letters or digits starting with a letter (and not "mk"), got "${raw}"`,
    );
  }
  return raw;
}

function operatorTokenSetting(raw: string | undefined): string | null {
  if (raw === undefined || raw === '') return null;
  if (raw.length < 16 || /\s/.test(raw)) {
    throw new ConfigError('MARKETPLACE_ADMIN_TOKEN must be at least 16 characters with no spaces');
  }
  return raw;
}

function retryDelaysSetting(raw: string | undefined): number[] {
  if (raw === undefined || raw.trim() === '') return DEFAULT_RETRY_DELAYS_MS;
  const parts = raw.split(',').map((part) => part.trim());
  if (parts.some((part) => !/^\d+$/.test(part) || Number(part) > 7 * 24 * 3600 * 1000)) {
    throw new ConfigError(
      `WEBHOOK_RETRY_DELAYS_MS must be comma-separated whole milliseconds (each at most 7 days), got "${raw}"`,
    );
  }
  return parts.map(Number);
}

/** "*", or comma-separated origins each exactly as a browser sends it: scheme://host[:port]. */
function corsOriginsSetting(raw: string | undefined): '*' | string[] | null {
  if (raw === undefined || raw.trim() === '') return null;
  if (raw.trim() === '*') return '*';
  const origins = raw.split(',').map((part) => part.trim());
  for (const origin of origins) {
    if (!isOrigin(origin)) {
      throw new ConfigError(`CORS_ORIGINS must be * or comma-separated origins like https://app.example.com (no path, no trailing slash), got "${origin}"`);
    }
  }
  return origins;
}

/** An http(s) URL with nothing after its origin but an optional "/"; its origin. */
function publicOriginSetting(raw: string | undefined): string | null {
  if (raw === undefined || raw.trim() === '') return null;
  const text = raw.trim().replace(/\/$/, '');
  if (!isOrigin(text)) {
    throw new ConfigError(`MARKETPLACE_URL must be the address users reach the server at, like https://market.example.com (no path), got "${raw}"`);
  }
  return text;
}

function portalSignupSetting(raw: string | undefined): 'invite' | 'open' {
  if (raw === undefined || raw.trim() === '') return 'invite';
  if (raw === 'invite' || raw === 'open') return raw;
  throw new ConfigError(`PORTAL_SIGNUP must be invite or open, got "${raw}"`);
}

function isOrigin(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === text;
  } catch {
    return false;
  }
}
