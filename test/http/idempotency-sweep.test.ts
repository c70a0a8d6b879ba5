// The sweep of expired Idempotency-Key records deletes only what is still expired when its
// write commits: a record written again meanwhile (the same key used again) is kept.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { IDEMPOTENCY, type IdempotencyRecord } from '../../src/domain/records.ts';
import { IdempotencyGuard, IDEMPOTENCY_TTL_MS } from '../../src/modules/idempotency/guard.ts';
import { Store } from '../../src/store/store.ts';
import { freshDataDir } from '../store/helpers.ts';

const NOW = Date.parse('2026-03-01T12:00:00.000Z');

function record(id: string, createdAtMs: number): IdempotencyRecord {
  return { id, key_id: 'key_a', request_hash: 'h', status: 201, body: '{}', created_at: new Date(createdAtMs).toISOString() };
}

test('sweepExpired deletes expired records, keeps fresh ones and one rewritten while the sweep was queued', async (t) => {
  const store = await Store.open({ dataDir: freshDataDir(t, 'idem-sweep'), warn: () => {} });
  t.after(() => store.close());
  const old = NOW - IDEMPOTENCY_TTL_MS - 1_000;
  await store.write([
    { op: 'put', collection: IDEMPOTENCY, id: 'idem_old', data: record('idem_old', old) },
    { op: 'put', collection: IDEMPOTENCY, id: 'idem_reused', data: record('idem_reused', old) },
    { op: 'put', collection: IDEMPOTENCY, id: 'idem_fresh', data: record('idem_fresh', NOW) },
  ]);
  const guard = new IdempotencyGuard(store, () => NOW);
  // Written again (not yet applied) just before the sweep looks: the sweep must not delete it.
  const rewrite = store.write([{ op: 'put', collection: IDEMPOTENCY, id: 'idem_reused', data: record('idem_reused', NOW) }]);
  const swept = await guard.sweepExpired();
  await rewrite;
  assert.equal(swept, 1);
  assert.equal(store.get(IDEMPOTENCY, 'idem_old'), undefined);
  assert.equal(store.get(IDEMPOTENCY, 'idem_reused')?.created_at, new Date(NOW).toISOString());
  assert.ok(store.get(IDEMPOTENCY, 'idem_fresh'));
});
