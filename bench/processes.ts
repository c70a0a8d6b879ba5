// Child processes of the benchmark: start a Node program (the API or a baseline), wait for its
// "listening on http://…" line, read its RSS and CPU time from /proc, and stop it by its pid.
// Every child is also killed if the benchmark itself exits early.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, readSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus } from 'node:os';

export interface ChildOptions {
  name: string;
  /** Arguments after `node`, e.g. ['--import', 'tsx', 'src/main.ts']. */
  args: string[];
  env?: Record<string, string>;
  cwd: string;
  /** Where the child's stdout and stderr go. */
  logFile: string;
  readyTimeoutMs: number;
  /** The CPUs this child runs on (taskset), instead of the targets' (pinTargetsTo). */
  cpus?: string;
}

export interface RunningChild {
  name: string;
  pid: number;
  /** Milliseconds from spawn to the "listening on" line. */
  readyMs: number;
  /** CPU seconds (all threads, user + system) the child had used when it printed that line. */
  readyCpuS: number | null;
  stop(): Promise<void>;
}

/** How large a child's log file grows before it is emptied (its start kept beside it). */
const MAX_LOG_BYTES = 4 * 1048576;
const READY_LINE = /listening on http:\/\/\S+/;
const everyChild = new Set<ChildProcess>();

/**
 * CPU pinning: targets on one core, the load generator on another, so the two never share a
 * core and the scheduler does not move them mid-round (measured: round-to-round spread drops a
 * lot). `taskset` replaces itself with the program, so the pid is the program's. Off (null)
 * with one core, without `taskset`, or with --pin off.
 */
export interface Pinning {
  targetCpus: string;
  generatorCpus: string;
}

export function choosePinning(wanted: string): Pinning | null {
  if (wanted === 'off') return null;
  const cores = cpus().length;
  const taskset = spawnSync('taskset', ['-c', '0', 'true']);
  if (cores < 2 || taskset.error !== undefined || taskset.status !== 0) {
    if (wanted === 'on') throw new Error('--pin on needs at least 2 CPUs and taskset (util-linux)');
    return null;
  }
  // With more cores the generator gets all but the first, which is the target's.
  return { targetCpus: '0', generatorCpus: cores === 2 ? '1' : `1-${cores - 1}` };
}

let targetCpus: string | null = null;

/** Children started from now on run on these CPUs (null: anywhere). */
export function pinTargetsTo(cpuList: string | null): void {
  targetCpus = cpuList;
}

process.on('exit', () => {
  for (const child of everyChild) child.kill('SIGKILL');
});

/** A TCP port that was free a moment ago (bound to port 0, then released). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

export function startChild(options: ChildOptions): Promise<RunningChild> {
  const started = performance.now();
  const cpuList = targetCpus === null ? null : (options.cpus ?? targetCpus);
  const [command, args] = cpuList === null ? [process.execPath, options.args] : ['taskset', ['-c', cpuList, process.execPath, ...options.args]];
  // The child writes its output (the server's access log, on by default) straight into its log
  // file, as a server started with `>> access.log` does: no pipe for this process to drain, so
  // the benchmark's own scheduling never blocks the server on a full pipe (profiled: with a pipe,
  // the blocked write was ~5% of a cached page's time). Appending lets the file be emptied
  // while the child writes on.
  const logFd = openSync(options.logFile, 'w');
  closeSync(logFd);
  const appendFd = openSync(options.logFile, 'a');
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', appendFd, appendFd],
  });
  closeSync(appendFd);
  everyChild.add(child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // A long run writes gigabytes of access log: past MAX_LOG_BYTES its start is kept beside it
  // and the file is emptied.
  const keepLogBounded = setInterval(() => boundLogFile(options.logFile), 1000);
  exited.then(() => {
    everyChild.delete(child);
    clearInterval(keepLogBounded);
  });

  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => fail(`did not print "listening on http://…" within ${options.readyTimeoutMs} ms`), options.readyTimeoutMs);
    const poll = setInterval(() => {
      if (!READY_LINE.test(logStart(options.logFile))) return;
      settle();
      resolve({
        name: options.name,
        pid: child.pid!,
        readyMs: performance.now() - started,
        readyCpuS: cpuSeconds(child.pid!),
        stop: () => stopChild(child, exited),
      });
    }, 5);
    let settled = false;
    const settle = (): void => {
      settled = true;
      clearTimeout(timer);
      clearInterval(poll);
    };
    const fail = (why: string): void => {
      if (settled) return;
      settle();
      child.kill('SIGKILL');
      reject(new Error(`${options.name} ${why}; its last output:\n${logStart(options.logFile).slice(-2000).trim()}\n(full log: ${options.logFile})`));
    };
    child.once('exit', (code, signal) => fail(`exited (code ${code}, signal ${signal}) before it was ready`));
    child.once('error', (error) => fail(`could not start: ${error.message}`));
  });
}

/** The first 64 KiB of a log file, as text ("" when it cannot be read). */
function logStart(path: string): string {
  try {
    const fd = openSync(path, 'r');
    try {
      const buffer = Buffer.alloc(65536);
      return buffer.toString('utf8', 0, readSync(fd, buffer, 0, buffer.length, 0));
    } finally {
      closeSync(fd);
    }
  } catch {
    return '';
  }
}

