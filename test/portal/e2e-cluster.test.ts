// The developer portal end to end in headless Chromium against three instances on one
// PostgreSQL and one Redis behind nginx (round-robin): the session is made on one instance and
// used on the others, keys made, rolled and revoked on one are honoured by all. The flow of
// browser-flow.ts, with no pause after any write.

import { test } from 'node:test';
import { findChromium, launchChromium } from '../dashboard/browser.ts';
import { CLUSTER_ADMIN_TOKEN, startInstances } from '../helpers/cluster.ts';
import { skipUnlessServices, startNginx, startPostgres, startRedis } from '../helpers/services.ts';
import { runPortalFlow } from './browser-flow.ts';

const search = findChromium();
const skip = skipUnlessServices('postgresBin', 'redisServer', 'nginx') || (search.found ? false : search.reason);

test('the developer portal, from an invitation to signing out, through nginx over three instances on PostgreSQL and Redis', { skip, timeout: 300_000 }, async (t) => {
  if (!search.found) return;
  const postgres = await startPostgres();
  t.after(() => postgres.destroy());
  const redis = await startRedis();
  t.after(() => redis.destroy());
  const databaseUrl = postgres.createDatabase('portal');
  const env = { WEBHOOK_ALLOW_PRIVATE: '1' };
  const instances = await startInstances(databaseUrl, redis.url, env);
  t.after(() => Promise.all(instances.map((instance) => instance.stop())));
  const nginx = await startNginx(instances.map((instance) => instance.address));
  t.after(() => nginx.destroy());
  const browser = await launchChromium(search.path);
  t.after(() => browser.close());
  await runPortalFlow(t, browser, { base: nginx.url, adminToken: CLUSTER_ADMIN_TOKEN });
});
