// The process: read the config, build the app, seed the demo on an empty data dir, listen,
// and stop gracefully on SIGTERM/SIGINT. Every failure before listening is one line and exit 1.
// `--version` prints the version and exits. The CLI's `marketplace serve` runs this module too.

import { createApp, type App } from './app.ts';
import { systemClock } from './clock.ts';
import { ConfigError, loadConfig } from './config.ts';
import { startBanner, type BannerFacts } from './banner.ts';
import { describeDemoKeys, type DemoKey } from './demo-keys.ts';
import { VERSION } from './version.ts';

const SHUTDOWN_GRACE_MS = 10_000;

async function main(): Promise<void> {
  if (process.argv.slice(2).includes('--version')) {
    process.stdout.write(`${VERSION}\n`);
    return;
  }
  let app: App;
  try {
    const config = loadConfig(process.env);
    app = await createApp({ config });
  } catch (error) {
    const message = error instanceof ConfigError ? `configuration error: ${error.message}` : `cannot start: ${(error as Error).message}`;
    process.stderr.write(`${message}\n`);
    process.exit(1);
  }

  const { config } = app;
  let url: string;
  let demoKeys: DemoKey[] = [];
  try {
    // The seeding code is loaded only when it may run: a start with MARKETPLACE_DEMO=0 never needs it.
    if (config.demo) demoKeys = await (await import('./demo.ts')).seedDemo(app.store, systemClock, config.brand);
    if (demoKeys.length === 0) demoKeys = describeDemoKeys(app.store);
    url = await app.listen();
  } catch (error) {
    process.stderr.write(`cannot start: ${(error as Error).message}\n`);
    await app.close(0).catch(() => {});
    process.exit(1);
  }
  const operatorToken: BannerFacts['operatorToken'] =
    app.operatorTokenFile !== null ? { file: app.operatorTokenFile, created: app.operatorTokenCreated } : app.operatorTokenCreated ? { memoryOnly: app.operatorToken } : { fromEnvironment: true };
  process.stdout.write(startBanner({ url, demoKeys, operatorToken, backends: app.backends }));

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(`${signal} received: finishing in-flight requests (at most ${SHUTDOWN_GRACE_MS / 1000} s)\n`);
    app.close(SHUTDOWN_GRACE_MS).then(
      () => {
        process.stdout.write('stopped\n');
        process.exit(0);
      },
      (error: unknown) => {
        process.stderr.write(`error while stopping: ${(error as Error).message}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

void main();