/** Once a child's log passes MAX_LOG_BYTES: its first MAX_LOG_BYTES go to `<log>.start` (once), and the log is emptied. */
function boundLogFile(path: string): void {
  try {
    if (statSync(path).size <= MAX_LOG_BYTES) return;
    const start = `${path}.start`;
    if (!existsSync(start)) {
      const fd = openSync(path, 'r');
      const buffer = Buffer.alloc(MAX_LOG_BYTES);
      const read = readSync(fd, buffer, 0, MAX_LOG_BYTES, 0);
      closeSync(fd);
      writeFileSync(start, buffer.subarray(0, read));
    }
    truncateSync(path, 0);
  } catch {
    // The child exited and its files were cleaned up: nothing to bound.
  }
}

/** SIGTERM, then SIGKILL if it has not exited within 15 s (the API drains in-flight work first). */
async function stopChild(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}

/** Resident set size in bytes, from /proc (null where /proc is missing). */
export function rssBytes(pid: number): number | null {
  return statusBytes(pid, 'VmRSS');
}

/** The highest resident set size the process has had ("high water mark"), from /proc. */
export function peakRssBytes(pid: number): number | null {
  return statusBytes(pid, 'VmHWM');
}

function statusBytes(pid: number, field: string): number | null {
  try {
    const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : null;
  } catch {
    return null;
  }
}

/** User + system CPU seconds the process has used so far, from /proc (null where missing). */
export function cpuSeconds(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start at ")"; utime and stime are
    // fields 14 and 15, counted in clock ticks (100 per second on Linux).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}

/**
 * CPU seconds, summed over every core, that the whole machine spent busy so far (user, nice,
 * system, irq, softirq, steal from /proc/stat), or null where /proc is missing. Compared with
 * the CPU of the processes under test, it shows how much other work shared the machine.
 */
export function machineBusySeconds(): number | null {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
    const [, user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).map(Number);
    return ((user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0)) / 100;
  } catch {
    return null;
  }
}

/** CPU seconds used by this process and by its children that have exited (e.g. a finished wrk). */
export function selfAndChildrenCpuSeconds(): number | null {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime, stime, cutime, cstime: fields 14-17.
    return (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    return null;
  }
}

/** Samples a process's RSS every 200 ms and keeps the peak. */
export class RssPeak {
  private peak = 0;
  private readonly timer: NodeJS.Timeout;
  private readonly pid: number;

  constructor(pid: number) {
    this.pid = pid;
    this.sample();
    this.timer = setInterval(() => this.sample(), 200);
  }

  private sample(): void {
    this.peak = Math.max(this.peak, rssBytes(this.pid) ?? 0);
  }

  stop(): number | null {
    clearInterval(this.timer);
    this.sample();
    return this.peak === 0 ? null : this.peak;
  }
}

/**
 * Resolves once the process uses under 10% of a core over 200 ms (or after `limitMs`), so a
 * target still working off a queue from the previous run (a slow baseline, pending fsyncs)
 * does not eat into the next measurement.
 */
export async function waitIdle(pid: number, limitMs = 30_000): Promise<void> {
  const deadline = performance.now() + limitMs;
  let before = cpuSeconds(pid);
  while (before !== null && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    const after = cpuSeconds(pid);
    if (after === null || after - before < 0.02) return;
    before = after;
  }
}
