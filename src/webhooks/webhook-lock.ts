// Serialises read-modify-write of one webhook's records. The store has no compare-and-set and
// applies a write only after its fsync, so without this a delivery outcome read before a
// DELETE was applied could be written after it and bring the webhook back.

import type { Store } from '../store/store.ts';

// Keyed by store, so the HTTP handlers and the dispatcher share a lock without extra wiring.
const chainsByStore = new WeakMap<Store, Map<string, Promise<void>>>();

/**
 * Runs `work` once every earlier call for the same webhook has finished; reads inside it see
 * every earlier write applied.
 * @example await withWebhookLock(store, webhook.id, async () => { read; await store.write(ops); })
 */
export function withWebhookLock<T>(store: Store, webhookId: string, work: () => Promise<T>): Promise<T> {
  let chains = chainsByStore.get(store);
  if (chains === undefined) {
    chains = new Map();
    chainsByStore.set(store, chains);
  }
  const previous = chains.get(webhookId) ?? Promise.resolve();
  const result = previous.then(work);
  const tail = result.then(
    () => {},
    () => {},
  );
  chains.set(webhookId, tail);
  const ownChains = chains;
  void tail.then(() => {
    if (ownChains.get(webhookId) === tail) ownChains.delete(webhookId);
  });
  return result;
}
