// Revoking keys on many instances, shared by test/scale/cluster.test.ts (every other instance
// does refuse each revoked key) and bench/timings-limits.ts (how soon): `trials` keys, each
// first accepted by every instance, then revoked through each instance in turn and waited on,
// as a condition, at every other instance until it answers 401.

import { call, userWithKey, type Instance } from './cluster.ts';
import { eventually } from './eventually.ts';

/** How long each other instance took to refuse each revoked key, in ms: (instances − 1) × trials samples. */
export async function revocationLags(instances: readonly Instance[], trials: number): Promise<number[]> {
  const owner = await userWithKey(instances, 'member', ['read:listings']);
  const lags: number[] = [];
  for (let trial = 0; trial < trials; trial += 1) {
    const key = await call(instances[0]!.url, 'POST', '/admin/v1/keys', 'admin', { user_id: owner.userId, permissions: ['read:listings'] });
    // Known (and cached) by every instance first.
    for (const instance of instances) {
      await eventually(async () => (await call(instance.url, 'GET', '/v1/listings', key.body.data.key)).status === 200, 30_000, 'new key accepted');
    }
    const revoker = instances[trial % instances.length]!;
    const revoked = await call(revoker.url, 'DELETE', `/admin/v1/keys/${key.body.data.id}`, 'admin');
    if (revoked.status !== 200) throw new Error(`revoking answered ${revoked.status}: ${JSON.stringify(revoked.body)}`);
    const others = instances.filter((instance) => instance !== revoker);
    lags.push(...(await Promise.all(others.map((instance) => eventually(async () => (await call(instance.url, 'GET', '/v1/listings', key.body.data.key)).status === 401, 30_000, 'revoked key refused', 2)))));
  }
  return lags;
}
