// Loaded into a benchmarked server with `--import` (it changes nothing in the server): every
// 100 ms it prints the longest event-loop delay of that interval, as
// "loop-delay <epoch ms> <max ms>", so the benchmark can tell how long the loop stood still
// during a compaction without the server exposing a maximum of its own.

import { monitorEventLoopDelay } from 'node:perf_hooks';

const delay = monitorEventLoopDelay({ resolution: 1 });
delay.enable();
setInterval(() => {
  process.stdout.write(`loop-delay ${Date.now()} ${(delay.max / 1e6).toFixed(2)}\n`);
  delay.reset();
}, 100).unref();
