// Turns the environment into a typed, validated Config. Bad values throw ConfigError with one
// line a person can act on; main.ts prints it and exits non-zero before listening.

import { existsSync } from 'node:fs';
import { parseAddressRanges } from './net/address-ranges.ts';

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
  /** A PEM file of the authorities that signed Redis's certificate (REDIS_TLS_CA), for rediss:// with a private one. */
  redisTlsCaFile: string | null;
  /** Proxies whose X-Forwarded-For is believed (TRUST_PROXY): addresses and CIDR ranges; empty believes none. */
  trustProxy: string[];
  /** Origins whose browser pages may call /v1 (CORS_ORIGINS): '*', a list, or null for none. */
  corsOrigins: '*' | string[] | null;
  /** Connections open at once (MAX_CONNECTIONS); further ones are closed as they arrive. */
  maxConnections: number;
  /** Deadlines of idle, slow and non-reading clients: not an environment setting (tests shorten them). */
  socketTimeouts: SocketTimeouts;
  /** Open event streams (GET /v1/events/stream): their caps and heartbeat; not an environment setting (tests shorten the heartbeat). */
  eventStreams: EventStreamLimits;
  /** How often usage counts are saved, the most a crash can lose: not an environment setting (tests set it). */
  usageFlushMs: number;
  /**
   * scrypt's cost N for new portal passwords (DEFAULT_PASSWORD_COST, 2^15): not an environment
   * setting (the suite lowers it, so its hundreds of sign-ins cost milliseconds; a check always
   * uses the cost its stored hash names).
   */
  passwordCost: number;
  /**
   * The origin users reach the server at (MARKETPLACE_URL, e.g. https://market.example.com), or
   * null: then each request's Host. Portal writes must come from it; https makes the session
   * cookie Secure; invitation links start with it.
   */
  publicOrigin: string | null;
  /** Who may get a portal account: `invite` (the operator invites; default) or `open` (anyone may sign up). */
  portalSignup: 'invite' | 'open';
  /**
   * Event-loop ms a key with the default rate limit (100 a minute) may use per minute
   * (KEY_CPU_BUDGET_MS, default 3,000: 5% of one core); keys with higher limits get it in
   * proportion; 0 turns the budget off. The cpu-budget module's (src/modules/cpu-budget/).
   */
  keyCpuBudgetMs: number;
  /** Audit entries (and so the users' activity logs) are kept this many days (AUDIT_RETENTION_DAYS); 0 keeps them for ever. */
  auditRetentionDays: number;
  /** Revoked or expired keys are kept this many days after they ended (ENDED_KEY_RETENTION_DAYS); 0 keeps them for ever. */
  endedKeyRetentionDays: number;
  /** How many days of a user's events count as kept (EVENT_RETENTION_DAYS): a webhook recovery's `since` reaches back this far. */
  eventRetentionDays: number;
  /** Idempotency records kept at most, the oldest dropped first (IDEMPOTENCY_MAX_RECORDS), besides their 24 h: the idempotency module's. */
  idempotencyMaxRecords: number;
  /**
   * Many instances: how long a request waits for its instance to catch up with writes
   * acknowledged elsewhere before it is answered 503 (CATCH_UP_WAIT_MS, default 2,000). See
   * src/store/instance-sync.ts.
   */
  catchUpWaitMs: number;
  /** The optional modules this server loads (MARKETPLACE_MODULES: a comma list, `all` (default) or `none`). */
  modules: ModuleName[];
}

/** The optional parts of the server (src/modules/), in the order they are installed. */
export const MODULE_NAMES = ['portal', 'dashboard', 'search', 'moderation', 'events', 'metrics', 'plans', 'webhook-tools', 'cpu-budget', 'compression', 'idempotency'] as const;
export type ModuleName = (typeof MODULE_NAMES)[number];

/**
 * What a module needs loaded beside it: the one place where modules' dependencies are declared
 * (modules never import each other). The portal's plan page, its plan requests and its keys'
 * quota meters are the plans module's rules, so `portal` without `plans` stops the start.
 */
export const MODULE_NEEDS: Readonly<Partial<Record<ModuleName, readonly ModuleName[]>>> = { portal: ['plans'] };

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** 3 s of event-loop time a minute, 5% of one core, for a key allowed 100 requests a minute. */
export const DEFAULT_KEY_CPU_BUDGET_MS = 3_000;

