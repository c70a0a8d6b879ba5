// startServer(): the whole server inside another program (a demo, a test suite), on a free port
// with an in-memory store and the demo data by default. Options mirror the environment variables
// in camelCase and go through the same validation (config.ts), so a bad value is the same
// ConfigError with the same message. Nothing here reads or touches the process: no environment,
// no signals, no exit; close() is the caller's to call.

import { createApp } from './app.ts';
import { systemClock } from './clock.ts';
import { loadConfig } from './config.ts';
import { seedDemo } from './demo.ts';
import type { DemoKey } from './demo-keys.ts';

export type { DemoKey } from './demo-keys.ts';
export { ConfigError } from './config.ts';

export interface StartServerOptions {
  /** PORT; default 0, a free port chosen by the system (see `url`). */
  port?: number;
  /** HOST; default 127.0.0.1. */
  host?: string;
  /** DATA_DIR; default ":memory:", nothing kept on disk. A directory keeps the log there. */
  dataDir?: string;
  /** MARKETPLACE_DEMO; default true: an empty store is seeded with demo users, listings and keys. */
  demo?: boolean;
  /** MARKETPLACE_ADMIN_TOKEN; default generated (memory only) or read from `dataDir`/admin-token. */
  adminToken?: string;
  /** MARKETPLACE_BRAND; default "market", the `<brand>_live_` key prefix. */
  brand?: string;
  /** CORS_ORIGINS: the browser origins allowed to call the API; default none. */
  corsOrigins?: string | readonly string[];
  /** WEBHOOK_ALLOW_PRIVATE; default false. */
  webhookAllowPrivate?: boolean;
  /** WEBHOOK_RETRY_DELAYS_MS; default the production schedule (5 s up to 10 h). */
  webhookRetryDelaysMs?: readonly number[];
  /** ACCESS_LOG; default false here (true for the standalone server). */
  accessLog?: boolean;
  /** Where access-log lines go when `accessLog` is on; default standard output. */
  writeOut?: (text: string) => void;
  /** Where warnings go; default standard error. */
  writeErr?: (text: string) => void;
}

export interface RunningServer {
  /** The base URL, e.g. http://127.0.0.1:40123 (no trailing slash). */
  url: string;
  /** The operator token for /admin/v1 and AdminClient. */
  adminToken: string;
  /** The demo users' plain keys, one each; empty when `demo` is false or the store was not empty. */
  demoKeys: DemoKey[];
  /** Finishes in-flight requests (at most `graceMs`, default 10 s), flushes and closes the store. */
  close(graceMs?: number): Promise<void>;
}

/**
 * Starts a server and resolves once it is listening.
 * @example
 * const server = await startServer();
 * const client = new MarketplaceClient({ baseUrl: server.url, apiKey: server.demoKeys[0]!.key });
 * await server.close();
 */
export async function startServer(options: StartServerOptions = {}): Promise<RunningServer> {
  const config = loadConfig(environmentOf(options));
  const app = await createApp({ config, writeOut: options.writeOut, writeErr: options.writeErr });
  try {
    const demoKeys = config.demo ? await seedDemo(app.store, systemClock, config.brand) : [];
    const url = await app.listen();
    return { url, adminToken: app.operatorToken, demoKeys, close: (graceMs) => app.close(graceMs) };
  } catch (error) {
    await app.close(0).catch(() => {});
    throw error;
  }
}

/** The options as the environment variables they mirror, so loadConfig checks them as it checks those. */
function environmentOf(options: StartServerOptions): Record<string, string | undefined> {
  const flag = (value: boolean | undefined) => (value === undefined ? undefined : value ? '1' : '0');
  const corsOrigins = options.corsOrigins;
  return {
    PORT: String(options.port ?? 0),
    HOST: options.host,
    DATA_DIR: options.dataDir ?? ':memory:',
    MARKETPLACE_DEMO: flag(options.demo ?? true),
    MARKETPLACE_ADMIN_TOKEN: options.adminToken,
    MARKETPLACE_BRAND: options.brand,
    CORS_ORIGINS: typeof corsOrigins === 'string' ? corsOrigins : corsOrigins?.join(','),
    WEBHOOK_ALLOW_PRIVATE: flag(options.webhookAllowPrivate),
    WEBHOOK_RETRY_DELAYS_MS: options.webhookRetryDelaysMs?.join(','),
    ACCESS_LOG: flag(options.accessLog ?? false),
  };
}
