// Who receives an event is decided on current state: a listing written just after a webhook is
// registered queues an event for it, even when the store decides both writes in one batch
// (before the registration is applied to memory). The log is the judge: replayed in order,
// every listing write after a registration must carry a delivery for that webhook.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { startServer } from '../helpers/server.ts';
import { answer, startReceiver } from './fixtures.ts';

interface LoggedOp {
  op: 'put' | 'del';
  c: string;
  id: string;
  d?: { active?: boolean; events?: string[] };
}

test('every listing write the log holds after a registration carries a delivery for that webhook, also when decided in one batch (5 trials of 20 writes at once)', async (t) => {
  const server = await startServer(t, { env: { WEBHOOK_ALLOW_PRIVATE: '1' } });
  const receiver = await startReceiver(t, answer(200));
  const { key } = await server.userWithKey('creator', ['write:listings', 'write:webhooks'], 100_000);
  for (let trial = 0; trial < 5; trial += 1) {
    // 4 registrations among 16 listing writes, all in flight at once (5 × 4 = 20 webhooks, the most one user may have).
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_unused, index) =>
        index % 5 === 2
          ? server.request('POST', '/v1/webhooks', { key, body: { url: `${receiver.url}/${trial}-${index}`, events: ['listing.created'] } })
          : server.request('POST', '/v1/listings', { key, body: { title: `T${trial} ${index}`, type: 'TOOL', price: 1 } }),
      ),
    );
    assert.deepEqual([...new Set(answers.map((response) => response.status))], [201]);
  }

  const subscribed = new Set<string>();
  let listingWrites = 0;
  let checkedDeliveries = 0;
  const lines = readFileSync(join(server.dataDir!, 'marketplace.log'), 'utf8').trim().split('\n').slice(1);
  for (const line of lines) {
    const entry = JSON.parse(line) as LoggedOp | { op: 'batch'; ops: LoggedOp[] };
    const ops = entry.op === 'batch' ? entry.ops : [entry];
    if (ops.some((op) => op.c === 'listings' && op.op === 'put')) {
      listingWrites += 1;
      const deliveredTo = new Set(ops.filter((op) => op.c === 'deliveries' && op.op === 'put').map((op) => (op.d as { webhook_id: string }).webhook_id));
      for (const webhookId of subscribed) assert.ok(deliveredTo.has(webhookId), `a listing write after ${webhookId}'s registration queued no event for it`);
      checkedDeliveries += subscribed.size;
    }
    for (const op of ops) {
      if (op.c !== 'webhooks') continue;
      if (op.op === 'put' && op.d!.active !== false) subscribed.add(op.id);
      else subscribed.delete(op.id);
    }
  }
  assert.equal(listingWrites, 80);
  assert.equal(subscribed.size, 20);
  t.diagnostic(`${listingWrites} listing writes checked against ${checkedDeliveries} expected deliveries`);
});
