// One writer per data directory: a LOCK file naming its owner (pid and, on Linux, the process's
// start time). A lock left by a process that no longer runs (a crash, a SIGKILL) is taken over;
// a live owner, in another process or in this one, keeps everyone else out.
//
// Every step is one atomic file operation, so servers starting at the same instant cannot both
// win: a LOCK is made by hard-linking a complete file into place (never seen half-written), and
// a stale LOCK is replaced only by the one process that created, with O_EXCL, the takeover file
// named after that LOCK's exact content; it checks the content again and renames its own file
// over it. A takeover file left by a process that died mid-takeover is itself taken over the
// same way (its name then also holds the dead taker's content), so no crash blocks a start.

import { createHash, randomBytes } from 'node:crypto';
import { linkSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
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
/** Rounds of "the LOCK changed under a takeover, look again" before giving up. */
const MAX_ATTEMPTS = 5;

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
  // A nonce makes each holder's content unique, so a takeover file names one stale LOCK only.
  const identity = `${ownerIdentity(process.pid)} ${randomBytes(8).toString('hex')}\n`;
  for (let attempt = 1; ; attempt += 1) {
    if (createWhole(lockPath, identity)) break;
    const stale = readText(lockPath);
    if (stale === null) continue; // released meanwhile: try to create it again
    const owner = parseOwner(stale);
    if (owner !== null && isLiveOtherProcess(owner)) {
      throw new DataDirLockedError(
        `Another process (pid ${owner.pid}) is already using the data directory ${dataDir}: one server per data directory. ` +
          `Stop it first; if no server is running there, delete ${lockPath}.`,
      );
    }
    if (takeOver(lockPath, stale, stale, identity, dataDir)) break;
    if (attempt >= MAX_ATTEMPTS) {
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

/**
 * Replaces the LOCK holding `stale` with our identity, if this process is the one that creates
 * the takeover file for `chain` (the stale content, plus that of dead takers before us).
 * Returns false when the LOCK changed meanwhile (look again); throws when a live process is
 * taking it over right now.
 */
function takeOver(lockPath: string, stale: string, chain: string, identity: string, dataDir: string): boolean {
  const guardPath = `${lockPath}.takeover-${createHash('sha256').update(chain).digest('hex').slice(0, 32)}`;
  if (!createWhole(guardPath, identity)) {
    const taker = readText(guardPath);
    if (taker === null) return false;
    const takerOwner = parseOwner(taker);
    if (takerOwner !== null && isLiveOtherProcess(takerOwner)) {
      throw new DataDirLockedError(`Another process is taking over the lock of the data directory ${dataDir} at this moment; try again.`);
    }
    // The taker died mid-takeover: take over its takeover.
    return takeOver(lockPath, stale, `${chain}\n${taker}`, identity, dataDir);
  }
  try {
    // Only a process holding this takeover file may replace this content, and we hold it.
    if (readText(lockPath) !== stale) return false;
    const candidate = `${lockPath}.candidate-${process.pid}-${randomBytes(6).toString('hex')}`;
    writeFileSync(candidate, identity, { flag: 'wx', mode: 0o600 });
    try {
      renameSync(candidate, lockPath);
    } catch (error) {
      rmSync(candidate, { force: true });
      throw error;
    }
    return true;
  } finally {
    rmSync(guardPath, { force: true });
  }
}

/** Creates `path` holding `content` whole, or returns false when it exists (a hard link is atomic). */
function createWhole(path: string, content: string): boolean {
  const candidate = `${path}.candidate-${process.pid}-${randomBytes(6).toString('hex')}`;
  writeFileSync(candidate, content, { flag: 'wx', mode: 0o600 });
  try {
    linkSync(candidate, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    rmSync(candidate, { force: true });
  }
}

function readText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

interface LockOwner {
  pid: number;
  /** Start time in clock ticks since boot (Linux), to tell a reused pid from the owner. */
  startTime: string | null;
}

/** "pid start-time" ("-" where the start time is unknown). */
function ownerIdentity(pid: number): string {
  return `${pid} ${processStartTime(pid) ?? '-'}`;
}

function parseOwner(text: string): LockOwner | null {
  const [pidText = '', startTime = '-'] = text.trim().split(/\s+/);
  const pid = Number.parseInt(pidText, 10);
  return Number.isInteger(pid) && pid > 0 ? { pid, startTime: startTime === '-' ? null : startTime } : null;
}

function isLiveOtherProcess(owner: LockOwner): boolean {
  // Our own pid in a lock we do not hold is a previous run's (a container's server is often pid 1).
  if (owner.pid === process.pid) return false;
  if (!isRunning(owner.pid)) return false;
  if (owner.startTime === null) return true;
  const current = processStartTime(owner.pid);
  return current === null || current === owner.startTime;
}

/** True when a process with this id exists (one of another user's answers EPERM). */
export function isRunning(pid: number): boolean {
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