/**
 * scrypt's N for new portal passwords, with r = 8 and p = 1: 32 MiB and tens of milliseconds per
 * hash (OWASP's scrypt minimum is N = 2^17 with r = 8 for 128 MiB; 2^15 keeps a 2-core server
 * responsive). src/portal/passwords.ts stores it in each hash, so raising it later leaves older
 * passwords valid.
 */
export const DEFAULT_PASSWORD_COST = 2 ** 15;

/** A year of audit entries: long enough for a yearly review, short enough that memory levels off. */
export const DEFAULT_AUDIT_RETENTION_DAYS = 365;
/** A revoked or expired key stays visible (portal, operator) for 90 days, then goes. */
export const DEFAULT_ENDED_KEY_RETENTION_DAYS = 90;
/** A month of events: what a receiver back from an outage, or a reader of the event log, can still get. */
export const DEFAULT_EVENT_RETENTION_DAYS = 30;
/** About 50 MB of remembered answers at ~1 KB each. */
export const DEFAULT_IDEMPOTENCY_MAX_RECORDS = 50_000;

/** A request waits at most 2 s for its instance to catch up, then gets 503 with Retry-After. */
export const DEFAULT_CATCH_UP_WAIT_MS = 2_000;

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
    eventStreams: { ...DEFAULT_EVENT_STREAM_LIMITS },
    usageFlushMs: USAGE_FLUSH_MS,
    passwordCost: DEFAULT_PASSWORD_COST,
    publicOrigin: publicOriginSetting(env.MARKETPLACE_URL),
    portalSignup: portalSignupSetting(env.PORTAL_SIGNUP),
    trustProxy: trustProxySetting(env.TRUST_PROXY),
    keyCpuBudgetMs: integerSetting(env, 'KEY_CPU_BUDGET_MS', DEFAULT_KEY_CPU_BUDGET_MS, 0, 60_000),
    auditRetentionDays: integerSetting(env, 'AUDIT_RETENTION_DAYS', DEFAULT_AUDIT_RETENTION_DAYS, 0, 36_500),
    endedKeyRetentionDays: integerSetting(env, 'ENDED_KEY_RETENTION_DAYS', DEFAULT_ENDED_KEY_RETENTION_DAYS, 0, 36_500),
    eventRetentionDays: integerSetting(env, 'EVENT_RETENTION_DAYS', DEFAULT_EVENT_RETENTION_DAYS, 1, 3_650),
    idempotencyMaxRecords: integerSetting(env, 'IDEMPOTENCY_MAX_RECORDS', DEFAULT_IDEMPOTENCY_MAX_RECORDS, 1, 10_000_000),
    catchUpWaitMs: integerSetting(env, 'CATCH_UP_WAIT_MS', DEFAULT_CATCH_UP_WAIT_MS, 100, 60_000),
    modules: modulesSetting(env.MARKETPLACE_MODULES),
    ...sharedBackends(env),
  };
}

/** `all` (or unset) loads every module, `none` none; otherwise a comma list of known names. */
function modulesSetting(raw: string | undefined): ModuleName[] {
  const text = raw?.trim().toLowerCase() ?? '';
  if (text === '' || text === 'all') return [...MODULE_NAMES];
  if (text === 'none') return [];
  const names = text.split(',').map((name) => name.trim()).filter((name) => name !== '');
  const unknown = names.filter((name) => !(MODULE_NAMES as readonly string[]).includes(name));
  if (unknown.length > 0) {
    throw new ConfigError(`MARKETPLACE_MODULES names ${unknown.map((name) => `"${name}"`).join(', ')}, which ${unknown.length === 1 ? 'is not a module' : 'are not modules'}: use all, none, or a comma list of ${MODULE_NAMES.join(', ')}`);
  }
  for (const name of names as ModuleName[]) {
    const missing = (MODULE_NEEDS[name] ?? []).filter((needed) => !names.includes(needed));
    if (missing.length > 0) throw new ConfigError(`MARKETPLACE_MODULES names ${name}, which needs ${missing.join(', ')}: add ${missing.join(', ')} to the list, or leave ${name} out`);
  }
  return MODULE_NAMES.filter((name) => names.includes(name));
}

