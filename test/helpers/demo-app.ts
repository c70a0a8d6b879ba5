// The app in this process for the scripts that take the docs' pictures (test/dashboard/
// screenshot.ts, test/docs/portal-screenshots.ts): in memory, on 127.0.0.1 and a free port, on
// the clock given (a manual one lays traffic down hour by hour), with the demo listings, no
// access log, and an operator token of its own.

import { createApp } from '../../src/app.ts';
import type { Clock } from '../../src/clock.ts';
import { loadConfig } from '../../src/config.ts';
import { seedDemo } from '../../src/demo.ts';

export const DEMO_OPERATOR_TOKEN = 'screenshot-operator-token-0123456789';

/** The app, listening, with `env` added to its settings; `close()` it when done. */
export async function demoApp(clock: Clock, env: Record<string, string> = {}) {
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: ':memory:', MARKETPLACE_ADMIN_TOKEN: DEMO_OPERATOR_TOKEN, MARKETPLACE_DEMO: '0', ACCESS_LOG: '0', ...env });
  const app = await createApp({ config, clock });
  try {
    await seedDemo(app.store, clock, config.brand);
    const base = await app.listen();
    return { base, close: () => app.close(1_000) };
  } catch (error) {
    await app.close(1_000);
    throw error;
  }
}
