// A FileSystem for tests that fails on demand (full disk, I/O error, a partial write) and can
// "crash" at any call: it then freezes the directory as a killed process leaves it, and as a
// power cut would (unsynced bytes lost, renames and creations not yet fsynced undone).

import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { nodeFileSystem, type FileSystem, type LogHandle } from '../../src/store/files.ts';
import { errorWithCode } from './helpers.ts';

export type Operation = 'open' | 'create' | 'rename' | 'syncDirectory' | 'remove' | 'write' | 'sync' | 'truncate' | 'close';

export interface Call {
  operation: Operation;
  /** The file (for a handle: the path it was opened under), or the directory. */
  path: string;
}

export interface Fault {
  operation: Operation;
  /** Only calls on a path ending with this. */
  pathEndsWith?: string;
  error: NodeJS.ErrnoException;
  /** A write only: this many bytes reach the file before the error. */
  partialBytes?: number;
  /** Matching calls that fail before the fault wears off; default: until cleared. */
  times?: number;
}

export interface CrashImages {
  /** The directory exactly as the killed process left it (everything written is in the page cache). */
  processCrash: string;
  /** The directory after a power cut: only what was fsynced, in a directory fsynced after each change. */
  powerLoss: string;
}

interface PendingName {
  kind: 'create' | 'rename';
  from: string;
  to: string;
  /** For a rename: what `to` held durably before it was replaced, or null if it did not exist. */
  previous: Buffer | null;
}

/** Thrown from the crashing call and every call after it: the process is gone. */
export const CRASH_CODE = 'ESIMULATEDCRASH';

export class FaultyFileSystem implements FileSystem {
  readonly calls: Call[] = [];
  private faults: Fault[] = [];
  private crashPlan: { index: number; phase: 'before' | 'after'; onCrash: (images: CrashImages) => void } | null = null;
  private crashed = false;
  /** Bytes of each file known durable (fsynced), by current name. */
  private readonly durableLength = new Map<string, number>();
  private pendingNames: PendingName[] = [];
  private readonly handles = new Set<FaultyHandle>();
  private readonly imageDirs: string[] = [];
  private readonly inner: FileSystem;

  constructor(inner: FileSystem = nodeFileSystem) {
    this.inner = inner;
  }

  inject(fault: Fault): void {
    this.faults.push({ ...fault });
  }

  clearFaults(): void {
    this.faults = [];
  }

  /**
   * Crashes at the call with this index (0-based, counting from now on), before or after it
   * takes effect; `onCrash` receives the frozen directory images.
   */
  crashAtCall(index: number, phase: 'before' | 'after', onCrash: (images: CrashImages) => void): void {
    this.crashPlan = { index: this.calls.length + index, phase, onCrash };
  }

  /** Removes the crash images made so far. */
  cleanUp(): void {
    for (const dir of this.imageDirs) rmSync(dir, { recursive: true, force: true });
  }

  async open(path: string): Promise<LogHandle> {
    return this.run('open', path, async () => {
      if (!this.durableLength.has(path)) this.durableLength.set(path, statSync(path).size);
      return this.track(await this.inner.open(path), path);
    });
  }

  async create(path: string): Promise<LogHandle> {
    return this.run('create', path, async () => {
      const handle = await this.inner.create(path);
      this.durableLength.set(path, 0);
      this.pendingNames.push({ kind: 'create', from: path, to: path, previous: null });
      return this.track(handle, path);
    });
  }

  async rename(from: string, to: string): Promise<void> {
    return this.run('rename', to, async () => {
      const previous = existsSync(to) ? readFileSync(to).subarray(0, this.durableLength.get(to) ?? Infinity) : null;
      await this.inner.rename(from, to);
      this.pendingNames.push({ kind: 'rename', from, to, previous });
      this.durableLength.set(to, this.durableLength.get(from) ?? 0);
      this.durableLength.delete(from);
      for (const handle of this.handles) {
        if (handle.path === to) handle.path = null; // its file is unlinked now
        else if (handle.path === from) handle.path = to;
      }
    });
  }

  async syncDirectory(path: string): Promise<void> {
    return this.run('syncDirectory', path, async () => {
      await this.inner.syncDirectory(path);
      this.pendingNames = [];
    });
  }

  async remove(path: string): Promise<void> {
    return this.run('remove', path, async () => {
      await this.inner.remove(path);
      this.durableLength.delete(path);
    });
  }

