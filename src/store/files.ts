// The store's only door to the disk. Tests swap in a FileSystem whose calls fail on demand
// (full disk, I/O error) to prove that a failed write is never acknowledged.

import { constants, promises as fsp } from 'node:fs';

export interface LogHandle {
  /** Writes every byte of `data` at `position`. */
  write(data: Buffer, position: number): Promise<void>;
  sync(): Promise<void>;
  truncate(length: number): Promise<void>;
  close(): Promise<void>;
}

export interface FileSystem {
  /** Opens an existing file for positioned writes. */
  open(path: string): Promise<LogHandle>;
  /** Creates a new file (mode 0600), failing if it exists. */
  create(path: string): Promise<LogHandle>;
  rename(from: string, to: string): Promise<void>;
  /** fsyncs a directory so a rename or a new file in it survives a crash. */
  syncDirectory(path: string): Promise<void>;
  remove(path: string): Promise<void>;
}

class NodeLogHandle implements LogHandle {
  private readonly handle: fsp.FileHandle;

  constructor(handle: fsp.FileHandle) {
    this.handle = handle;
  }

  async write(data: Buffer, position: number): Promise<void> {
    let written = 0;
    while (written < data.length) {
      const { bytesWritten } = await this.handle.write(data, written, data.length - written, position + written);
      written += bytesWritten;
    }
  }

  sync(): Promise<void> {
    return this.handle.datasync();
  }

  truncate(length: number): Promise<void> {
    return this.handle.truncate(length);
  }

  close(): Promise<void> {
    return this.handle.close();
  }
}

export const nodeFileSystem: FileSystem = {
  open: async (path) => new NodeLogHandle(await fsp.open(path, constants.O_RDWR)),
  create: async (path) => new NodeLogHandle(await fsp.open(path, constants.O_RDWR | constants.O_CREAT | constants.O_EXCL, 0o600)),
  rename: (from, to) => fsp.rename(from, to),
  syncDirectory: async (path) => {
    const handle = await fsp.open(path, constants.O_RDONLY);
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  },
  remove: (path) => fsp.rm(path, { force: true }),
};
