// The webhook figure for `npm run bench:timings`: how soon another user's first delivery (the
// ping sent when a webhook is registered) arrives while a tarpit user has 20 webhooks whose
// receivers never answer (each attempt waits out its 10 s timeout). The test
// (test/webhooks/bounded.test.ts) asserts the order, that the ping comes while the hung
// attempts are all still waiting; the time is measured here, over 5 users one after another.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { call, CLUSTER_ADMIN_TOKEN, userWithKey, type Instance } from '../test/helpers/cluster.ts';
import { eventually } from '../test/helpers/eventually.ts';
import { startMain } from '../test/helpers/main-process.ts';
import { describe, spread, type Spread } from './timings-limits.ts';

const PERMISSIONS = ['read:webhooks', 'write:webhooks'];
const OTHER_USERS = 5;

/** A receiver on a free port that calls `onRequest` for each request once its body is in. */
async function receiver(onRequest: (response: ServerResponse) => void): Promise<{ server: Server; url: string }> {
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    request.resume();
    request.on('end', () => onRequest(response));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook` };
}

export async function measureTarpit(log: (line: string) => void): Promise<Spread> {
  log('Webhooks: a tarpit user with 20 hung receivers, and 5 other users…');
  let hungOpen = 0;
  const hung = await receiver(() => (hungOpen += 1)); // never answered
  const arrivals: number[] = [];
  const healthy = await receiver((response) => {
    arrivals.push(performance.now());
    response.end();
  });
  const running = await startMain({ DATA_DIR: ':memory:', WEBHOOK_ALLOW_PRIVATE: '1', MARKETPLACE_DEMO: '0', MARKETPLACE_ADMIN_TOKEN: CLUSTER_ADMIN_TOKEN });
  try {
    const instances = [{ url: running.url } as Instance];
    const tarpit = await userWithKey(instances, 'creator', PERMISSIONS);
    for (let index = 0; index < 20; index += 1) {
      const made = await call(running.url, 'POST', '/v1/webhooks', tarpit.key, { url: `${hung.url}/${index}` });
      if (made.status !== 201) throw new Error(`tarpit webhook: ${made.status}`);
    }
    await eventually(async () => hungOpen >= 2, 30_000, 'the hung receivers holding requests');
    const delays: number[] = [];
    for (let number = 0; number < OTHER_USERS; number += 1) {
      const other = await userWithKey(instances, 'member', PERMISSIONS);
      const registeredAt = performance.now();
      const made = await call(running.url, 'POST', '/v1/webhooks', other.key, { url: healthy.url });
      if (made.status !== 201) throw new Error(`webhook: ${made.status}`);
      await eventually(async () => arrivals.length > number, 30_000, "the other user's ping");
      delays.push(arrivals[number]! - registeredAt);
    }
    const figures = spread(delays);
    log(`  the other user's ping arrived after ${describe(figures)}`);
    return figures;
  } finally {
    running.child.kill('SIGKILL');
    for (const { server } of [hung, healthy]) {
      server.closeAllConnections();
      server.close();
    }
  }
}
