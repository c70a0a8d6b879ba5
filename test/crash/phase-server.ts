// The real server for the crash harness's phase runs: src/main.ts's app, with its compactions
// held for good at the phase named in CRASH_HOLD_PHASE (one of the store's CompactionHooks). It
// says "compaction held at <phase>" on stdout when a compaction gets there, and stays there
// (writes go on around it, or wait if the phase is the switch) until the harness kills it.

import { createApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import type { CompactionHooks } from '../../src/store/store.ts';

const PHASES: ReadonlyArray<keyof CompactionHooks> = ['afterSnapshot', 'writingRecords', 'carryingWrites', 'beforeRename', 'afterRename'];

async function main(): Promise<void> {
  const phase = process.env.CRASH_HOLD_PHASE as keyof CompactionHooks;
  if (!PHASES.includes(phase)) throw new Error(`CRASH_HOLD_PHASE must be one of ${PHASES.join(', ')}`);
  const hooks: CompactionHooks = {
    [phase]: () => {
      process.stdout.write(`compaction held at ${phase}\n`);
      return new Promise<void>(() => {});
    },
  };
  const app = await createApp({ config: loadConfig(process.env), compactionHooks: hooks });
  const url = await app.listen();
  process.stdout.write(`listening on ${url}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`cannot start: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
