// A process that races for a data directory's lock when told to: the lock race test starts a
// few of these once and, each trial, gives them all the same instant to call Store.open at.
// It answers whether it won, and closes its store when asked.

import { Store } from '../../src/store/store.ts';

let held: Store | null = null;

process.on('message', (message: { kind: 'race'; dataDir: string; atMs: number } | { kind: 'release' }) => {
  if (message.kind === 'release') {
    const store = held;
    held = null;
    void (store?.close() ?? Promise.resolve()).then(() => process.send!({ kind: 'released' }));
    return;
  }
  // Busy-wait to the shared instant (sub-millisecond), so the opens really collide.
  const start = performance.timeOrigin;
  while (start + performance.now() < message.atMs) {
    // spin
  }
  Store.open({ dataDir: message.dataDir, warn: () => {} }).then(
    (store) => {
      held = store;
      process.send!({ kind: 'result', won: true });
    },
    (error: Error) => process.send!({ kind: 'result', won: false, error: `${error.name}: ${error.message}` }),
  );
});
process.send!({ kind: 'ready' });
