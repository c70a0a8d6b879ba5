// One writer per data directory: a LOCK file naming its owner (pid and, on Linux, the process's
// start time). A lock left by a process that no longer runs (a crash, a SIGKILL) is taken over;
// a live owner, in another process or in this one, keeps everyone else out.

import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export class DataDirLockedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DataDirLockedError';
  }
}

export const LOCK_FILE_NAME = 'LOCK';

/** Lock files held by this process: a second open in the same process is refused too. */
const heldByThisProcess = new Set<string>();

/**
 * Takes the data directory's lock or throws DataDirLockedError; returns the release function.
 * @example
 * const release = acquireDataDirLock('./data');
 * try { ... } finally { release(); }
 */
export function acquireDataDirLock(dataDir: string): () => void {
  const lockPath = resolve(join(dataDir, LOCK_FILE_NAME));
  if (heldByThisProcess.has(lockPath)) {
    throw new DataDirLockedError(`The data directory ${dataDir} is already open in this process (pid ${process.pid}).`);
  }
  const identity = ownerIdentity(process.pid);
  try {
    writeFileSync(lockPath, identity, { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const owner = readOwner(lockPath);
    if (owner !== null && isLiveOtherProcess(owner)) {
      throw new DataDirLockedError(
        `Another process (pid ${owner.pid}) is already using the data directory ${dataDir}: one server per data directory. ` +
          `Stop it first; if no server is running there, delete ${lockPath}.`,
      );
    }
    // The owner is gone: remove its lock and race for a fresh one, so two processes taking
    // over the same stale lock at once cannot both win.
    rmSync(lockPath, { force: true });
    try {
      writeFileSync(lockPath, identity, { flag: 'wx', mode: 0o600 });
    } catch (retryError) {
      if ((retryError as NodeJS.ErrnoException).code !== 'EEXIST') throw retryError;
      throw new DataDirLockedError(`Another process took the lock of the data directory ${dataDir} at the same moment; try again.`);
    }
  }
  heldByThisProcess.add(lockPath);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    heldByThisProcess.delete(lockPath);
    try {
      if (readFileSync(lockPath, 'utf8') === identity) rmSync(lockPath, { force: true });
    } catch {
      // Already gone, or the disk is failing: a stale lock is taken over at the next start.
    }
  };
}

interface LockOwner {
  pid: number;
  /** Start time in clock ticks since boot (Linux), to tell a reused pid from the owner. */
  startTime: string | null;
}

function ownerIdentity(pid: number): string {
  const startTime = processStartTime(pid);
  return startTime === null ? `${pid}\n` : `${pid} ${startTime}\n`;
}

function readOwner(lockPath: string): LockOwner | null {
  let text: string;
  try {
    text = readFileSync(lockPath, 'utf8');
  } catch {
    return null;
  }
  const [pidText = '', startTime = null] = text.trim().split(/\s+/);
  const pid = Number.parseInt(pidText, 10);
  return Number.isInteger(pid) && pid > 0 ? { pid, startTime } : null;
}

function isLiveOtherProcess(owner: LockOwner): boolean {
  // Our own pid in a lock we do not hold is a previous run's (a container's server is often pid 1).
  if (owner.pid === process.pid) return false;
  if (!isRunning(owner.pid)) return false;
  if (owner.startTime === null) return true;
  const current = processStartTime(owner.pid);
  return current === null || current === owner.startTime;
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Field 22 of /proc/<pid>/stat; null where /proc is not available. */
function processStartTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces: count from after it.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[19] ?? null;
  } catch {
    return null;
  }
}
