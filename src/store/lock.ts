// One writer per data directory: a LOCK file holding the owner's pid. A lock left by a process
// that no longer runs (a crash, a SIGKILL) is taken over; a live owner keeps everyone else out.

import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export class DataDirLockedError extends Error {}

export function acquireDataDirLock(dataDir: string): () => void {
  const lockPath = join(dataDir, 'LOCK');
  try {
    writeFileSync(lockPath, `${process.pid}\n`, { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const ownerPid = Number.parseInt(readFileSync(lockPath, 'utf8'), 10);
    if (Number.isInteger(ownerPid) && ownerPid !== process.pid && isRunning(ownerPid)) {
      throw new DataDirLockedError(
        `Another server (pid ${ownerPid}) is already using the data directory ${dataDir}. ` +
          `Stop it first; if no server is running, delete ${lockPath}.`,
      );
    }
    writeFileSync(lockPath, `${process.pid}\n`, { mode: 0o600 });
  }
  return () => rmSync(lockPath, { force: true });
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