  /** Every file operation passes here: faults, the crash plan, then the real call. */
  async run<T>(operation: Operation, path: string, perform: () => Promise<T>, partialWrite?: (bytes: number) => Promise<void>): Promise<T> {
    const index = this.calls.length;
    this.calls.push({ operation, path });
    if (this.crashed) throw errorWithCode(CRASH_CODE, 'the process has crashed');
    const plan = this.crashPlan;
    if (plan !== null && plan.index === index) {
      this.crashed = true;
      if (plan.phase === 'after') await perform();
      plan.onCrash(this.takeImages());
      throw errorWithCode(CRASH_CODE, `simulated crash ${plan.phase} ${operation} ${basename(path)}`);
    }
    const fault = this.faults.find((candidate) => candidate.operation === operation && (candidate.pathEndsWith === undefined || path.endsWith(candidate.pathEndsWith)));
    if (fault) {
      if (fault.times !== undefined) {
        fault.times -= 1;
        if (fault.times <= 0) this.faults.splice(this.faults.indexOf(fault), 1);
      }
      if (fault.partialBytes !== undefined && partialWrite) await partialWrite(fault.partialBytes);
      throw fault.error;
    }
    return perform();
  }

  private track(inner: LogHandle, path: string): LogHandle {
    const handle = new FaultyHandle(this, inner, path);
    this.handles.add(handle);
    return handle;
  }

  /** Called by a handle after a successful fsync. */
  markDurable(path: string): void {
    this.durableLength.set(path, statSync(path).size);
  }

  /** Called by a handle after a truncate: bytes past the cut no longer count, durable or not. */
  markTruncated(path: string, length: number): void {
    const durable = this.durableLength.get(path);
    if (durable !== undefined && durable > length) this.durableLength.set(path, length);
  }

  forget(handle: FaultyHandle): void {
    this.handles.delete(handle);
  }

  private takeImages(): CrashImages {
    const sourceDir = this.directory();
    const processCrash = this.newImageDir();
    const powerLoss = this.newImageDir();
    cpSync(sourceDir, processCrash, { recursive: true });
    cpSync(sourceDir, powerLoss, { recursive: true });
    // A power cut keeps a file's fsynced bytes only...
    for (const name of readdirSync(powerLoss)) {
      const durable = this.durableLength.get(join(sourceDir, name));
      const imagePath = join(powerLoss, name);
      if (durable !== undefined && statSync(imagePath).size > durable) truncateSync(imagePath, durable);
    }
    // ...and the directory as it was at its last fsync.
    for (const pending of [...this.pendingNames].reverse()) {
      const from = join(powerLoss, basename(pending.from));
      const to = join(powerLoss, basename(pending.to));
      if (pending.kind === 'create') {
        rmSync(from, { force: true });
        continue;
      }
      if (existsSync(to)) writeFileSync(from, readFileSync(to), { mode: 0o600 });
      if (pending.previous === null) rmSync(to, { force: true });
      else writeFileSync(to, pending.previous, { mode: 0o600 });
    }
    return { processCrash, powerLoss };
  }

  private directory(): string {
    const known = [...this.durableLength.keys(), ...this.calls.map((call) => call.path)];
    const file = known.find((path) => basename(path).startsWith('marketplace.log'));
    if (file === undefined) throw new Error('no data directory seen yet');
    return join(file, '..');
  }

  private newImageDir(): string {
    const dir = mkdtempSync(join(tmpdir(), 'mkt-crash-image-'));
    this.imageDirs.push(dir);
    return dir;
  }
}

class FaultyHandle implements LogHandle {
  /** null once the file was replaced by a rename (the handle writes to an unlinked file). */
  path: string | null;
  private readonly owner: FaultyFileSystem;
  private readonly inner: LogHandle;
  private readonly label: string;

  constructor(owner: FaultyFileSystem, inner: LogHandle, path: string) {
    this.owner = owner;
    this.inner = inner;
    this.path = path;
    this.label = path;
  }

  write(data: Buffer, position: number): Promise<void> {
    return this.owner.run(
      'write',
      this.label,
      () => this.inner.write(data, position),
      (bytes) => this.inner.write(data.subarray(0, Math.min(bytes, data.length)), position),
    );
  }

  sync(): Promise<void> {
    return this.owner.run('sync', this.label, async () => {
      await this.inner.sync();
      if (this.path !== null) this.owner.markDurable(this.path);
    });
  }

  truncate(length: number): Promise<void> {
    return this.owner.run('truncate', this.label, async () => {
      await this.inner.truncate(length);
      if (this.path !== null) this.owner.markTruncated(this.path, length);
    });
  }

  async close(): Promise<void> {
    try {
      await this.owner.run('close', this.label, async () => {});
    } finally {
      // Even a crashed process's descriptors close; closing changes nothing on disk.
      this.owner.forget(this);
      await this.inner.close().catch(() => {});
    }
  }
}
