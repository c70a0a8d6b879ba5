// Where the CPU goes during a measured round: the processor time of this process's descendants
// (the servers, databases, proxies and load generator a bench started), summed by program (node,
// postgres, redis-server, nginx, wrk…), read from Linux's /proc/<pid>/stat before and after.
// Other work on the machine is left out; so is the kernel's own (its threads are nobody's
// children). A process that ended between the two readings is missed; the servers of a bench
// run live through it. Elsewhere than Linux it reports nothing.

import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc's utime and stime (USER_HZ: 100 on every Linux we run on). */
const TICKS_PER_SECOND = 100;

/** CPU seconds so far of each live process, by pid, with its program's name. */
export type CpuReading = Map<number, { program: string; seconds: number }>;

export function readProcessCpu(): CpuReading {
  const all = new Map<number, { program: string; parent: number; seconds: number }>();
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return new Map();
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // ended meanwhile
    }
    // "pid (comm) state ppid …": comm may hold spaces and parentheses, so split after the last ')'.
    const close = stat.lastIndexOf(')');
    const program = stat.slice(stat.indexOf('(') + 1, close);
    const fields = stat.slice(close + 2).split(' ');
    // utime and stime are fields 14 and 15 of the whole line: 12th and 13th after the comm.
    const ticks = Number(fields[11]) + Number(fields[12]);
    all.set(Number(entry), { program, parent: Number(fields[1]), seconds: ticks / TICKS_PER_SECOND });
  }
  const reading: CpuReading = new Map();
  for (const [pid, { program, seconds }] of all) {
    if (pid !== process.pid && descendsFromThisProcess(pid, all)) reading.set(pid, { program, seconds });
  }
  return reading;
}

function descendsFromThisProcess(pid: number, all: ReadonlyMap<number, { parent: number }>): boolean {
  for (let ancestor = all.get(pid)?.parent, steps = 0; ancestor !== undefined && ancestor > 1 && steps < 64; ancestor = all.get(ancestor)?.parent, steps += 1) {
    if (ancestor === process.pid) return true;
  }
  return false;
}

/** CPU seconds spent between two readings, by program (processes that started meanwhile count from zero). */
export function cpuSpentByProgram(before: CpuReading, after: CpuReading): Record<string, number> {
  const spent: Record<string, number> = {};
  for (const [pid, now] of after) {
    const earlier = before.get(pid);
    const seconds = now.seconds - (earlier !== undefined && earlier.program === now.program ? earlier.seconds : 0);
    if (seconds > 0) spent[now.program] = (spent[now.program] ?? 0) + seconds;
  }
  return spent;
}
