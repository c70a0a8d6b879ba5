// Not in test:unit: three server processes on one PostgreSQL and one Redis.
// Plan quotas across instances (contract section 23): one user's count on a plan is one number
// in Redis, taken by one atomic script, so N requests at once against R remaining get exactly R
// answers, whichever instances they reach; a top-up on one instance counts on the others.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { call, clusterForFile } from '../helpers/cluster.ts';
import { eventually } from '../helpers/eventually.ts';

const cluster = clusterForFile('plan_quotas');

test('with 2 of the quota left, 20 requests at once over three instances get exactly 2 answers; a top-up counts everywhere', { skip: cluster.skip, timeout: 120_000 }, async () => {
  const [first] = cluster.instances;
  const plans = await call(first!.url, 'PUT', '/admin/v1/plans', 'admin', {
    plans: [
      { id: 'free', name: 'Free', rate_limit: 100, self_service: true },
      { id: 'metered', name: 'Metered', rate_limit: 1_000, self_service: false, quota: { requests: 5, period: 'day' } },
    ],
  });
  assert.equal(plans.status, 200, JSON.stringify(plans.body));
  const user = await call(first!.url, 'POST', '/admin/v1/users', 'admin', { name: 'Metered user', role: 'member' });
  const keys: Array<{ key: string; id: string }> = [];
  for (let index = 0; index < 3; index += 1) {
    const made = await call(first!.url, 'POST', '/admin/v1/keys', 'admin', { user_id: user.body.data.id, plan: 'metered', permissions: ['read:listings'] });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    keys.push({ key: made.body.data.key, id: made.body.data.id });
  }
  for (const instance of cluster.instances) {
    await eventually(async () => (await call(instance.url, 'GET', '/v1/listings?limit=1', keys[2]!.key, undefined)).status !== 401 || false, 30_000, 'the keys known everywhere');
  }
  // The probes above took one request each (the plan and keys reached every instance); set the count to 3 of 5.
  const set = await call(first!.url, 'POST', `/admin/v1/keys/${keys[0]!.id}/quota`, 'admin', { used: 3 });
  assert.equal(set.status, 200, JSON.stringify(set.body));
  const answers = await Promise.all(
    Array.from({ length: 20 }, (_, index) => call(cluster.instances[index % 3]!.url, 'GET', '/v1/listings?limit=1', keys[index % 3]!.key)),
  );
  const statuses = answers.map((answer) => answer.status);
  assert.equal(statuses.filter((status) => status === 200).length, 2, `exactly the 2 left: ${statuses.join(' ')}`);
  assert.equal(statuses.filter((status) => status === 429).length, 18);
  for (const answer of answers.filter((each) => each.status === 429)) assert.equal(answer.body.quota.used, 5);

  const topped = await call(cluster.instances[1]!.url, 'POST', `/admin/v1/keys/${keys[1]!.id}/quota`, 'admin', { add: 1 });
  assert.equal(topped.body.data.remaining, 1);
  assert.equal((await call(cluster.instances[2]!.url, 'GET', '/v1/listings?limit=1', keys[2]!.key)).status, 200, 'the top-up counts on another instance');
  const usage = await call(cluster.instances[0]!.url, 'GET', `/admin/v1/keys/${keys[0]!.id}/usage`, 'admin');
  assert.equal(usage.body.data.quota.used, 5);
});