function sharedBackends(env: Env): { databaseUrl: string | null; redisUrl: string | null; redisTlsCaFile: string | null } {
  const databaseUrl = urlSetting(env, 'DATABASE_URL', ['postgres:', 'postgresql:']);
  const redisUrl = urlSetting(env, 'REDIS_URL', ['redis:', 'rediss:']);
  const redisTlsCaFile = env.REDIS_TLS_CA?.trim() || null;
  if (redisTlsCaFile !== null) {
    if (redisUrl === null || !redisUrl.startsWith('rediss:')) throw new ConfigError('REDIS_TLS_CA is set but REDIS_URL is not a rediss:// URL: the authority file is only used for Redis over TLS');
    if (!existsSync(redisTlsCaFile)) throw new ConfigError(`REDIS_TLS_CA names "${redisTlsCaFile}", which does not exist`);
  }
  if ((databaseUrl === null) !== (redisUrl === null)) {
    const [set, unset] = databaseUrl === null ? ['REDIS_URL', 'DATABASE_URL'] : ['DATABASE_URL', 'REDIS_URL'];
    throw new ConfigError(`${set} is set but ${unset} is not: instances sharing records must share rate limits too, so set both or neither`);
  }
  if (databaseUrl !== null && !env.MARKETPLACE_ADMIN_TOKEN) {
    throw new ConfigError('DATABASE_URL needs MARKETPLACE_ADMIN_TOKEN, so that every instance accepts the same operator token');
  }
  return { databaseUrl, redisUrl, redisTlsCaFile };
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

/** Comma-separated addresses and CIDR ranges (IPv4 or IPv6) of the proxies in front. */
function trustProxySetting(raw: string | undefined): string[] {
  if (raw === undefined || raw.trim() === '') return [];
  const entries = raw.split(',').map((part) => part.trim()).filter((part) => part !== '');
  try {
    parseAddressRanges(entries);
  } catch (error) {
    throw new ConfigError(`TRUST_PROXY must be comma-separated addresses or CIDR ranges like 10.0.0.0/8, 127.0.0.1 or fd00::/8: ${(error as Error).message}`);
  }
  return entries;
}

/**
 * Usage counts are saved once a minute: a crash loses at most that, and a save covers many
 * reads of each listing, whose counts cost the log ~25 bytes a save (src/analytics/usage-counters.ts).
 */
export const USAGE_FLUSH_MS = 60_000;

// How long a client may hold a socket without using it (src/http/socket-limits.ts applies them).
export const KEEP_ALIVE_MS = 5_000;
export const HEADERS_TIMEOUT_MS = 10_000;
export const REQUEST_TIMEOUT_MS = 30_000;
/** A response that made no progress for this long is abandoned: the client stopped reading. */
export const WRITE_STALL_MS = 10_000;
/** How often the header, request and write-stall deadlines are checked. */
export const CHECK_EVERY_MS = 1_000;

export interface SocketTimeouts {
  keepAliveMs: number;
  headersMs: number;
  requestMs: number;
  writeStallMs: number;
  checkEveryMs: number;
}

/** The deadlines above, as one setting (Config.socketTimeouts; tests shorten them). */
export const DEFAULT_SOCKET_TIMEOUTS: Readonly<SocketTimeouts> = Object.freeze({
  keepAliveMs: KEEP_ALIVE_MS,
  headersMs: HEADERS_TIMEOUT_MS,
  requestMs: REQUEST_TIMEOUT_MS,
  writeStallMs: WRITE_STALL_MS,
  checkEveryMs: CHECK_EVERY_MS,
});

/** The limits of GET /v1/events/stream (src/modules/events/event-streams.ts applies them). */
export interface EventStreamLimits {
  /** A `: keep-alive` comment line this often, so proxies keep an idle stream open; the key is checked then too. */
  heartbeatMs: number;
  /** Streams one key may hold open at once; the next is answered 429. */
  perKey: number;
  /** Streams the whole server holds open at once (each holds one of MAX_CONNECTIONS' connections). */
  total: number;
  /** Bytes a stream may have waiting for a reader that does not read: past them it is dropped. */
  maxBufferedBytes: number;
}

export const DEFAULT_EVENT_STREAM_LIMITS: Readonly<EventStreamLimits> = Object.freeze({
  heartbeatMs: 15_000,
  perKey: 5,
  total: 500,
  maxBufferedBytes: 256 * 1024,
});
