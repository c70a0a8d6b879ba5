// The pending cap holds exactly after a write that failed on the disk: deciding a write that
// drops the oldest delivery must leave nothing behind when the write does not land. The outbox
// once marked the dropped delivery "being dropped" while deciding; the failed write left the
// mark, and the next event skipped the drop, so a webhook capped at 1 held 2.
// A real store on disk with injected faults (test/store/fault-fs.ts), the outbox wired as app.ts wires it.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { DELIVERIES } from '../../src/domain/records.ts';
import { WebhookOutbox } from '../../src/webhooks/outbox.ts';
import type { DeliveryRecord } from '../../src/domain/webhook-records.ts';
import { FaultyFileSystem } from '../store/fault-fs.ts';
import { errorWithCode, freshDataDir, openStore } from '../store/helpers.ts';
import { addWebhook, queueEvents } from './fixtures.ts';

test('a cap of 1 still holds after a write queuing an event failed on the disk, and only landed drops count', async (t) => {
  const fileSystem = new FaultyFileSystem();
  const { store } = await openStore(t, freshDataDir(t, 'cap'), { fileSystem });
  let dropped = 0;
  const outbox = new WebhookOutbox({ store, clock: new ManualClock(Date.UTC(2026, 2, 1)), onDropped: (howMany) => (dropped += howMany), maxPendingPerWebhook: 1 });
  store.onChange((change) => outbox.onStoreChange(change));
  const webhook = await addWebhook(store, { userId: 'usr_a', url: 'https://a.example/hook' });
  const waiting = () => [...store.values<DeliveryRecord>(DELIVERIES)].filter((delivery) => delivery.webhook_id === webhook.id);

  await queueEvents(store, outbox, ['listing.updated', 'usr_a', { n: 1 }]);
  assert.equal(waiting().length, 1);

  fileSystem.inject({ operation: 'write', error: errorWithCode('ENOSPC', 'ENOSPC: no space left on device, write') });
  await assert.rejects(queueEvents(store, outbox, ['listing.updated', 'usr_a', { n: 2 }]), /storage write failed/);
  fileSystem.clearFaults();
  assert.equal(waiting().length, 1, 'the failed write changed nothing');
  assert.equal(dropped, 0, 'a drop that did not land is not counted');

  for (let n = 3; n <= 5; n += 1) {
    await queueEvents(store, outbox, ['listing.updated', 'usr_a', { n }]);
    assert.equal(waiting().length, 1, `after event ${n}: the cap of 1 holds`);
    assert.equal(outbox.pendingCount(webhook.id), 1);
  }
  // Events 3, 4 and 5 each dropped the one before: three drops, all landed.
  assert.equal(dropped, 3);
});
