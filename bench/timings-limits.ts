// The figures of keys and limits across instances for `npm run bench:timings`, each the time a
// test waits on as a condition (test/scale/cluster.test.ts, test/scale/redis-deployment.test.ts),
// on three instances sharing one PostgreSQL and one Redis:
//   revocation  how long after DELETE /admin/v1/keys/:id on one instance each other instance
//               refuses the key, over 20 revocations (each instance revoking in turn);
//   stalled     how long a request waits for its 503 while Redis is stalled (SIGSTOP,
//               connections left open), over 10 requests one after another.

import { call, percentile, startInstances, userWithKey, type Instance } from '../test/helpers/cluster.ts';
import { revocationLags } from '../test/helpers/revocation.ts';
import { startPostgres, startRedis } from '../test/helpers/services.ts';

export interface Spread {
  samples: number;
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
}

export function spread(samples: number[]): Spread {
  return { samples: samples.length, p50_ms: percentile(samples, 0.5), p99_ms: percentile(samples, 0.99), max_ms: Math.max(...samples) };
}

export function describe(figures: Spread): string {
  return `p50 ${figures.p50_ms.toFixed(1)} ms, p99 ${figures.p99_ms.toFixed(1)} ms, max ${figures.max_ms.toFixed(1)} ms over ${figures.samples}`;
}

export interface InstanceFigures {
  revocation: Spread;
  stalled_redis: Spread;
}

/** Both figures on one PostgreSQL, one Redis and three instances: revocations first, then Redis stalled. */
export async function measureInstances(log: (line: string) => void): Promise<InstanceFigures> {
  log('Revocation and a stalled Redis: PostgreSQL, Redis and 3 instances…');
  const postgres = await startPostgres();
  const redis = await startRedis();
  let instances: Instance[] = [];
  try {
    instances = await startInstances(postgres.createDatabase('bench_timings'), redis.url);
    const revocation = spread(await revocationLags(instances, 20));
    log(`  a revoked key refused by every other instance after ${describe(revocation)}`);
    const stalled = await stalledWaits(instances[0]!.url, () => redis.pause(), () => redis.resume());
    log(`  503 while Redis is stalled after ${describe(stalled)}`);
    return { revocation, stalled_redis: stalled };
  } finally {
    await Promise.all(instances.map((instance) => instance.stop()));
    await redis.destroy();
    await postgres.destroy();
  }
}

async function stalledWaits(url: string, pause: () => void, resume: () => void): Promise<Spread> {
  const { key } = await userWithKey([{ url } as Instance], 'member', ['read:listings'], 1_000);
  if ((await call(url, 'GET', '/v1/listings', key)).status !== 200) throw new Error('not served before the stall');
  pause();
  const waits: number[] = [];
  try {
    for (let index = 0; index < 10; index += 1) {
      const started = performance.now();
      const answer = await call(url, 'GET', '/v1/listings', key);
      if (answer.status !== 503) throw new Error(`a stalled Redis answered ${answer.status}`);
      waits.push(performance.now() - started);
    }
  } finally {
    resume();
  }
  return spread(waits);
}
