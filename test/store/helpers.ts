// Shared pieces for the store tests: a fresh data directory per test, a store that collects its
// warnings, and small readers for the log file as it is on disk.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import type { FileSystem } from '../../src/store/files.ts';
import { LOG_FILE_NAME } from '../../src/store/format.ts';
import { Store, type CompactionHooks, type StoredRecord, type WriteOp } from '../../src/store/store.ts';

export interface Item extends StoredRecord {
  readonly name: string;
  readonly version: number;
}

/** A data directory removed after the test. */
export function freshDataDir(t: TestContext, label = 'store'): string {
  const dir = mkdtempSync(join(tmpdir(), `mkt-${label}-`));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export interface OpenedStore {
  store: Store;
  warnings: string[];
}

/** Opens a store whose warnings are kept for the test to read; closed after the test. */
export async function openStore(
  t: TestContext,
  dataDir: string,
  options: { fileSystem?: FileSystem; compactAtOps?: number; compactionHooks?: CompactionHooks } = {},
): Promise<OpenedStore> {
  const warnings: string[] = [];
  const store = await Store.open({ dataDir, warn: (message) => warnings.push(message), ...options });
  t.after(() => store.close().catch(() => {}));
  return { store, warnings };
}

export function put(collection: string, id: string, name: string, version = 1): WriteOp {
  return { op: 'put', collection, id, data: { id, name, version } as Item };
}

export function del(collection: string, id: string): WriteOp {
  return { op: 'del', collection, id };
}

export function logPath(dataDir: string): string {
  return join(dataDir, LOG_FILE_NAME);
}

export function logBytes(dataDir: string): Buffer {
  return readFileSync(logPath(dataDir));
}

/** The log's complete lines as text (a torn tail is left out). */
export function logLines(dataDir: string): string[] {
  const text = logBytes(dataDir).toString('utf8');
  return text.slice(0, text.lastIndexOf('\n') + 1).split('\n').slice(0, -1);
}

/** Every record of a collection as a plain sorted list, for deepEqual. */
export function contents(store: Store, collection: string): Item[] {
  return [...store.values<Item>(collection)].sort((left, right) => left.id.localeCompare(right.id));
}

export function errorWithCode(code: string, message = `${code}: simulated`): NodeJS.ErrnoException {
  const error = new Error(message) as NodeJS.ErrnoException;
  error.code = code;
  return error;
}

export interface CompactionHold {
  /** Hooks holding the compaction at `phase` (the first time it gets there). */
  hooks: CompactionHooks;
  /** Resolves once the compaction is held there. */
  reached: Promise<void>;
  /** Lets it go on. */
  release: () => void;
  /** True from the moment it is held until released. */
  held: () => boolean;
}

/** Holds a compaction at one of its phases until released, to act while it stands there. */
export function holdCompaction(phase: keyof CompactionHooks): CompactionHold {
  let release = () => {};
  let markReached = () => {};
  let holding = false;
  let used = false;
  const gate = new Promise<void>((resolve) => {
    release = () => {
      holding = false;
      resolve();
    };
  });
  const reached = new Promise<void>((resolve) => {
    markReached = resolve;
  });
  const hook = async () => {
    if (used) return;
    used = true;
    holding = true;
    markReached();
    await gate;
  };
  return { hooks: { [phase]: hook }, reached, release, held: () => holding };
}
