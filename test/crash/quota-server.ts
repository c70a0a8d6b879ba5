// The real server for the quota crash test (quota-crash.test.ts): src/main.ts's app with the
// usage and quota counts saved every QUOTA_SAVE_MS instead of every minute, so the test sees a
// periodic save happen soon, then kills the server between two saves. Nothing else differs.

import { createApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';

async function main(): Promise<void> {
  const saveMs = Number(process.env.QUOTA_SAVE_MS);
  if (!(Number.isInteger(saveMs) && saveMs > 0)) throw new Error('QUOTA_SAVE_MS must be a positive whole number of milliseconds');
  const app = await createApp({ config: { ...loadConfig(process.env), usageFlushMs: saveMs } });
  const url = await app.listen();
  process.stdout.write(`listening on ${url}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`cannot start: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
