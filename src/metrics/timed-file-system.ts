// The store's file system with every fsync timed, for GET /metrics (the metrics module,
// src/modules/metrics/). Made before the store opens, so before any module is installed: the
// durations go to `observe`, which reports them once the module is there and drops them without it.

import type { FileSystem, LogHandle } from '../store/files.ts';

/** `inner` with every handle's fsync timed, each duration in seconds told to `observe`. */
export function timedFileSystem(inner: FileSystem, observe: (seconds: number) => void): FileSystem {
  const time = (handle: LogHandle): LogHandle => ({
    write: (data, position) => handle.write(data, position),
    truncate: (length) => handle.truncate(length),
    close: () => handle.close(),
    sync: async () => {
      const started = performance.now();
      await handle.sync();
      observe((performance.now() - started) / 1000);
    },
  });
  return {
    open: async (path) => time(await inner.open(path)),
    create: async (path) => time(await inner.create(path)),
    rename: (from, to) => inner.rename(from, to),
    syncDirectory: (path) => inner.syncDirectory(path),
    remove: (path) => inner.remove(path),
  };
}
