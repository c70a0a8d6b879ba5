// What a benchmark run records of the machine it ran on, so a published figure says where it
// came from (the same fields for the main run and the compaction run).

import { cpus, loadavg, platform, release, totalmem } from 'node:os';
import type { RunContext } from './report.ts';

/** This machine now: its processors, memory, Node, system and load average. */
export function describeMachine(): RunContext['machine'] {
  return {
    cpus: cpus().length,
    cpu_model: cpus()[0]?.model.trim() ?? 'unknown',
    memory_gib: Math.round(totalmem() / 1073741824),
    node: process.version,
    platform: `${platform()} ${release()}`,
    load_average_at_start: loadavg(),
  };
}
