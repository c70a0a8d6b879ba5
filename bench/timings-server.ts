// A server in this process for the timing parts that measure one server alone (compression,
// sockets, sign-in): in memory, no demo data, no access log, its errors printed.

import { createApp, type App } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';

export const BENCH_ADMIN_TOKEN = 'bench-operator-token-0123456789';

export async function startBenchServer(): Promise<{ app: App; base: string }> {
  const app = await createApp({
    config: loadConfig({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: ':memory:', MARKETPLACE_DEMO: '0', MARKETPLACE_ADMIN_TOKEN: BENCH_ADMIN_TOKEN, ACCESS_LOG: '0' }),
    writeOut: () => {},
    writeErr: (text) => process.stderr.write(text),
  });
  return { app, base: await app.listen() };
}

/** A JSON request; the parsed answer (null for an empty body). */
export async function sendJson(base: string, method: string, path: string, headers: Record<string, string>, body: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(base + path, { method, headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await response.text();
  return { status: response.status, body: text === '' ? null : JSON.parse(text) };
}
